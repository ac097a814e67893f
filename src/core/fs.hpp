#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/stat.h>

namespace mainboard::core {

/// Space on the filesystem holding a path (statvfs).
struct FsSpace {
  std::uint64_t size_bytes = 0;
  std::uint64_t free_bytes = 0;  ///< available to unprivileged users
};

/// Told of every access an Fs makes, with what it found. gather records a host by watching its
/// probes read it: what they read is what a replay needs, without a list kept by hand.
class FsObserver {
 public:
  virtual ~FsObserver() = default;
  virtual void file(std::string_view path, const std::optional<std::string>& text) = 0;
  virtual void directory(std::string_view path, const std::vector<std::string>& names) = 0;
  /// exists() and is_dir(): whether the path exists and whether it is a directory.
  virtual void kind(std::string_view path, bool exists, bool directory) = 0;
  virtual void link(std::string_view path, const std::optional<std::string>& target) = 0;
  virtual void space(std::string_view path, const std::optional<FsSpace>& space) = 0;
  virtual void writable(std::string_view path, bool writable) = 0;
};

class Fs;

/// Reads taken once, within a scope on one thread: a snapshot's probes read some files in
/// common (/proc/meminfo for memory and swap, /proc/self/mounts and /sys/block for the disks and
/// the scratch directories, /proc/cpuinfo for the CPU and its clocks). While a SharedReads over
/// an Fs lives, that Fs's read() and list() of a path it names (or of one under it: "/" names
/// all) give what the first one found, on this thread; everything else is read as always. What a
/// probe reads twice on purpose (a counter, to take a rate) is not named.
class SharedReads {
 public:
  SharedReads(const Fs& fs, std::vector<std::string> paths);
  ~SharedReads();
  SharedReads(const SharedReads&) = delete;
  SharedReads& operator=(const SharedReads&) = delete;

 private:
  friend class Fs;
  /// The scope, on this thread, that shares `path` read through `fs`, if any.
  static SharedReads* covering(const Fs& fs, std::string_view path);

  const Fs* fs_;
  std::vector<std::string> paths_;
  SharedReads* outer_;
  std::vector<std::pair<std::string, std::string>> files_;  ///< what was read, in full
  std::vector<std::pair<std::string, std::vector<std::string>>> directories_;
};

/// Every read of /proc, /sys, /etc and /dev goes through an Fs, which prefixes a root: "/" for
/// the live host, a fixture tree in tests, a gathered tree for a recorded host. Reads are bounded
/// (procfs files report size 0, so we read until EOF up to a limit) and text reads reject
/// embedded NULs. Nothing here throws: a file that cannot be read is an empty optional.
class Fs {
 public:
  static constexpr std::size_t kDefaultMaxBytes = 8u << 20;

  explicit Fs(std::filesystem::path root = "/", std::shared_ptr<FsObserver> observer = nullptr);
  ~Fs();
  Fs(const Fs&) = delete;
  Fs& operator=(const Fs&) = delete;

  const std::filesystem::path& root() const { return root_; }
  bool is_live() const { return live_; }

  /// Where an absolute system path lives on this machine's filesystem, for messages: reads go
  /// through open(), which keeps a recorded host's links inside it.
  std::filesystem::path host_path(std::string_view path) const;

  /// Opens a system path (O_CLOEXEC added): on the live host as it is; under another root every
  /// link is resolved inside the root (an absolute target starts again at the root, ".." stops
  /// there), so a recorded host's `proc/cpuinfo -> /etc/shadow` reads the recording's own
  /// /etc/shadow, never this machine's. Returns the fd (the caller closes it), or -1 with errno.
  int open(std::string_view path, int flags, bool follow_last = true) const;

  /// Whole file as text; empty when missing, unreadable, larger than `max_bytes`, or binary.
  std::optional<std::string> read(std::string_view path,
                                  std::size_t max_bytes = kDefaultMaxBytes) const;
  /// For a file read some other way (a device that must not be read to EOF, as /dev/kmsg):
  /// tells the observer what was read, so that a recorded host has it too.
  void observed(std::string_view path, const std::optional<std::string>& text) const;
  /// First line, trimmed of surrounding whitespace.
  std::optional<std::string> read_line(std::string_view path) const;
  std::optional<std::uint64_t> read_u64(std::string_view path) const;
  std::optional<std::int64_t> read_i64(std::string_view path) const;

  /// Names in a directory, sorted; empty when it cannot be listed.
  std::vector<std::string> list(std::string_view path) const;
  bool exists(std::string_view path) const;
  bool is_dir(std::string_view path) const;
  /// Target of a symbolic link, as stored.
  std::optional<std::string> readlink(std::string_view path) const;
  /// Last path component of a symlink's target (e.g. the driver name of device/driver).
  std::optional<std::string> link_name(std::string_view path) const;

  /// The same reads, of what does not change while the machine runs: where a device's links
  /// go, its driver, its identity strings, which entries a directory has. The first call reads
  /// (and tells the observer); the same call again answers from what this Fs kept, with no
  /// system call. A Machine keeps its Fs, so the devices its live probes read (NICs, InfiniBand
  /// ports, sensors, RAPL zones, memory controllers) are found at its first snapshot, as its GPUs
  /// are, and a later snapshot reads only their values. Never for a value that moves. A text read
  /// is bounded at 64 KiB.
  std::optional<std::string> read_fixed(std::string_view path) const;
  std::optional<std::string> read_line_fixed(std::string_view path) const;
  std::optional<std::uint64_t> read_u64_fixed(std::string_view path) const;
  std::optional<std::int64_t> read_i64_fixed(std::string_view path) const;
  std::vector<std::string> list_fixed(std::string_view path) const;
  bool is_dir_fixed(std::string_view path) const;
  std::optional<std::string> readlink_fixed(std::string_view path) const;
  std::optional<std::string> link_name_fixed(std::string_view path) const;

  /// statvfs of the filesystem holding `path`. For a recorded root, the figures recorded in
  /// its .mainboard/space.json; nothing otherwise.
  std::optional<FsSpace> space(std::string_view path) const;
  /// Whether this process could create files in `path`. Recorded roots answer from
  /// .mainboard/writable (one path per line).
  bool writable(std::string_view path) const;

 private:
  /// What the path names, links followed; nothing where it names nothing.
  std::optional<struct stat> stat_followed(std::string_view path) const;

  std::filesystem::path root_;
  bool live_ = true;
  int root_fd_ = -1;  ///< the root, opened once, when it is not "/"
  std::shared_ptr<FsObserver> observer_;
  struct Fixed;  ///< what the *_fixed reads kept
  std::unique_ptr<Fixed> fixed_;
};

}  // namespace mainboard::core
