#pragma once

// What every place that starts a program shares: how a name becomes a file (the runner's
// probes, `mainboard meter`, `mainboard profile run`) and how a wait status becomes an exit
// code. One rule each, so that the commands cannot start different programs for one name or
// report one ending two ways.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mainboard::core {

/// The PIDs of "NSpid:" in a /proc/PID/status text, outermost first (the /proc mount's PID
/// namespace, then each one down to the process's own); empty when missing or malformed.
std::vector<std::uint32_t> parse_nspid(const std::string& status);

/// A regular file this process may execute.
bool executable_file(const std::string& file);

/// The file `name` runs, as execvp(3) and a shell find it: a name with a '/' is a path (made
/// absolute); otherwise the first regular, executable file in the directories of `path` (the
/// PATH value), where an empty entry means the current directory and a relative entry is
/// relative to it. Empty when there is none.
std::optional<std::string> find_program(std::string_view name, std::string_view path);

/// find_program with a memory of absences, for a probe that looks for the same few dozen names
/// at every run: which of them each PATH directory held, kept with the directory's mtime. A name
/// appears in a directory only by a change of that directory, so while its mtime stays, a name it
/// did not hold is not looked for there again (one stat of the directory instead of one per name
/// and directory). A name it held is checked as find_program checks it. A directory changed
/// within a second before it was read is read again (a change in the same tick would not show
/// in its mtime); relative entries (the current directory) are never remembered.
class PathIndex {
 public:
  struct Directory {
    std::int64_t mtime_ns = 0;  ///< the directory's mtime when its names were read
    std::int64_t read_ns = 0;   ///< when they were read (the wall clock)
    /// Each name asked and whether it was there, sorted by name: a few dozen short names per
    /// directory, read from the cache at every start, where a node per name cost an allocation
    /// each (most names fit in a string's own storage).
    std::vector<std::pair<std::string, bool>> names;
    /// The entry for `name`, or nullptr.
    const std::pair<std::string, bool>* lookup(std::string_view name) const;
    /// Adds `name` (not there yet) in its place.
    const std::pair<std::string, bool>& insert(std::string_view name, bool held);
    /// Sorts `names` after they were appended in any order (quickly when they are two sorted
    /// runs); of a name given twice, the first is kept.
    void sort();
  };
  /// As find_program(name, path).
  std::optional<std::string> find(std::string_view name, std::string_view path);
  /// What is remembered, by directory; read from and saved to a cache by its owner (filled
  /// before the first find: find keeps pointers to its records).
  std::map<std::string, Directory, std::less<>> directories;
  /// Whether find() learned something since this object was made or the last call.
  bool take_changed() { return std::exchange(changed_, false); }

 private:
  // The search path last asked about, its entries looked at once: an absolute directory's
  // record, or none for a relative entry (looked at each time) or what is not a directory.
  struct Entry {
    std::string dir;
    bool relative = false;
    Directory* known = nullptr;
  };
  const std::vector<Entry>& entries(std::string_view path);
  std::map<std::string, Directory*, std::less<>> looked_;  // statted: its record, or none
  std::optional<std::string> path_;                        // the search path entries_ is of
  std::vector<Entry> entries_;
  bool changed_ = false;
};

/// Why find_program found nothing for `name`: "not found on PATH", "no such file", "is a
/// directory" or "not an executable file".
std::string not_found_reason(std::string_view name);

/// Throws mainboard::Error when an argument holds a NUL byte: the program would be given the
/// argument cut at it ("a\0b" as "a"), which is never what was meant.
void check_arguments(const std::vector<std::string>& argv);

/// Throws mainboard::CommandError for a program find_program did not find: "cannot run NAME:
/// REASON", exit code 127 (nothing of that name) or 126 (there, but not executable), as shells.
[[noreturn]] void throw_not_runnable(std::string_view name);
/// Throws mainboard::CommandError for an exec of `name` that failed with `error` (errno):
/// 127 for ENOENT (also a missing interpreter of a script), else 126.
[[noreturn]] void throw_exec_failed(std::string_view name, int error);

/// How a process ended, from its wait status.
struct ExitStatus {
  int exit_code = -1;  ///< its status, or 128 + the signal when a signal ended it (as a shell says)
  int signal = 0;      ///< the signal that ended it; 0 when it exited
};
ExitStatus exit_status(int wait_status);

}  // namespace mainboard::core
