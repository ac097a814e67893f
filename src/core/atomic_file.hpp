#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace mainboard::core {

/// Writes `content` to a temporary file beside `path`, flushes it, and renames it over `path`,
/// so a crash never leaves half a file. Throws mainboard::Error naming the path on failure.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

/// Why write_file_atomic could not write `path`, checked before any work is done: "" when it
/// can; else "is a directory", "no such directory D", "D is not a directory" or "cannot write
/// in D (reason)". "-" (standard output) can always be written.
std::string why_unwritable(const std::filesystem::path& path);

/// Where output meant for `path` goes when `path` cannot be written at the end of a long run:
/// the same file name in $TMPDIR (or /tmp) with this process's id, "mainboard-profile.1234.json".
std::filesystem::path fallback_path(const std::filesystem::path& path);

}  // namespace mainboard::core
