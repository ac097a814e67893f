#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace mainboard::core {

/// How write_file_atomic waits; the defaults are the command's.
struct WriteOptions {
  /// How long a FIFO with no reader is waited for before it is an error (a reader that never
  /// comes must not hang the command). Ctrl-C ends the wait.
  std::chrono::milliseconds reader_wait{10'000};
};

/// Writes `content` to an output path a user named (-o and its kin). The path is opened first
/// (without following a link, without blocking) and what the descriptor is decides how:
///  - "-", /dev/stdout, /dev/stderr, /dev/fd/N: written to that descriptor as it is;
///  - a character device or a FIFO (/dev/null, a named pipe): written, never replaced. One owned
///    by another user in a sticky directory others can write (/tmp) is refused, whatever the
///    kernel's protected_fifos says: another user planted it. A FIFO nobody reads is an error
///    after `options.reader_wait`;
///  - a block device, a socket, a directory: refused;
///  - a regular file, or nothing: a temporary file beside it is written, flushed and renamed
///    over it, so a crash never leaves half a file and nothing is ever written into the file
///    that was there (it is replaced, and its mode kept);
///  - a link owned by this user or root: the same, at the file it leads to (the link stays),
///    followed a link at a time, each checked as it is opened; a path that goes through a link
///    another user owns is refused (another user could point it at /etc/passwd).
/// Throws mainboard::Error naming the path on failure.
void write_file_atomic(const std::filesystem::path& path, std::string_view content,
                       const WriteOptions& options = {});

/// Why write_file_atomic could not write `path`, checked before any work is done: "" when it
/// can; else "is a directory", "is a block device", "no such directory D", "cannot write in D
/// (reason)", …
std::string why_unwritable(const std::filesystem::path& path);

/// The regular file that writing `path` would replace (the link's target for a link), or nothing
/// (no file there yet, a device, a FIFO, standard output): what may be kept as `FILE.old`.
std::optional<std::filesystem::path> replaced_file(const std::filesystem::path& path);

/// A new, empty file for output meant for `path` that could not be written (a full disk,
/// /dev/full, a directory removed meanwhile): "NAME.Xq3Tz9.EXT" in $TMPDIR (or /tmp), its part
/// in the middle random, created with O_EXCL|O_NOFOLLOW and mode 0600, so that no other user can
/// have planted anything there nor read what is written (write_file_atomic keeps its mode).
/// Throws mainboard::Error when it cannot be made.
std::filesystem::path make_fallback_file(const std::filesystem::path& path);

/// Whether the output `output` and the input `input` are one file (the same device and inode),
/// whatever names or links lead to them. "-" and /dev/fd/N are the descriptors they name.
bool same_file(const std::filesystem::path& output, const std::filesystem::path& input);

}  // namespace mainboard::core
