#include "core/process.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "mainboard/error.hpp"

#include "core/clock.hpp"
#include "core/text.hpp"

namespace mainboard::core {

bool executable_file(const std::string& file) {
  struct stat st {};
  return ::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(file.c_str(), X_OK) == 0;
}

namespace {

std::string absolute(const std::string& file) {
  std::error_code ec;
  auto abs = std::filesystem::absolute(file, ec);
  return ec ? file : abs.lexically_normal().string();
}

}  // namespace

std::optional<std::string> find_program(std::string_view name, std::string_view path) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string_view::npos) {
    std::string file(name);
    if (!executable_file(file)) return std::nullopt;
    return absolute(file);
  }
  for (auto dir : split(path, ':')) {
    std::string file =
        (dir.empty() ? std::string(".") : std::string(dir)) + "/" + std::string(name);
    if (executable_file(file)) return absolute(file);
  }
  return std::nullopt;
}

std::optional<std::string> PathIndex::find(std::string_view name, std::string_view path) {
  if (name.empty() || name.find('/') != std::string_view::npos) return find_program(name, path);
  // Asked for every probe's programs in every PATH directory, each snapshot: nothing is
  // allocated for a name the index already knows is absent.
  for (auto entry : split(path, ':')) {
    if (entry.empty() || entry.front() != '/') {  // the current directory: looked at each time
      std::string file =
          (entry.empty() ? std::string(".") : std::string(entry)) + "/" + std::string(name);
      if (executable_file(file)) return absolute(file);
      continue;
    }
    auto seen = checked_.find(entry);
    if (seen == checked_.end()) {
      std::string dir(entry);
      struct stat st {};
      bool exists = ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
      seen = checked_.emplace(dir, exists).first;
      if (exists) {
        std::int64_t mtime = std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
        auto& known = directories[dir];
        if (known.mtime_ns != mtime || known.mtime_ns + 1'000'000'000 > known.read_ns) {
          known = {mtime, unix_ns(), {}};
          changed_ = true;
        }
      }
    }
    if (!seen->second) continue;  // no such directory: nothing in it
    auto& names = directories.find(entry)->second.names;
    auto held = names.find(name);
    if (held != names.end() && !held->second) continue;
    std::string file = std::string(entry) + "/" + std::string(name);
    if (held == names.end()) {
      struct stat st {};
      held = names.emplace(std::string(name), ::lstat(file.c_str(), &st) == 0).first;
      changed_ = true;
    }
    if (held->second && executable_file(file)) return absolute(file);
  }
  return std::nullopt;
}

std::string not_found_reason(std::string_view name) {
  if (name.find('/') == std::string_view::npos) return "not found on PATH";
  struct stat st {};
  if (::stat(std::string(name).c_str(), &st) != 0) return "no such file";
  if (S_ISDIR(st.st_mode)) return "is a directory";
  return "not an executable file";
}

void check_arguments(const std::vector<std::string>& argv) {
  for (std::size_t i = 0; i < argv.size(); ++i)
    if (argv[i].find('\0') != std::string::npos)
      throw Error("argument " + std::to_string(i) + " of the command holds a NUL byte (" +
                  argv[i].substr(0, argv[i].find('\0')) + "\\0…): a program cannot be given it");
}

void throw_not_runnable(std::string_view name) {
  std::string reason = not_found_reason(name);
  bool missing = reason == "not found on PATH" || reason == "no such file";
  throw CommandError("cannot run " + std::string(name) + ": " + reason, missing ? 127 : 126);
}

void throw_exec_failed(std::string_view name, int error) {
  throw CommandError("cannot run " + std::string(name) + ": " + std::strerror(error),
                     error == ENOENT ? 127 : 126);
}

ExitStatus exit_status(int wait_status) {
  ExitStatus s;
  if (WIFEXITED(wait_status)) {
    s.exit_code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    s.signal = WTERMSIG(wait_status);
    s.exit_code = 128 + s.signal;
  }
  return s;
}

}  // namespace mainboard::core
