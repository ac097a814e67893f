#pragma once

// Paths that come from elsewhere: a recorded host read as a sysroot, a directory other users can
// write (fleet gather's shared DIR). Reads resolve every link as if the root were "/", so nothing
// outside it is reached; writes follow no link at all, so a planted link redirects nothing.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace mainboard::core {

/// A file descriptor closed when it goes out of scope.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

/// Opens `path` (absolute or relative, it does not matter) beneath the directory `root_fd` with
/// `flags` (O_CLOEXEC and O_NOCTTY are added). Every link on the way, the last one too unless
/// `follow_last` is false, is resolved as if `root_fd` were "/": an absolute target starts again
/// at the root, ".." never climbs above it — what openat2's RESOLVE_IN_ROOT does, done here
/// component by component so that it works on any kernel and under an emulator. Returns the fd,
/// or an empty one with errno set (ELOOP after 40 links).
UniqueFd open_in_root(int root_fd, std::string_view path, int flags, bool follow_last = true);

/// The first component of `path` (made absolute) that is a symbolic link owned by neither root
/// nor this process's user, or nothing. Such a link is one another user could point anywhere:
/// a directory reached through it is not one to write a tree into.
std::optional<std::filesystem::path> foreign_link_in(const std::filesystem::path& path);

/// Writes a tree into a directory without following any link under it: every component is
/// opened with O_NOFOLLOW from its parent's fd, files are created beside their name and renamed
/// into place (a link already there is replaced, never written through). Errors throw
/// mainboard::Error naming the path and what was in the way.
class TreeWriter {
 public:
  /// Opens `dir` (creating it, and its parents, when missing). Refuses a `dir` whose path goes
  /// through a link another user owns (foreign_link_in), and a `dir` that is itself a link when
  /// `allow_link` is false.
  explicit TreeWriter(const std::filesystem::path& dir, bool allow_link = true);

  const std::filesystem::path& dir() const { return dir_; }
  int fd() const { return fd_.get(); }
  /// Whether the directory has no entries.
  bool empty() const;

  /// Creates `rel`'s directories (not following links); returns the fd of the last one.
  UniqueFd make_dirs(std::string_view rel) const;
  /// `content` as the file `rel`, replacing whatever non-directory is there.
  void write(std::string_view rel, std::string_view content) const;
  /// A symbolic link `rel` → `target`, replacing whatever non-directory is there.
  void symlink(std::string_view rel, const std::string& target) const;
  /// An empty file `rel` when nothing is there; false when something was.
  bool touch(std::string_view rel) const;

 private:
  /// The directory holding `rel`'s last component (created), and that component.
  std::pair<UniqueFd, std::string> parent_of(std::string_view rel) const;
  [[noreturn]] void fail(std::string_view rel, const std::string& why) const;

  std::filesystem::path dir_;
  UniqueFd fd_;
};

}  // namespace mainboard::core
