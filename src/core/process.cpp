#include "core/process.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "mainboard/error.hpp"

#include "core/clock.hpp"
#include "core/text.hpp"

namespace mainboard::core {

std::vector<std::uint32_t> parse_nspid(const std::string& status) {
  std::vector<std::uint32_t> out;
  auto at = status.find("\nNSpid:");
  if (at == std::string::npos) {
    if (status.rfind("NSpid:", 0) != 0) return out;
    at = 0;
  } else {
    at += 1;
  }
  auto end = status.find('\n', at);
  auto line = status.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
  for (const auto& word : core::split_ws(line)) {
    auto v = core::parse_u64(word);
    if (!v || *v == 0 || *v > 0xffffffffu) return {};
    out.push_back(static_cast<std::uint32_t>(*v));
  }
  return out;
}

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

namespace {

bool name_before(const std::pair<std::string, bool>& entry, std::string_view name) {
  return std::string_view(entry.first) < name;
}

}  // namespace

const std::pair<std::string, bool>* PathIndex::Directory::lookup(std::string_view name) const {
  auto it = std::lower_bound(names.begin(), names.end(), name, name_before);
  return it != names.end() && it->first == name ? &*it : nullptr;
}

const std::pair<std::string, bool>& PathIndex::Directory::insert(std::string_view name, bool held) {
  auto it = std::lower_bound(names.begin(), names.end(), name, name_before);
  return *names.emplace(it, std::string(name), held);
}

void PathIndex::Directory::sort() {
  auto by_name = [](const auto& a, const auto& b) { return a.first < b.first; };
  // A cache writes two sorted lists, the names held and then those not: merged in one pass.
  auto second = std::is_sorted_until(names.begin(), names.end(), by_name);
  std::stable_sort(second, names.end(), by_name);  // sorted already, but for a file made by hand
  std::inplace_merge(names.begin(), second, names.end(), by_name);
  names.erase(std::unique(names.begin(), names.end(),
                          [](const auto& a, const auto& b) { return a.first == b.first; }),
              names.end());
}

const std::vector<PathIndex::Entry>& PathIndex::entries(std::string_view path) {
  if (path_ && path == *path_) return entries_;
  entries_.clear();
  for (auto entry : split(path, ':')) {
    Entry e{entry.empty() ? std::string(".") : std::string(entry), false, nullptr};
    e.relative = entry.empty() || entry.front() != '/';
    if (!e.relative) {
      auto seen = looked_.find(e.dir);
      if (seen == looked_.end()) {  // each directory is statted once by this object
        struct stat st {};
        Directory* known = nullptr;
        if (::stat(e.dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
          std::int64_t mtime = std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
          known = &directories[e.dir];
          if (known->mtime_ns != mtime || known->mtime_ns + 1'000'000'000 > known->read_ns) {
            *known = {mtime, unix_ns(), {}};
            changed_ = true;
          }
        }
        seen = looked_.emplace(e.dir, known).first;
      }
      e.known = seen->second;
    }
    entries_.push_back(std::move(e));
  }
  path_ = std::string(path);
  return entries_;
}

std::optional<std::string> PathIndex::find(std::string_view name, std::string_view path) {
  if (name.empty() || name.find('/') != std::string_view::npos) return find_program(name, path);
  // Asked for every probe's programs in every PATH directory, each snapshot: nothing is
  // allocated for a name the index already knows is absent.
  for (const auto& e : entries(path)) {
    if (e.relative) {  // the current directory: looked at each time
      std::string file = e.dir + "/" + std::string(name);
      if (executable_file(file)) return absolute(file);
      continue;
    }
    if (!e.known) continue;  // no such directory: nothing in it
    auto* held = e.known->lookup(name);
    if (held && !held->second) continue;
    std::string file = e.dir + "/" + std::string(name);
    if (!held) {
      struct stat st {};
      held = &e.known->insert(name, ::lstat(file.c_str(), &st) == 0);
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
