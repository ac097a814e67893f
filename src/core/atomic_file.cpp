#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>

#include "core/beneath.hpp"
#include "mainboard/error.hpp"

namespace mainboard::core {

namespace {

namespace fs = std::filesystem;

constexpr int kMaxLinkHops = 40;

/// The descriptor a path names by convention ("-", /dev/stdout, /dev/fd/3), or -1. Written to
/// directly: opening /dev/stdout again would truncate what a shell appends to (>>), and renaming
/// over it would replace the link in /dev.
int standard_descriptor(const fs::path& path) {
  const std::string& p = path.native();
  if (p == "-" || p == "/dev/stdout") return STDOUT_FILENO;
  if (p == "/dev/stderr") return STDERR_FILENO;
  for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (p.size() > prefix.size() && p.compare(0, prefix.size(), prefix) == 0) {
      int fd = 0;
      for (char c : std::string_view(p).substr(prefix.size())) {
        if (c < '0' || c > '9' || fd > 1000000) return -1;
        fd = fd * 10 + (c - '0');
      }
      return fd;
    }
  }
  return -1;
}

/// What writing `path` means, found by opening it (O_PATH, no link followed) before anything is
/// written.
struct Target {
  enum Kind { descriptor, stream, replace, refused } kind = replace;
  int fd = -1;          ///< descriptor
  fs::path where;       ///< stream: what to open; replace: the name to put the file at
  bool exists = false;  ///< something is at `where` (then `st` is what)
  struct stat st {};    ///< what was at `where` when it was opened
  std::string why;      ///< refused: the reason
};

std::string uid_text(const fs::path& p) {
  struct stat st {};
  ::lstat(p.c_str(), &st);
  return std::to_string(st.st_uid);
}

bool foreign(uid_t uid) {
  return uid != 0 && uid != ::geteuid();
}

/// The kernel's protected_fifos (and protected_regular's) rule, applied whatever the sysctl
/// says: a FIFO or device owned by someone else than the writer and the directory's owner, in a
/// sticky directory others can write, was planted there by another user.
std::string planted(const fs::path& where, const struct stat& st) {
  if (st.st_uid == ::geteuid()) return "";
  struct stat dir {};
  fs::path parent = where.has_parent_path() ? where.parent_path() : fs::path(".");
  if (::stat(parent.c_str(), &dir) != 0) return "";
  if (!(dir.st_mode & S_ISVTX) || !(dir.st_mode & (S_IWOTH | S_IWGRP))) return "";
  if (st.st_uid == dir.st_uid) return "";
  return std::string("is a ") + (S_ISFIFO(st.st_mode) ? "FIFO" : "device node") +
         " owned by another user (uid " + std::to_string(st.st_uid) + ") in " + parent.string() +
         ", a sticky directory others can write; not opened (the kernel's protected_fifos rule)";
}

Target target_of(const fs::path& path) {
  Target t;
  if (path.native().find('\0') != std::string::npos) {
    t.kind = Target::refused;
    t.why = "holds a NUL byte (no file name does)";
    return t;
  }
  if (int fd = standard_descriptor(path); fd >= 0) {
    t.kind = Target::descriptor;
    t.fd = fd;
    return t;
  }
  t.where = path;
  for (int hops = 0;; ++hops) {
    // The directories on the way: none may be another user's link.
    if (auto link = foreign_link_in(t.where.has_parent_path() ? t.where.parent_path() : ".")) {
      t.kind = Target::refused;
      t.why = "goes through " + link->string() + ", a link owned by another user (uid " +
              uid_text(*link) + "); not followed";
      return t;
    }
    // The name itself, opened as it is: what it is then is what is written (or not).
    UniqueFd at(::open(t.where.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!at) {
      if (errno == ENOENT) return t;  // nothing there yet: created (why_unwritable checks the dir)
      t.kind = Target::refused;
      t.why = std::string("cannot be opened (") + std::strerror(errno) + ")";
      return t;
    }
    if (::fstat(at.get(), &t.st) != 0) {
      t.kind = Target::refused;
      t.why = std::string("cannot be read (") + std::strerror(errno) + ")";
      return t;
    }
    if (!S_ISLNK(t.st.st_mode)) break;
    // A link: followed only when its owner (checked on the link opened, not on its name) is
    // this user or root, and then from what it says, read from that same link.
    if (foreign(t.st.st_uid)) {
      t.kind = Target::refused;
      t.why = (hops ? "leads to " + t.where.string() + ", " : std::string()) +
              "a link owned by another user (uid " + std::to_string(t.st.st_uid) +
              "); not followed";
      return t;
    }
    if (hops >= kMaxLinkHops) {
      t.kind = Target::refused;
      t.why = "goes through more than 40 links";
      return t;
    }
    char buf[PATH_MAX];
    ssize_t n = ::readlinkat(at.get(), "", buf, sizeof buf);
    if (n < 0 || static_cast<std::size_t>(n) >= sizeof buf) {
      t.kind = Target::refused;
      t.why = std::string("is a link that cannot be read (") + std::strerror(errno) + ")";
      return t;
    }
    fs::path to(std::string(buf, static_cast<std::size_t>(n)));
    t.where = (to.is_absolute() ? to : t.where.parent_path() / to).lexically_normal();
  }
  t.exists = true;
  const auto& st = t.st;
  if (S_ISREG(st.st_mode)) return t;
  t.kind = Target::refused;
  if (S_ISDIR(st.st_mode)) {
    t.why = "is a directory";
  } else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    t.why = planted(t.where, st);
    // /dev/null discards, a FIFO streams: written as they are.
    if (t.why.empty()) t.kind = Target::stream;
  } else if (S_ISBLK(st.st_mode)) {
    t.why = "is a block device (a disk: not written)";
  } else if (S_ISSOCK(st.st_mode)) {
    t.why = "is a socket";
  } else {
    t.why = "is not a regular file";
  }
  return t;
}

void write_all(int fd, std::string_view content, const std::function<void(const char*)>& fail) {
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    done += static_cast<std::size_t>(n);
  }
}

std::string message(const fs::path& path, const char* what, int e) {
  return "cannot write " + path.string() + ": " + what + ": " + std::strerror(e);
}

/// Opens the device or FIFO `t` found, by its name again (O_NOFOLLOW: a link put there since is
/// not followed) and checks that it is still what was found. A FIFO nobody reads yet is opened
/// again every 20 ms until `wait` has passed.
UniqueFd open_stream(const fs::path& display, const Target& t, const WriteOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + options.reader_wait;
  UniqueFd fd;
  for (;;) {
    fd = UniqueFd(
        ::open(t.where.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (fd || errno != ENXIO || !S_ISFIFO(t.st.st_mode)) break;
    if (Clock::now() >= deadline) {
      auto ms = options.reader_wait.count();
      throw Error("cannot write " + display.string() + ": no one opened the FIFO to read it in " +
                  (ms % 1000 ? std::to_string(ms) + " ms" : std::to_string(ms / 1000) + " s"));
    }
    // A signal caught meanwhile (Ctrl-C under profile run's handlers) ends the wait; where none
    // is caught, Ctrl-C ends the command as it would any other.
    struct timespec pause {
      0, 20'000'000
    };
    if (::nanosleep(&pause, nullptr) != 0 && errno == EINTR)
      throw Error("cannot write " + display.string() +
                  ": interrupted while waiting for the FIFO's reader");
  }
  if (!fd) {
    if (errno == ELOOP)
      throw Error("cannot write " + display.string() +
                  ": it became a link while it was opened; not followed");
    throw Error(message(display, "open", errno));
  }
  struct stat now {};
  if (::fstat(fd.get(), &now) != 0) throw Error(message(display, "fstat", errno));
  if (now.st_dev != t.st.st_dev || now.st_ino != t.st.st_ino ||
      (now.st_mode & S_IFMT) != (t.st.st_mode & S_IFMT))
    throw Error("cannot write " + display.string() +
                ": it was replaced while it was opened; not written");
  // Written as any file is: waiting while a slow reader reads.
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

void replace_file(const fs::path& display, const Target& t, std::string_view content) {
  const fs::path& path = t.where;
  auto dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
  int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd < 0) throw Error("cannot write " + display.string() + ": " + std::strerror(errno));
  auto fail = [&](const char* what) {
    int e = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw Error(message(display, what, e));
  };
  write_all(fd, content, fail);
  // mkostemp creates 0600: a file replaced keeps its mode (a private one stays private), a new
  // one follows the umask like any other.
  mode_t mode = 0;
  if (t.exists) {
    mode = t.st.st_mode & 07777;
  } else {
    mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  ::fchmod(fd, mode);
  if (::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    int e = errno;
    ::unlink(tmpl.c_str());
    throw Error(message(display, "close", e));
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmpl.c_str());
    throw Error("cannot write " + display.string() + ": " + std::strerror(e));
  }
}

}  // namespace

void write_file_atomic(const fs::path& path, std::string_view content,
                       const WriteOptions& options) {
  auto t = target_of(path);
  switch (t.kind) {
    case Target::refused: throw Error("cannot write " + path.string() + ": it " + t.why);
    case Target::descriptor:
      write_all(t.fd, content, [&](const char* what) { throw Error(message(path, what, errno)); });
      return;
    case Target::stream: {
      auto fd = open_stream(path, t, options);
      write_all(fd.get(), content,
                [&](const char* what) { throw Error(message(path, what, errno)); });
      return;
    }
    case Target::replace: replace_file(path, t, content); return;
  }
}

std::string why_unwritable(const fs::path& path) {
  if (path.empty()) return "";
  auto t = target_of(path);
  switch (t.kind) {
    case Target::refused: return t.why;
    case Target::descriptor: {
      int flags = ::fcntl(t.fd, F_GETFL);
      if (flags < 0) return "is not open (descriptor " + std::to_string(t.fd) + ")";
      if ((flags & O_ACCMODE) == O_RDONLY)
        return "is open only for reading (descriptor " + std::to_string(t.fd) + ")";
      return "";
    }
    case Target::stream:
      if (::access(t.where.c_str(), W_OK) != 0)
        return "cannot write " + t.where.string() + " (" + std::strerror(errno) + ")";
      return "";
    case Target::replace: break;
  }
  std::error_code ec;
  fs::path dir = t.where.has_parent_path() ? t.where.parent_path() : fs::path(".");
  if (!fs::exists(dir, ec)) return "no such directory " + dir.string();
  if (!fs::is_directory(dir, ec)) return dir.string() + " is not a directory";
  // The file is written beside itself and renamed over: the directory must take a new file.
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return "cannot write in " + dir.string() + " (" + std::strerror(errno) + ")";
  if (t.exists && ::access(t.where.c_str(), W_OK) != 0 && errno == EROFS)
    return "cannot write " + t.where.string() + " (" + std::strerror(errno) + ")";
  return "";
}

std::optional<fs::path> replaced_file(const fs::path& path) {
  auto t = target_of(path);
  if (t.kind == Target::replace && t.exists && S_ISREG(t.st.st_mode)) return t.where;
  return std::nullopt;
}

fs::path make_fallback_file(const fs::path& path) {
  const char* tmp = std::getenv("TMPDIR");
  fs::path dir = tmp && *tmp ? tmp : "/tmp";
  // The name says what it was meant to be; a device's or standard output's says nothing.
  std::string stem = path.stem().string(), ext = path.extension().string();
  if (standard_descriptor(path) >= 0 || path.native().rfind("/dev/", 0) == 0 || stem.empty() ||
      stem[0] == '.') {
    stem = "mainboard-output";
    ext.clear();
  }
  if (stem.size() > 100) stem.resize(100);
  if (ext.size() > 16) ext.clear();
  std::string name = (dir / (stem + ".XXXXXX" + ext)).string();
  // mkostemps: O_CREAT|O_EXCL and mode 0600, whatever the umask; never through a link.
  int fd = ::mkostemps(name.data(), static_cast<int>(ext.size()), O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) throw Error("cannot create a file in " + dir.string() + ": " + std::strerror(errno));
  ::close(fd);
  return name;
}

bool same_file(const fs::path& output, const fs::path& input) {
  auto id = [](const fs::path& p, struct stat& st) {
    if (int fd = standard_descriptor(p); fd >= 0) return ::fstat(fd, &st) == 0;
    return ::stat(p.c_str(), &st) == 0;
  };
  struct stat a {
  }, b{};
  if (!id(output, a) || !id(input, b)) return false;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace mainboard::core
