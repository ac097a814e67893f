#include "core/beneath.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <vector>

#include "mainboard/error.hpp"

namespace mainboard::core {

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

/// The names of a path, without empty ones and ".": "/a//b/./c/" → a, b, c.
std::vector<std::string> components(std::string_view path) {
  std::vector<std::string> out;
  while (!path.empty()) {
    auto slash = path.find('/');
    auto name = path.substr(0, slash);
    if (!name.empty() && name != ".") out.emplace_back(name);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

std::optional<std::string> read_link_at(int dir, const std::string& name) {
  std::string buf(256, '\0');
  while (true) {
    ssize_t n = ::readlinkat(dir, name.c_str(), buf.data(), buf.size());
    if (n < 0) return std::nullopt;
    if (static_cast<std::size_t>(n) < buf.size()) {
      buf.resize(static_cast<std::size_t>(n));
      return buf;
    }
    if (buf.size() >= (1u << 16)) {
      errno = ENAMETOOLONG;
      return std::nullopt;
    }
    buf.resize(buf.size() * 2);
  }
}

constexpr int kMaxLinks = 40;  // the kernel's own limit on links in one lookup

}  // namespace

UniqueFd open_in_root(int root_fd, std::string_view path, int flags, bool follow_last) {
  std::deque<std::string> todo;
  for (auto& name : components(path))
    todo.push_back(std::move(name));
  std::vector<UniqueFd> walked;  // the directories below the root, outermost first
  auto here = [&] { return walked.empty() ? root_fd : walked.back().get(); };
  int links = 0;
  while (!todo.empty()) {
    std::string name = std::move(todo.front());
    todo.pop_front();
    if (name == "..") {  // at the root, ".." is the root, as for "/.."
      if (!walked.empty()) walked.pop_back();
      continue;
    }
    bool last = todo.empty();
    struct stat st {};
    if (::fstatat(here(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return {};
    if (S_ISLNK(st.st_mode) && (!last || follow_last)) {
      if (++links > kMaxLinks) {
        errno = ELOOP;
        return {};
      }
      auto target = read_link_at(here(), name);
      if (!target) return {};
      if (!target->empty() && target->front() == '/') walked.clear();
      auto parts = components(*target);
      todo.insert(todo.begin(), parts.begin(), parts.end());
      continue;
    }
    if (last) {
      // O_NOFOLLOW: a link swapped in since fstatat fails (ELOOP) instead of being followed.
      return UniqueFd(::openat(here(), name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
    }
    if (!S_ISDIR(st.st_mode)) {
      errno = ENOTDIR;
      return {};
    }
    UniqueFd dir(::openat(here(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir) return {};
    walked.push_back(std::move(dir));
  }
  // The path named a directory already walked (the root, or one reached through "..").
  return UniqueFd(::openat(here(), ".", flags | O_CLOEXEC | O_NOCTTY));
}

namespace {

std::optional<std::filesystem::path> foreign_link_in(const std::filesystem::path& path, int depth) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec).lexically_normal();
  if (ec) return std::nullopt;
  fs::path walked("/");
  uid_t me = ::geteuid();
  for (const auto& part : abs.relative_path()) {
    walked = (walked / part).lexically_normal();
    struct stat st {};
    if (::lstat(walked.c_str(), &st) != 0) return std::nullopt;  // the rest is yet to be made
    if (!S_ISLNK(st.st_mode)) continue;
    if (st.st_uid != 0 && st.st_uid != me) return walked;
    if (depth >= kMaxLinks) return std::nullopt;  // the write itself will meet ELOOP
    // The path goes on from where the link leads: check the links on that way too.
    auto target = fs::read_symlink(walked, ec);
    if (ec) return std::nullopt;
    fs::path next = target.is_absolute() ? target : walked.parent_path() / target;
    if (auto found = foreign_link_in(next, depth + 1)) return found;
    walked = fs::canonical(walked, ec);
    if (ec) return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::filesystem::path> foreign_link_in(const std::filesystem::path& path) {
  return foreign_link_in(path, 0);
}

TreeWriter::TreeWriter(const std::filesystem::path& dir, bool allow_link) : dir_(dir) {
  namespace fs = std::filesystem;
  if (auto link = foreign_link_in(dir)) {
    struct stat st {};
    ::lstat(link->c_str(), &st);
    throw Error("not writing into " + dir.string() + ": its path goes through " + link->string() +
                ", a link owned by another user (uid " + std::to_string(st.st_uid) + ")");
  }
  struct stat st {};
  if (!allow_link && ::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    throw Error("not writing into " + dir.string() + ": it is a link");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("cannot create " + dir.string() + ": " + ec.message());
  fd_ = UniqueFd(
      ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (allow_link ? 0 : O_NOFOLLOW)));
  if (!fd_) throw Error("cannot open " + dir.string() + ": " + std::strerror(errno));
}

bool TreeWriter::empty() const {
  int fd = ::openat(fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return false;
  }
  bool none = true;
  while (auto* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      none = false;
      break;
    }
  }
  ::closedir(d);
  return none;
}

void TreeWriter::fail(std::string_view rel, const std::string& why) const {
  throw Error("cannot write " + (dir_ / std::filesystem::path(rel).relative_path()).string() +
              ": " + why);
}

UniqueFd TreeWriter::make_dirs(std::string_view rel) const {
  UniqueFd here(::openat(fd_.get(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  std::string walked;
  for (const auto& name : components(rel)) {
    walked += "/" + name;
    if (name == "..") fail(rel, "a path that climbs out of the tree");
    if (::mkdirat(here.get(), name.c_str(), 0777) != 0 && errno != EEXIST)
      fail(rel, "mkdir " + walked + ": " + std::strerror(errno));
    UniqueFd next(
        ::openat(here.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) {
      int e = errno;
      struct stat st {};
      if (::fstatat(here.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        fail(rel, walked + " is a link (links in the tree are not followed)");
      fail(rel, walked + ": " + std::strerror(e));
    }
    here = std::move(next);
  }
  return here;
}

std::pair<UniqueFd, std::string> TreeWriter::parent_of(std::string_view rel) const {
  auto names = components(rel);
  if (names.empty() || names.back() == "..") fail(rel, "not a file name");
  std::string name = names.back();
  names.pop_back();
  std::string parent;
  for (const auto& n : names)
    parent += "/" + n;
  return {make_dirs(parent), name};
}

namespace {

/// A name beside `name` that nothing has: created by `make` (which returns false on EEXIST).
template <typename Make>
std::string create_beside(const std::string& name, Make make) {
  static unsigned counter = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string tmp = "." + name + ".mb" + std::to_string(::getpid()) + "." +
                      std::to_string(__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
    if (make(tmp)) return tmp;
    if (errno != EEXIST) return "";
  }
  return "";
}

}  // namespace

void TreeWriter::write(std::string_view rel, std::string_view content) const {
  // (Not a structured binding: clang 14 does not let a lambda capture one.)
  auto parent = parent_of(rel);
  const UniqueFd& dir = parent.first;
  const std::string& name = parent.second;
  int fd = -1;
  std::string tmp = create_beside(name, [&](const std::string& t) {
    fd = ::openat(dir.get(), t.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    return fd >= 0;
  });
  if (tmp.empty()) fail(rel, std::strerror(errno));
  UniqueFd file(fd);
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(file.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::unlinkat(dir.get(), tmp.c_str(), 0);
      fail(rel, std::strerror(e));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(file.release()) != 0 ||
      ::renameat(dir.get(), tmp.c_str(), dir.get(), name.c_str()) != 0) {
    int e = errno;
    ::unlinkat(dir.get(), tmp.c_str(), 0);
    fail(rel, std::strerror(e));
  }
}

void TreeWriter::symlink(std::string_view rel, const std::string& target) const {
  // (Not a structured binding: clang 14 does not let a lambda capture one.)
  auto parent = parent_of(rel);
  const UniqueFd& dir = parent.first;
  const std::string& name = parent.second;
  std::string tmp = create_beside(name, [&](const std::string& t) {
    return ::symlinkat(target.c_str(), dir.get(), t.c_str()) == 0;
  });
  if (tmp.empty()) fail(rel, std::strerror(errno));
  if (::renameat(dir.get(), tmp.c_str(), dir.get(), name.c_str()) != 0) {
    int e = errno;
    ::unlinkat(dir.get(), tmp.c_str(), 0);
    fail(rel, std::strerror(e));
  }
}

bool TreeWriter::touch(std::string_view rel) const {
  // (Not a structured binding: clang 14 does not let a lambda capture one.)
  auto parent = parent_of(rel);
  const UniqueFd& dir = parent.first;
  const std::string& name = parent.second;
  int fd =
      ::openat(dir.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    fail(rel, std::strerror(errno));
  }
  ::close(fd);
  return true;
}

}  // namespace mainboard::core
