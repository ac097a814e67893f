#include "core/fs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "core/beneath.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"

namespace mainboard::core {

/// One map per kind of read, each path asked once. Lookups take the lock, reads do not: two
/// threads asking a new path at once both read it, and the first answer is kept.
struct Fs::Fixed {
  std::mutex mutex;
  std::map<std::string, std::optional<std::string>, std::less<>> reads, links;
  std::map<std::string, std::vector<std::string>, std::less<>> lists;
  std::map<std::string, bool, std::less<>> dirs;

  template <class Value, class Read>
  Value get(std::map<std::string, Value, std::less<>>& kept, std::string_view path, Read read) {
    {
      std::lock_guard lock(mutex);
      if (auto it = kept.find(path); it != kept.end()) return it->second;
    }
    Value value = read();
    std::lock_guard lock(mutex);
    return kept.emplace(std::string(path), std::move(value)).first->second;
  }
};

Fs::Fs(std::filesystem::path root, std::shared_ptr<FsObserver> observer)
    : root_(std::move(root)), observer_(std::move(observer)), fixed_(std::make_unique<Fixed>()) {
  if (root_.empty()) root_ = "/";
  std::error_code ec;
  auto canonical = std::filesystem::weakly_canonical(root_, ec);
  if (!ec) root_ = canonical;
  live_ = root_ == "/";
  if (!live_) root_fd_ = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
}

Fs::~Fs() {
  if (root_fd_ >= 0) ::close(root_fd_);
}

int Fs::open(std::string_view path, int flags, bool follow_last) const {
  if (live_) {
    std::string p(path);
    return ::open(p.c_str(), flags | O_CLOEXEC | O_NOCTTY | (follow_last ? 0 : O_NOFOLLOW));
  }
  if (root_fd_ < 0) {
    errno = ENOENT;
    return -1;
  }
  // A recorded host is data from elsewhere: its links resolve inside it, never out of it.
  return open_in_root(root_fd_, path, flags, follow_last).release();
}

std::filesystem::path Fs::host_path(std::string_view path) const {
  if (live_) return std::filesystem::path(path);
  while (!path.empty() && path.front() == '/')
    path.remove_prefix(1);
  return root_ / std::filesystem::path(path);
}

namespace {

/// A sysfs attribute's first read gives all of it when it gives less than a page: show() writes
/// one page at most and a binary attribute is read a page at a time. So on the live host a
/// short first read of /sys ends the file, with no second read to see the end: one system call
/// of four for each of the files a snapshot reads there.
constexpr std::size_t kSysfsPage = 4096;

/// Whether a live path is a sysfs attribute. cgroup2, debugfs, tracefs, securityfs and configfs
/// are mounted below /sys/fs and /sys/kernel, and their seq_file reads may stop short of a page
/// before the end: the kernel's own attributes in /sys/kernel (huge pages) lose the shortcut
/// with them.
bool is_sysfs_attribute(std::string_view path) {
  return starts_with(path, "/sys/") && !starts_with(path, "/sys/fs/") &&
         !starts_with(path, "/sys/kernel/");
}

/// Reads and closes `fd`, opened with O_NONBLOCK. `sysfs`: the file is a live sysfs attribute.
std::optional<std::string> read_fd(int fd, std::size_t max_bytes, bool sysfs = false) {
  if (fd < 0) return std::nullopt;
  // Only regular files (procfs and sysfs attributes are regular). Opened without blocking, what
  // else could be there ends the read by itself: a FIFO with no writer reads as empty, one with
  // a writer or a character device runs out (EAGAIN) or past max_bytes, a directory fails. So
  // the type is asked only of what read as empty, which is where a FIFO and an empty file look
  // alike: one system call less for each of the hundred small files a snapshot reads.
  std::string data;
  char buf[8192];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    if (data.size() + static_cast<std::size_t>(n) > max_bytes) {
      ::close(fd);
      return std::nullopt;  // truncated: a partial file would be parsed as if it were whole
    }
    data.append(buf, static_cast<std::size_t>(n));
    if (sysfs && data.size() < kSysfsPage) break;
  }
  struct stat st {};
  if (data.empty() && (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    ::close(fd);
    return std::nullopt;
  }
  ::close(fd);
  // Device-tree strings end in NUL; anything with a NUL inside is binary, not text.
  while (!data.empty() && data.back() == '\0')
    data.pop_back();
  if (data.find('\0') != std::string::npos) return std::nullopt;
  return data;
}

}  // namespace

void Fs::observed(std::string_view path, const std::optional<std::string>& text) const {
  if (observer_) observer_->file(path, text);
}

namespace {
thread_local SharedReads* t_shared = nullptr;
}  // namespace

SharedReads::SharedReads(const Fs& fs, std::vector<std::string> paths)
    : fs_(&fs), paths_(std::move(paths)), outer_(t_shared) {
  t_shared = this;
}

SharedReads::~SharedReads() {
  t_shared = outer_;
}

SharedReads* SharedReads::covering(const Fs& fs, std::string_view path) {
  for (auto* s = t_shared; s; s = s->outer_) {
    if (s->fs_ != &fs) continue;
    for (const auto& p : s->paths_)
      if (starts_with(path, p) &&
          (path.size() == p.size() || p.back() == '/' || path[p.size()] == '/'))
        return s;
  }
  return nullptr;
}

std::optional<std::string> Fs::read(std::string_view path, std::size_t max_bytes) const {
  auto* shared = SharedReads::covering(*this, path);
  if (shared)
    for (const auto& [name, text] : shared->files_)
      if (name == path) {
        if (text.size() > max_bytes) return std::nullopt;
        return text;
      }
  auto text =
      read_fd(open(path, O_RDONLY | O_NONBLOCK), max_bytes, live_ && is_sysfs_attribute(path));
  if (observer_) observer_->file(path, text);
  // Only what was read: a file missing or too long for this read is asked again.
  if (shared && text) shared->files_.emplace_back(path, *text);
  return text;
}

namespace {
std::optional<std::string> first_line(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  std::string_view v = *text;
  return std::string(trim(v.substr(0, v.find('\n'))));
}
}  // namespace

std::optional<std::string> Fs::read_line(std::string_view path) const {
  return first_line(read(path, 64u << 10));
}

std::optional<std::uint64_t> Fs::read_u64(std::string_view path) const {
  auto line = read_line(path);
  if (!line) return std::nullopt;
  return parse_u64(*line);
}

std::optional<std::int64_t> Fs::read_i64(std::string_view path) const {
  auto line = read_line(path);
  if (!line) return std::nullopt;
  return parse_i64(*line);
}

std::vector<std::string> Fs::list(std::string_view path) const {
  auto* shared = SharedReads::covering(*this, path);
  if (shared)
    for (const auto& [name, names] : shared->directories_)
      if (name == path) return names;
  std::vector<std::string> out;
  int fd = open(path, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return out;
  // The entries as the kernel gives them (getdents64): opendir would first ask the directory's
  // type and flags again, three system calls for each of the dozen directories a snapshot lists.
  // Bounded: a directory with more entries than any real /sys class is not one we trust.
  constexpr std::size_t kMaxEntries = 1u << 16;
  alignas(struct dirent64) char buf[16384];
  ssize_t n = 0;
  while (out.size() < kMaxEntries && (n = ::getdents64(fd, buf, sizeof buf)) > 0) {
    for (ssize_t at = 0; at < n && out.size() < kMaxEntries;) {
      const auto* e = reinterpret_cast<const struct dirent64*>(buf + at);
      if (e->d_reclen == 0) break;
      at += e->d_reclen;
      std::string_view name = e->d_name;
      if (name != "." && name != "..") out.emplace_back(name);
    }
  }
  ::close(fd);
  std::sort(out.begin(), out.end());
  if (observer_) observer_->directory(path, out);
  if (shared) shared->directories_.emplace_back(path, out);
  return out;
}

namespace {

/// What the path names (links followed), or nothing.
std::optional<struct stat> stat_fd(int fd) {
  if (fd < 0) return std::nullopt;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0;
  ::close(fd);
  if (!ok) return std::nullopt;
  return st;
}

}  // namespace

std::optional<struct stat> Fs::stat_followed(std::string_view path) const {
  if (live_) {  // one call, where the open, fstat and close below take three
    struct stat st {};
    if (::stat(std::string(path).c_str(), &st) != 0) return std::nullopt;
    return st;
  }
  return stat_fd(open(path, O_PATH));
}

bool Fs::exists(std::string_view path) const {
  auto st = stat_followed(path);
  bool found = st.has_value();
  if (observer_) observer_->kind(path, found, found && S_ISDIR(st->st_mode));
  return found;
}

bool Fs::is_dir(std::string_view path) const {
  auto st = stat_followed(path);
  bool found = st.has_value();
  bool dir = found && S_ISDIR(st->st_mode);
  if (observer_) observer_->kind(path, found, dir);
  return dir;
}

std::optional<std::string> Fs::readlink(std::string_view path) const {
  char buf[4096];
  ssize_t n = -1;
  if (live_) {  // one call, where the open, readlinkat and close below take three
    n = ::readlink(std::string(path).c_str(), buf, sizeof buf);
  } else if (int fd = open(path, O_PATH, /*follow_last=*/false); fd >= 0) {
    // readlinkat on the link itself, opened without following it ("" names the fd).
    n = ::readlinkat(fd, "", buf, sizeof buf);
    ::close(fd);
  }
  std::optional<std::string> out;
  if (n >= 0 && static_cast<std::size_t>(n) < sizeof buf)
    out = std::string(buf, static_cast<std::size_t>(n));
  if (observer_) observer_->link(path, out);
  return out;
}

namespace {
std::optional<std::string> last_component(const std::optional<std::string>& target) {
  if (!target) return std::nullopt;
  auto name = std::filesystem::path(*target).filename().string();
  if (name.empty()) return std::nullopt;
  return name;
}
}  // namespace

std::optional<std::string> Fs::link_name(std::string_view path) const {
  return last_component(readlink(path));
}

std::optional<std::string> Fs::read_fixed(std::string_view path) const {
  return fixed_->get(fixed_->reads, path, [&] { return read(path, 64u << 10); });
}

std::optional<std::string> Fs::read_line_fixed(std::string_view path) const {
  return first_line(read_fixed(path));
}

std::optional<std::uint64_t> Fs::read_u64_fixed(std::string_view path) const {
  auto line = read_line_fixed(path);
  return line ? parse_u64(*line) : std::nullopt;
}

std::optional<std::int64_t> Fs::read_i64_fixed(std::string_view path) const {
  auto line = read_line_fixed(path);
  return line ? parse_i64(*line) : std::nullopt;
}

std::vector<std::string> Fs::list_fixed(std::string_view path) const {
  return fixed_->get(fixed_->lists, path, [&] { return list(path); });
}

bool Fs::is_dir_fixed(std::string_view path) const {
  return fixed_->get(fixed_->dirs, path, [&] { return is_dir(path); });
}

std::optional<std::string> Fs::readlink_fixed(std::string_view path) const {
  return fixed_->get(fixed_->links, path, [&] { return readlink(path); });
}

std::optional<std::string> Fs::link_name_fixed(std::string_view path) const {
  return last_component(readlink_fixed(path));
}

namespace {

/// The recorded statvfs figures of a gathered host, keyed by mount point (read without the
/// observer: the record is not part of the host it describes).
std::optional<FsSpace> recorded_space(int record_fd, std::string_view path) {
  auto text = read_fd(record_fd, 8u << 20);
  if (!text) return std::nullopt;
  auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  std::string best;
  const nlohmann::json* found = nullptr;
  for (auto& [mount, value] : j.items()) {
    bool prefix = path == mount || (starts_with(path, mount) &&
                                    (mount == "/" || path.substr(mount.size(), 1) == "/"));
    if (prefix && mount.size() >= best.size() && value.is_object()) {
      best = mount;
      found = &value;
    }
  }
  if (!found) return std::nullopt;
  auto size = found->find("size_bytes");
  auto free = found->find("free_bytes");
  if (size == found->end() || free == found->end() || !size->is_number_unsigned() ||
      !free->is_number_unsigned())
    return std::nullopt;
  return FsSpace{size->get<std::uint64_t>(), free->get<std::uint64_t>()};
}

std::optional<FsSpace> live_space(std::string_view path) {
  struct statvfs sv {};
  std::string p(path);
  if (::statvfs(p.c_str(), &sv) != 0) return std::nullopt;
  auto size = checked_mul(sv.f_blocks, sv.f_frsize);
  auto free = checked_mul(sv.f_bavail, sv.f_frsize);
  if (!size || !free) return std::nullopt;
  return FsSpace{*size, *free};
}

bool recorded_writable(int record_fd, std::string_view path) {
  auto text = read_fd(record_fd, 1u << 20);
  if (!text) return false;
  for (auto line : split_lines(*text))
    if (trim(line) == path) return true;
  return false;
}

bool live_writable(std::string_view path) {
  std::string p(path);
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  return ::access(p.c_str(), W_OK | X_OK) == 0;
}

}  // namespace

std::optional<FsSpace> Fs::space(std::string_view path) const {
  auto s = live_ ? live_space(path)
                 : recorded_space(open(paths::kRecordSpace, O_RDONLY | O_NONBLOCK), path);
  if (observer_) observer_->space(path, s);
  return s;
}

bool Fs::writable(std::string_view path) const {
  bool w = live_ ? live_writable(path)
                 : recorded_writable(open(paths::kRecordWritable, O_RDONLY | O_NONBLOCK), path);
  if (observer_) observer_->writable(path, w);
  return w;
}

}  // namespace mainboard::core
