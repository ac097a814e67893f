#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace mainboard::core {

/// Writes `content` to an output path a user named (-o and its kin). What the path is decides how:
///  - "-", /dev/stdout, /dev/stderr, /dev/fd/N: written to that descriptor as it is;
///  - a character device or a FIFO (/dev/null, a named pipe): opened and written, never replaced;
///  - a block device or a socket: refused;
///  - a regular file, or nothing: written to a temporary file beside it, flushed and renamed over
///    it, so a crash never leaves half a file;
///  - a link owned by this user or root: the same, at the file it leads to (the link stays);
///    a path that goes through a link another user owns is refused (another user could point
///    it at /etc/passwd).
/// Throws mainboard::Error naming the path on failure.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

/// Why write_file_atomic could not write `path`, checked before any work is done: "" when it
/// can; else "is a directory", "is a block device", "no such directory D", "cannot write in D
/// (reason)", …
std::string why_unwritable(const std::filesystem::path& path);

/// The regular file that writing `path` would replace (the link's target for a link), or nothing
/// (no file there yet, a device, a FIFO, standard output): what may be kept as `FILE.old`.
std::optional<std::filesystem::path> replaced_file(const std::filesystem::path& path);

/// Where output meant for `path` goes when `path` cannot be written at the end of a long run:
/// the same file name in $TMPDIR (or /tmp) with this process's id, "mainboard-profile.1234.json".
std::filesystem::path fallback_path(const std::filesystem::path& path);

}  // namespace mainboard::core
