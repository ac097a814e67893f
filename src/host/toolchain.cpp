#include "mainboard/toolchain.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <regex>

#include "core/atomic_file.hpp"
#include "core/beneath.hpp"
#include "core/fs.hpp"
#include "core/log.hpp"
#include "core/process.hpp"
#include "core/text.hpp"
#include "mainboard/runner.hpp"

namespace mainboard {

std::span<const ToolProbe> tool_probes() {
  using C = ToolCategory;
  static const std::vector<ToolProbe> kProbes = {
      {"gcc", C::c, {"gcc"}},
      {"clang", C::c, {"clang"}},
      {"icx", C::c, {"icx"}},
      {"nvc", C::c, {"nvc"}},
      {"g++", C::cxx, {"g++"}},
      {"clang++", C::cxx, {"clang++"}},
      {"icpx", C::cxx, {"icpx"}},
      {"nvc++", C::cxx, {"nvc++"}},
      // "Cuda compilation tools, release 13.0, V13.0.88": the V-number is the full version.
      {"nvcc", C::cuda, {"nvcc"}, {"--version"}, R"(V(\d+\.\d+(?:\.\d+)?))"},
      {"hipcc", C::hip, {"hipcc"}, {"--version"}, R"(HIP version: (\d+\.\d+(?:\.\d+)?))"},
      {"gfortran", C::fortran, {"gfortran"}},
      {"ifx", C::fortran, {"ifx"}},
      {"flang", C::fortran, {"flang", "flang-new"}},
      // Wrappers print their underlying compiler's version; mpirun prints the MPI library's.
      {"mpicc", C::mpi, {"mpicc"}},
      {"mpicxx", C::mpi, {"mpicxx", "mpic++"}},
      {"mpifort", C::mpi, {"mpifort", "mpif90"}},
      {"mpirun", C::mpi, {"mpirun", "mpiexec"}},
      {"cmake", C::build, {"cmake"}},
      {"ninja", C::build, {"ninja", "ninja-build"}},
      {"make", C::build, {"make", "gmake"}},
      {"meson", C::build, {"meson"}},
      {"bazel", C::build, {"bazel", "bazelisk"}},
      {"python", C::python, {"python3", "python"}},
  };
  return kProbes;
}

namespace {

Command version_command(const std::string& path, const ToolProbe& probe) {
  Command cmd;
  cmd.argv.push_back(path);
  cmd.argv.insert(cmd.argv.end(), probe.version_args.begin(), probe.version_args.end());
  cmd.timeout = probe.timeout;
  cmd.max_output_bytes = 64u << 10;
  return cmd;
}

std::optional<std::string> parse_version(const ToolProbe& probe, const CommandResult& result) {
  if (!result.started || result.timed_out) return std::nullopt;
  std::string text = result.out + "\n" + result.err;
  try {
    std::regex re(probe.pattern);
    std::smatch m;
    if (std::regex_search(text, m, re) && m.size() > 1 && m[1].matched) return m[1].str();
  } catch (const std::regex_error& e) {
    core::log().warn("toolchain: bad version pattern for {}: {}", probe.name, e.what());
  }
  return std::nullopt;
}

/// The tool as found on PATH (first candidate binary that exists), without its version yet.
/// (The Machine's runner finds executables through the tool cache's index of PATH.)
DetectedTool locate(const ToolProbe& probe, const Runner& runner) {
  DetectedTool tool;
  tool.name = probe.name;
  tool.category = probe.category;
  for (const auto& bin : probe.binaries) {
    if (auto path = runner.find_executable(bin)) {
      tool.path = *path;
      tool.available = true;
      break;
    }
  }
  return tool;
}

}  // namespace

DetectedTool ToolProbe::detect(const Runner& runner) const {
  auto tool = locate(*this, runner);
  if (tool.available)
    tool.version =
        parse_version(*this, runner.run(version_command(
                                 runner.launched_program(*tool.path).value_or(*tool.path), *this)));
  return tool;
}

struct ToolCache::PathMemory {
  std::mutex mutex;
  core::PathIndex index;
};

namespace {

// The cache's layout, version 4: lines of tab-separated fields under a first line that names it.
//   mainboard tool cache 4
//   v <key> <version>              a tool's version
//   n <key>                        a tool that printed none
//   d <dir> <mtime_ns> <read_ns> <held> <absent>
// where held and absent are the names asked for in the directory, joined by '/' (a character no
// file name holds). Read on every snapshot: version 2 (JSON) took nlohmann's parser and a value
// per field, a quarter of a warm snapshot's instructions. A key, value or directory holding a tab
// or a line feed is not written (it is looked up again the next time); a line that is not one of
// these is skipped; a file of another version is ignored and rewritten on the next save (version
// 3 keyed a tool by its real path; 4 by its path, version arguments and pattern, then the file's
// device, inode, size and mtime).
constexpr std::string_view kCacheHeader = "mainboard tool cache 4";
constexpr char kNameSeparator = '/';

bool one_field(std::string_view text) {
  return text.find_first_of("\t\n") == std::string_view::npos;
}

}  // namespace

ToolCache::ToolCache(std::filesystem::path file)
    : file_(std::move(file)), path_(std::make_shared<PathMemory>()) {
  auto text = core::Fs().read(file_.string(), 4u << 20);
  if (!text) return;
  auto lines = core::split_lines(*text);
  // A cache we cannot read (or of another version) is simply empty: rebuilt on the next save.
  if (lines.empty() || lines.front() != kCacheHeader) return;
  for (auto line = lines.begin() + 1; line != lines.end(); ++line) {
    auto f = core::split(*line, '\t');
    if (f.size() == 3 && f[0] == "v") {
      entries_.insert_or_assign(std::string(f[1]), std::string(f[2]));
    } else if (f.size() == 2 && f[0] == "n") {
      entries_.insert_or_assign(std::string(f[1]), std::nullopt);
    } else if (f.size() == 6 && f[0] == "d" && !f[1].empty()) {
      // A directory line that is not all of that is left out (the directory is read again).
      auto mtime = core::parse_i64(f[2]), read = core::parse_i64(f[3]);
      if (!mtime || !read) continue;
      core::PathIndex::Directory d{*mtime, *read, {}};
      d.names.reserve(2 + static_cast<std::size_t>(std::count(f[4].begin(), f[4].end(), '/') +
                                                   std::count(f[5].begin(), f[5].end(), '/')));
      for (int list : {4, 5})
        for (auto name : core::split(f[list], kNameSeparator))
          if (!name.empty()) d.names.emplace_back(std::string(name), list == 4);
      d.sort();
      path_->index.directories.insert_or_assign(std::string(f[1]), std::move(d));
    }
  }
  warm_ = !entries_.empty();
}

std::optional<std::string> ToolCache::find_on_path(std::string_view name, std::string_view path) {
  std::lock_guard lock(path_->mutex);
  return path_->index.find(name, path);
}

std::optional<std::filesystem::path> ToolCache::default_file() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/')
    return std::filesystem::path(xdg) / "mainboard" / "tools.cache";
  if (const char* home = std::getenv("HOME"); home && *home == '/')
    return std::filesystem::path(home) / ".cache" / "mainboard" / "tools.cache";
  return std::nullopt;
}

std::optional<std::optional<std::string>> ToolCache::lookup(const std::string& key) const {
  std::lock_guard lock(path_->mutex);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  return it->second;
}

void ToolCache::store(const std::string& key, const std::optional<std::string>& version) {
  std::lock_guard lock(path_->mutex);
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second == version) return;
  entries_[key] = version;
  dirty_ = true;
}

void ToolCache::replace(const std::string& kind, const std::string& key,
                        const std::optional<std::string>& value) {
  std::lock_guard lock(path_->mutex);
  for (auto it = entries_.lower_bound(kind);
       it != entries_.end() && core::starts_with(it->first, kind);)
    if (it->first == key) {
      ++it;
    } else {
      it = entries_.erase(it);
      dirty_ = true;
    }
  if (auto it = entries_.find(key); it != entries_.end() && it->second == value) return;
  entries_[key] = value;
  dirty_ = true;
}

void ToolCache::save() const {
  std::lock_guard lock(path_->mutex);
  if (!path_->index.take_changed() && !dirty_) return;
  std::string text(kCacheHeader);
  text += '\n';
  for (const auto& [key, value] : entries_) {
    if (!one_field(key) || (value && !one_field(*value))) continue;
    text += value ? "v\t" : "n\t";
    text += key;
    if (value) (text += '\t') += *value;
    text += '\n';
  }
  // The directories read most recently, at most 64: PATH differs from shell to shell, and a
  // directory left out is only read again.
  std::vector<const std::pair<const std::string, core::PathIndex::Directory>*> dirs;
  for (const auto& d : path_->index.directories)
    if (one_field(d.first)) dirs.push_back(&d);
  std::sort(dirs.begin(), dirs.end(),
            [](const auto* a, const auto* b) { return a->second.read_ns > b->second.read_ns; });
  if (dirs.size() > 64) dirs.resize(64);
  for (const auto* d : dirs) {
    std::string held, absent;
    for (const auto& [name, there] : d->second.names) {
      if (!one_field(name)) continue;
      auto& list = there ? held : absent;
      if (!list.empty()) list += kNameSeparator;
      list += name;
    }
    text += "d\t" + d->first + '\t' + std::to_string(d->second.mtime_ns) + '\t' +
            std::to_string(d->second.read_ns) + '\t' + held + '\t' + absent + '\n';
  }
  try {
    std::error_code ec;
    std::filesystem::create_directories(file_.parent_path(), ec);
    core::write_file_atomic(file_, text);
  } catch (const std::exception& e) {
    core::log().debug("toolchain cache not saved: {}", e.what());
  }
}

namespace {

/// What a tool's key starts with: its path, how it is asked and what its answer is matched with.
std::string tool_kind(const std::string& path, const ToolProbe& probe) {
  std::string kind = path;
  for (const auto& a : probe.version_args)
    kind += "|" + a;
  return kind + "|" + probe.pattern + "|";
}

}  // namespace

std::optional<std::string> ToolCache::key_for(const std::string& path, const ToolProbe& probe) {
  // Keyed by the file the path resolves to: its device and inode (a symlink that now points
  // elsewhere names another file), its size and mtime (an update). One stat, where naming the
  // file by its real path took four calls (an O_PATH open, readlink of /proc/self/fd, fstat and
  // close) for each tool of every snapshot. The file comes last, after what stays the same for
  // the tool at this path (tool_kind), so that an update's key replaces the earlier one.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return tool_kind(path, probe) + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) +
         ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

Toolchain Toolchain::probe(const Runner& runner, std::span<const ToolProbe> probes,
                           ToolCache* cache) {
  Toolchain tc;
  std::vector<Command> commands;
  std::vector<std::size_t> waiting;  // index into tc.tools for each command
  std::vector<std::optional<std::string>> keys;
  std::vector<const ToolProbe*> sources;
  std::vector<std::string> programs;
  for (const auto& p : probes) {
    auto tool = locate(p, runner);
    if (!tool.available) continue;  // only tools present on PATH are kept
    // A pyenv shim is asked through the interpreter it selects: no bash and pyenv started, and
    // the cache keyed by that interpreter (the shim stays the same file when the choice changes).
    const std::string program = runner.launched_program(*tool.path).value_or(*tool.path);
    std::optional<std::string> key;
    if (cache) {
      key = ToolCache::key_for(program, p);
      if (key)
        if (auto hit = cache->lookup(*key)) {
          tool.version = *hit;
          tc.tools.push_back(std::move(tool));
          continue;
        }
    }
    commands.push_back(version_command(program, p));
    waiting.push_back(tc.tools.size());
    keys.push_back(key);
    sources.push_back(&p);
    programs.push_back(program);
    tc.tools.push_back(std::move(tool));
  }
  if (!commands.empty()) {
    auto results = runner.run_all(commands);
    for (std::size_t i = 0; i < results.size(); ++i) {
      auto version = parse_version(*sources[i], results[i]);
      tc.tools[waiting[i]].version = version;
      // A timeout is not an answer worth remembering; anything else (even "no version") is.
      if (cache && keys[i] && results[i].started && !results[i].timed_out)
        cache->replace(tool_kind(programs[i], *sources[i]), *keys[i], version);
    }
  }
  if (cache) cache->save();
  return tc;
}

}  // namespace mainboard
