#pragma once

// PyTorch profiler traces read as profiles: what `torch.profiler` (with Kineto, or a torch built
// without it) and `tensorboard_trace_handler` write, plain or gzipped.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <streambuf>
#include <string>
#include <string_view>

#include "mainboard/profile.hpp"

namespace mainboard::traces {

/// What Profile::load hands a file that is not a profile's JSON text: a gzipped profile (read
/// whole, as load reads a plain one) or a trace (read streaming). Empty when it is neither.
std::optional<Profile> load_trace(const std::filesystem::path& path, std::string_view head);

/// A trace's bytes (decompressed) read into a profile; `origin` names it in errors. Throws
/// mainboard::Error for anything that is not a trace or is broken.
Profile parse_trace(std::streambuf& bytes, const std::string& origin);

/// The default pattern a rank is read from a trace's file name by when the trace does not say
/// (`tensorboard_trace_handler(dir, worker_name="rank1")` writes `rank1.<ms>.pt.trace.json`).
inline constexpr const char* kRankFromName = "rank[-_]?([0-9]+)";

/// The rank `pattern` (an ECMAScript regular expression, case-insensitive) finds in `file_name`:
/// its first group, or its whole match, read as a number. Throws mainboard::Error for a pattern
/// that does not compile.
std::optional<std::int64_t> rank_from_name(const std::string& file_name,
                                           const std::string& pattern);

/// Gives a trace without a rank of its own (no `distributedInfo`) the rank its file name holds
/// by `pattern`, and says so in `unavailable`. A trace that names its rank, or a profile, is
/// left as it is. Returns whether a rank was given.
bool name_rank_from_file(Profile& profile, const std::filesystem::path& file,
                         const std::string& pattern);

}  // namespace mainboard::traces
