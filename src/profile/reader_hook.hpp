#pragma once

#include <filesystem>
#include <optional>
#include <string_view>
#include "mainboard/export.hpp"

#include "mainboard/profile.hpp"

namespace mainboard::detail {

/// Applied to every profile Profile::parse (and so load) reads. mainboard::mainboard installs the
/// naming of auto-instrumented functions here, so that names are resolved where a profile is
/// read; a program with only the span library reads the placeholders as they are.
using ProfileReader = void (*)(Profile& profile);
MAINBOARD_API void install_profile_reader(ProfileReader reader) noexcept;

}  // namespace mainboard::detail

namespace mainboard::detail {

/// Reads a file Profile::load is given that is not a profile's JSON text: a gzipped profile or a
/// PyTorch profiler trace (plain or gzipped). `head` holds the file's first bytes (up to 4 KiB).
/// Returns empty where the file is neither (load reads it as a profile). mainboard::mainboard
/// installs it (zlib and the trace reader live there).
using TraceLoader = std::optional<Profile> (*)(const std::filesystem::path& path,
                                               std::string_view head);
MAINBOARD_API void install_trace_loader(TraceLoader loader) noexcept;

/// Whether bytes that start a file are a trace's JSON (an array of events, or an object whose
/// first key is one of the Chrome trace format's or Kineto's), not a profile's.
MAINBOARD_API bool looks_like_trace(std::string_view head);

}  // namespace mainboard::detail
