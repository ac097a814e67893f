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
/// first key is one of the Chrome trace format's or Kineto's), not a profile's: a profile's keys
/// are written sorted ("activities" first), a trace's first key is its own.
inline bool looks_like_trace(std::string_view head) {
  std::size_t i = head.substr(0, 3) == "\xef\xbb\xbf" ? 3 : 0;  // a byte-order mark
  auto space = [&] {
    while (i < head.size() &&
           (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
      ++i;
  };
  space();
  if (i >= head.size()) return false;
  if (head[i] == '[') return true;  // a bare array of events (torch without Kineto, Chrome's)
  if (head[i] != '{') return false;
  ++i;
  space();
  for (std::string_view key : {"\"schemaVersion\"", "\"traceEvents\"", "\"deviceProperties\"",
                               "\"displayTimeUnit\"", "\"distributedInfo\"", "\"traceName\"",
                               "\"baseTimeNanoseconds\"", "\"otherData\"", "\"systemTraceEvents\""})
    if (head.substr(i, key.size()) == key) return true;
  return false;
}

}  // namespace mainboard::detail
