// Spans for functions compiled with -finstrument-functions (the hooks live in the small
// mainboard_instrument library): recorded only for the modules Profiler::auto_instrument names,
// named at the end of the session by the same symbolizer the stack sampler uses.
#include <dlfcn.h>
#include <fmt/format.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "mainboard/profiler.hpp"
#include "profiling/instrument.hpp"
#include "profiling/session.hpp"
#include "sampling/symbolizer.hpp"

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
        name = f.placeholders
                   .emplace_back(fmt::format("@0x{:x}", reinterpret_cast<std::uintptr_t>(fn)))
                   .c_str();
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

void name_instrumented_functions(Profile& p) {
  bool any = false;
  for (const auto& path : p.paths)
    if (path.find("@0x") != std::string::npos) any = true;
  if (!any) return;
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  sampling::Symbolizer symbolizer;
  symbolizer.set_mappings(sampling::parse_maps(text.str()));
  auto resolve = [&](std::string_view component) -> std::string {
    if (component.rfind("@0x", 0) != 0) return std::string(component);
    std::uint64_t address = std::strtoull(std::string(component.substr(3)).c_str(), nullptr, 16);
    const auto& frames = symbolizer.symbolize(address, false);
    return frames.empty() ? std::string(component) : frames.back().function;
  };
  for (std::size_t i = 0; i < p.paths.size(); ++i) {
    std::string named;
    std::size_t start = 0;
    while (start <= p.paths[i].size()) {
      auto slash = p.paths[i].find('/', start);
      if (!named.empty()) named += "/";
      named += resolve(
          std::string_view(p.paths[i])
              .substr(start, slash == std::string::npos ? std::string::npos : slash - start));
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    p.paths[i] = named;
    p.span_stats[i].path = named;
    p.span_stats[i].name = resolve(p.span_stats[i].name);
  }
}

}  // namespace mainboard::detail

namespace mainboard {

void Profiler::auto_instrument(std::vector<std::string> modules) {
  detail::set_instrumented_modules(std::move(modules));
}

}  // namespace mainboard
