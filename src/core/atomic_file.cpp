#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include "core/beneath.hpp"
#include "mainboard/error.hpp"

namespace mainboard::core {

namespace {

namespace fs = std::filesystem;

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

/// What writing `path` means, found before anything is written.
struct Target {
  enum Kind { descriptor, stream, replace, refused } kind = replace;
  int fd = -1;      ///< descriptor
  fs::path where;   ///< stream: what to open; replace: the file to put in place
  std::string why;  ///< refused: the reason
};

std::string uid_text(const fs::path& p) {
  struct stat st {};
  ::lstat(p.c_str(), &st);
  return std::to_string(st.st_uid);
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
  if (auto link = foreign_link_in(path)) {
    t.kind = Target::refused;
    t.why = "goes through " + link->string() + ", a link owned by another user (uid " +
            uid_text(*link) + "); not followed";
    return t;
  }
  std::error_code ec;
  t.where = path;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    // Our own link (or root's): written where it leads, and the link is kept. Followed by
    // hand: a link to a file not yet made is a name to create, which canonical() refuses.
    for (int hops = 0; hops < 40 && ::lstat(t.where.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
         ++hops) {
      auto to = fs::read_symlink(t.where, ec);
      if (ec) break;
      t.where = to.is_absolute() ? to : t.where.parent_path() / to;
    }
    t.where = t.where.lexically_normal();
  }
  if (::stat(t.where.c_str(), &st) != 0) return t;  // nothing there yet: created
  if (S_ISREG(st.st_mode)) return t;
  t.kind = Target::refused;
  if (S_ISDIR(st.st_mode)) {
    t.why = "is a directory";
  } else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    t.kind = Target::stream;  // /dev/null discards, a FIFO streams: written as they are
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

void replace_file(const fs::path& display, const fs::path& path, std::string_view content) {
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
  // mkostemp creates 0600; a result file should follow the umask like any other.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
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

void write_file_atomic(const fs::path& path, std::string_view content) {
  auto t = target_of(path);
  switch (t.kind) {
    case Target::refused: throw Error("cannot write " + path.string() + ": it " + t.why);
    case Target::descriptor:
      write_all(t.fd, content, [&](const char* what) { throw Error(message(path, what, errno)); });
      return;
    case Target::stream: {
      // No O_CREAT: it exists; no O_TRUNC needed: devices and FIFOs have no contents to cut.
      UniqueFd fd(::open(t.where.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY));
      if (!fd) throw Error(message(path, "open", errno));
      write_all(fd.get(), content,
                [&](const char* what) { throw Error(message(path, what, errno)); });
      return;
    }
    case Target::replace: replace_file(path, t.where, content); return;
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
  if (fs::exists(t.where, ec) && ::access(t.where.c_str(), W_OK) != 0 && errno == EROFS)
    return "cannot write " + t.where.string() + " (" + std::strerror(errno) + ")";
  return "";
}

std::optional<fs::path> replaced_file(const fs::path& path) {
  auto t = target_of(path);
  std::error_code ec;
  if (t.kind == Target::replace && fs::is_regular_file(t.where, ec)) return t.where;
  return std::nullopt;
}

fs::path fallback_path(const fs::path& path) {
  const char* tmp = std::getenv("TMPDIR");
  fs::path dir = tmp && *tmp ? tmp : "/tmp";
  auto name = path.stem().string() + "." + std::to_string(::getpid()) + path.extension().string();
  return dir / name;
}

}  // namespace mainboard::core
