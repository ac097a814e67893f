// Spans for functions compiled with -finstrument-functions (the hooks live in the small
// mainboard::instrument library): recorded only for the modules Profiler::auto_instrument names,
// under an "@0x<address>" placeholder. The profile carries the maps of those modules, and the
// reader (mainboard::mainboard's symbolizer) names them: nothing here reads debug information.
#include <dlfcn.h>

#include <charconv>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <unordered_map>

#include "mainboard/span.hpp"
#include "spans/instrument.hpp"

namespace mainboard::detail {

namespace {

struct Filter {
  std::mutex mutex;
  std::vector<std::string> modules;  // basenames or full paths; "" is the executable
  std::atomic<std::uint64_t> generation{1};
  std::atomic<bool> any{false};
  std::unordered_map<void*, const char*> names;  // function → its interned placeholder name
  std::deque<std::string> placeholders;  // never shrinks: spans may point at these until exit
  std::string executable;                // this program's resolved path, read once
};
Filter& filter() {
  static auto* f = new Filter;  // used by hooks until the very end of the process
  return *f;
}

/// The placeholder a span of `fn` carries until the session ends: "@0x<address>", or null when
/// its module is not one of the chosen.
const char* decide(void* fn) {
  auto& f = filter();
  std::lock_guard<std::mutex> lock(f.mutex);
  auto it = f.names.find(fn);
  if (it != f.names.end()) return it->second;
  Dl_info info{};
  const char* name = nullptr;
  if (::dladdr(fn, &info) && info.dli_fname) {
    std::string path = info.dli_fname;
    if (path.empty()) path = f.executable;
    std::error_code ec;
    auto canonical = std::filesystem::weakly_canonical(path, ec).string();
    auto base = std::filesystem::path(path).filename().string();
    bool is_exe = canonical == f.executable;
    for (const auto& m : f.modules) {
      if (m == base || m == path || m == canonical || (is_exe && (m.empty() || m == "main"))) {
        char text[32];
        std::snprintf(text, sizeof text, "@0x%jx",
                      static_cast<std::uintmax_t>(reinterpret_cast<std::uintptr_t>(fn)));
        name = f.placeholders.emplace_back(text).c_str();
        break;
      }
    }
  }
  f.names.emplace(fn, name);
  return name;
}

struct Frame {
  void* fn;
  ThreadState* state;
};
struct Local {
  std::vector<Frame> stack;
  std::uint64_t generation = 0;
  std::unordered_map<void*, const char*> cache;
};
thread_local Local t_hooks;

}  // namespace

void instrumented_enter(void* fn) noexcept {
  if (g_profiling.load(std::memory_order_relaxed) == 0 ||
      !filter().any.load(std::memory_order_relaxed))
    return;
  try {
    auto& l = t_hooks;
    auto generation = filter().generation.load(std::memory_order_acquire);
    if (l.generation != generation) {
      l.cache.clear();
      l.generation = generation;
    }
    auto it = l.cache.find(fn);
    const char* name =
        it != l.cache.end() ? it->second : l.cache.emplace(fn, decide(fn)).first->second;
    if (!name) return;
    if (auto* state = span_enter(name)) l.stack.push_back({fn, state});
  } catch (...) {
  }
}

void instrumented_exit(void* fn) noexcept {
  auto& l = t_hooks;
  if (l.stack.empty() || l.stack.back().fn != fn) return;
  auto* state = l.stack.back().state;
  l.stack.pop_back();
  span_exit(state);
}

void set_instrumented_modules(std::vector<std::string> modules) {
  auto& f = filter();
  std::lock_guard<std::mutex> lock(f.mutex);
  f.modules = std::move(modules);
  if (f.executable.empty()) {
    std::error_code ec;
    f.executable =
        std::filesystem::weakly_canonical(std::filesystem::read_symlink("/proc/self/exe", ec), ec)
            .string();
  }
  f.names.clear();  // f.placeholders stay: spans may still point at them
  f.any = !f.modules.empty();
  f.generation.fetch_add(1, std::memory_order_release);
}

namespace {

/// "@0x7f…" in any component of a span path.
std::vector<std::uint64_t> placeholder_addresses(const Profile& p) {
  std::vector<std::uint64_t> out;
  for (const auto& path : p.paths) {
    for (std::size_t at = path.find("@0x"); at != std::string::npos;
         at = path.find("@0x", at + 3)) {
      std::uint64_t address = 0;
      const char* begin = path.data() + at + 3;
      auto [end, ec] = std::from_chars(begin, path.data() + path.size(), address, 16);
      if (ec == std::errc() && end != begin) out.push_back(address);
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> instrumented_function_maps(const Profile& p) {
  auto addresses = placeholder_addresses(p);
  if (addresses.empty()) return {};
  std::ifstream in("/proc/self/maps");
  std::vector<std::pair<std::string, std::string>> lines;  // path, line
  std::set<std::string> wanted;
  for (std::string line; std::getline(in, line);) {
    // "start-end perms offset dev inode path"
    std::uint64_t start = 0, end = 0;
    auto dash = line.find('-');
    auto space = line.find(' ');
    if (dash == std::string::npos || space == std::string::npos || dash > space) continue;
    std::from_chars(line.data(), line.data() + dash, start, 16);
    std::from_chars(line.data() + dash + 1, line.data() + space, end, 16);
    auto slash = line.find('/');
    if (slash == std::string::npos) continue;  // anonymous memory: no file to name it from
    std::string path = line.substr(slash);
    for (auto a : addresses)
      if (a >= start && a < end) wanted.insert(path);
    lines.emplace_back(std::move(path), std::move(line));
  }
  std::vector<std::string> out;
  for (auto& [path, line] : lines)
    if (wanted.count(path)) out.push_back(std::move(line));
  return out;
}

}  // namespace mainboard::detail
