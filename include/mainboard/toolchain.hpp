#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mainboard/export.hpp"

namespace mainboard {

class Runner;

enum class ToolCategory { c, cxx, cuda, hip, fortran, mpi, build, python };
MAINBOARD_API const char* to_string(ToolCategory category);

/// A build tool found (or looked for) on PATH.
struct MAINBOARD_API DetectedTool {
  std::string name;
  ToolCategory category = ToolCategory::build;
  std::optional<std::string> path;     ///< resolved absolute path, empty when not found
  std::optional<std::string> version;  ///< parsed version, empty when absent or unparseable
  bool available = false;
  bool operator==(const DetectedTool&) const = default;
};

/// How to find one tool: pure data. Adding a tool to the inventory is one more row in
/// tool_probes(), with no change to the discovery code.
struct MAINBOARD_API ToolProbe {
  std::string name;
  ToolCategory category = ToolCategory::build;
  std::vector<std::string> binaries;  ///< candidate executables, tried in order
  std::vector<std::string> version_args = {"--version"};
  /// ECMAScript regex; its first group captures the version from stdout+stderr.
  std::string pattern = R"((\d+\.\d+(?:\.\d+)?))";
  /// A tool that takes longer than this to print its version is reported without one.
  std::chrono::milliseconds timeout{5000};

  /// Resolves the first binary on the runner's PATH and runs it for its version.
  DetectedTool detect(const Runner& runner) const;
};

/// The built-in table: C/C++ compilers, CUDA/HIP, Fortran, MPI wrappers, build systems, Python.
MAINBOARD_API std::span<const ToolProbe> tool_probes();

/// Version answers kept on disk, keyed by a binary's resolved path, size and mtime, so that a
/// second probe spawns nothing for tools that did not change; and which of the probes' names
/// each PATH directory holds, by the directory's mtime, so that it looks for absent ones in none.
class MAINBOARD_API ToolCache {
 public:
  /// `file` is the cache file (a few lines of text, its layout in toolchain.cpp); it need not
  /// exist yet.
  explicit ToolCache(std::filesystem::path file);
  /// The default location: $XDG_CACHE_HOME/mainboard/tools.cache, else ~/.cache/mainboard/…
  static std::optional<std::filesystem::path> default_file();
  /// Any thread (as is store).
  std::optional<std::optional<std::string>> lookup(const std::string& key) const;
  void store(const std::string& key, const std::optional<std::string>& version);
  /// Stores `key`, leaving out every other key that starts with `kind` (a fact of which only
  /// the latest is worth keeping, such as the CPU topology of this boot).
  void replace(const std::string& kind, const std::string& key,
               const std::optional<std::string>& value);
  /// Writes the file (atomically) when something changed; failures are logged, not thrown.
  void save() const;
  /// The key for a binary: its path, the version arguments and pattern, then the file it
  /// resolves to (device, inode), its size and mtime; an update's key replaces the earlier one.
  static std::optional<std::string> key_for(const std::string& path, const ToolProbe& probe);
  /// The executable `name` runs on the search path `path`, as a shell finds it, looking again
  /// only in the directories that changed since the cache last looked. Any thread.
  std::optional<std::string> find_on_path(std::string_view name, std::string_view path);
  std::size_t hits() const { return hits_; }
  std::size_t misses() const { return misses_; }
  /// Whether the file held answers when this was made (a snapshot that will most likely start
  /// no program), as opposed to a first run or a cache of another layout.
  bool warm() const { return warm_; }

 private:
  std::filesystem::path file_;
  std::map<std::string, std::optional<std::string>> entries_;
  struct PathMemory;
  std::shared_ptr<PathMemory> path_;
  bool dirty_ = false;
  bool warm_ = false;
  mutable std::size_t hits_ = 0;
  mutable std::size_t misses_ = 0;
};

/// The tools found on this host, in the probe table's order.
struct MAINBOARD_API Toolchain {
  std::vector<DetectedTool> tools;

  std::map<ToolCategory, std::vector<DetectedTool>> by_category() const;
  /// The first available tool with this name.
  const DetectedTool* find(const std::string& name) const;

  /// Runs every probe (version commands in parallel) and keeps the tools found on PATH.
  /// With a cache, binaries whose path/size/mtime are unchanged are not run again.
  static Toolchain probe(const Runner& runner, std::span<const ToolProbe> probes = tool_probes(),
                         ToolCache* cache = nullptr);
  bool operator==(const Toolchain&) const = default;
};

/// The CMake configuration a build on this host should use.
struct MAINBOARD_API CompilerConfig {
  std::optional<std::string> c_compiler;
  std::optional<std::string> cxx_compiler;
  std::optional<std::string> cuda_compiler;
  std::optional<std::string> cuda_architectures;  ///< e.g. "90", from the visible GPUs
  /// `-DCMAKE_C_COMPILER=…` style arguments for the values that are set.
  std::vector<std::string> cmake_args() const;
  bool operator==(const CompilerConfig&) const = default;
};

}  // namespace mainboard
