#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "mainboard/error.hpp"

namespace mainboard::core {

void write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::string tmpl = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
  int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd < 0) throw Error("cannot write " + path.string() + ": " + std::strerror(errno));
  auto fail = [&](const char* what) {
    int e = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw Error("cannot write " + path.string() + ": " + what + ": " + std::strerror(e));
  };
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    done += static_cast<std::size_t>(n);
  }
  // mkostemp creates 0600; a result file should follow the umask like any other.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    ::unlink(tmpl.c_str());
    throw Error("cannot write " + path.string() + ": close: " + std::strerror(errno));
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmpl.c_str());
    throw Error("cannot write " + path.string() + ": " + std::strerror(e));
  }
}

std::string why_unwritable(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  if (path.empty() || path == "-") return "";
  std::error_code ec;
  if (fs::is_directory(path, ec)) return "is a directory";
  fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::exists(dir, ec)) return "no such directory " + dir.string();
  if (!fs::is_directory(dir, ec)) return dir.string() + " is not a directory";
  // The file is written beside itself and renamed over: the directory must take a new file.
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return "cannot write in " + dir.string() + " (" + std::strerror(errno) + ")";
  if (fs::exists(path, ec) && ::access(path.c_str(), W_OK) != 0 && errno == EROFS)
    return "cannot write " + path.string() + " (" + std::strerror(errno) + ")";
  return "";
}

std::filesystem::path fallback_path(const std::filesystem::path& path) {
  const char* tmp = std::getenv("TMPDIR");
  std::filesystem::path dir = tmp && *tmp ? tmp : "/tmp";
  auto name = path.stem().string() + "." + std::to_string(::getpid()) + path.extension().string();
  return dir / name;
}

}  // namespace mainboard::core
