#include "core/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "mainboard/error.hpp"

namespace mainboard::core {

std::string human_bytes(std::uint64_t bytes) {
  const char* units[] = {"bytes", "kB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1000 && u < 4) {
    v /= 1000;
    ++u;
  }
  char out[32];
  if (u == 0)
    std::snprintf(out, sizeof out, "%llu bytes", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(out, sizeof out, "%.1f %s", v, units[u]);
  return out;
}

namespace {

/// MemAvailable from /proc/meminfo, in bytes; 0 when it cannot be read.
std::uint64_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

std::string bound_text(std::uint64_t bytes) {
  if (bytes % (1ull << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes % (1ull << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return human_bytes(bytes);
}

}  // namespace

std::string read_input(const std::filesystem::path& path, const InputLimits& limits) {
  if (path.native().find('\0') != std::string::npos)
    throw Error("cannot read " + path.native().substr(0, path.native().find('\0')) +
                "\\0…: a file name holds no NUL byte");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) throw Error("cannot read " + path.string() + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    bool dir = S_ISDIR(st.st_mode);
    ::close(fd);
    throw Error("cannot read " + path.string() + ": " +
                (dir ? "it is a directory" : "not a regular file"));
  }
  auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > limits.max_bytes) {
    ::close(fd);
    throw Error(path.string() + " is " + human_bytes(size) + ": past the " +
                bound_text(limits.max_bytes) + " " + limits.what + " may be");
  }
  auto needed = static_cast<std::uint64_t>(static_cast<double>(size) * limits.memory_per_byte);
  if (auto available = available_memory(); available && needed > available && size > (64u << 20)) {
    ::close(fd);
    throw Error("reading " + path.string() + " (" + human_bytes(size) + ") takes about " +
                human_bytes(needed) + " of memory, and " + human_bytes(available) +
                " is available");
  }
  std::string data;
  // A byte more than the file: the read that finds its end needs no larger buffer (growing a
  // string copies it: for a large file, a second copy's worth of page faults).
  data.resize(static_cast<std::size_t>(size) + 1);
  std::size_t done = 0;
  while (true) {
    if (done == data.size()) data.resize(data.size() + 65536);  // it grew since fstat
    ssize_t n = ::read(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      throw Error("cannot read " + path.string() + ": " + std::strerror(e));
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
    if (done > limits.max_bytes) {
      ::close(fd);
      throw Error(path.string() + " grew past the " + bound_text(limits.max_bytes) + " " +
                  limits.what + " may be while it was read");
    }
  }
  ::close(fd);
  data.resize(done);
  return data;
}

std::string describe_bytes(std::string_view head) {
  auto starts = [&](std::string_view magic) { return head.substr(0, magic.size()) == magic; };
  if (starts("\x1f\x8b")) return "gzip-compressed data (gunzip it first)";
  if (starts("\x28\xb5\x2f\xfd")) return "zstd-compressed data (unzstd it first)";
  if (starts("\xfd"
             "7zXZ"))
    return "xz-compressed data (unxz it first)";
  if (starts("BZh")) return "bzip2-compressed data (bunzip2 it first)";
  if (starts("PK\x03\x04")) return "a zip archive";
  if (starts("\x7f"
             "ELF"))
    return "an ELF file (a program or library)";
  if (starts("PERFILE2")) return "a perf.data file (perf's own format, not a mainboard profile)";
  auto nul = head.find('\0');
  if (nul == std::string_view::npos) return "";
  if (head.find_first_not_of('\0') == std::string_view::npos) return "only NUL bytes";
  return "binary data (a NUL byte at offset " + std::to_string(nul) + ")";
}

}  // namespace mainboard::core
