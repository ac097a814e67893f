#pragma once

// What every place that starts a program shares: how a name becomes a file (the runner's
// probes, `mainboard meter`, `mainboard profile run`) and how a wait status becomes an exit
// code. One rule each, so that the commands cannot start different programs for one name or
// report one ending two ways.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mainboard::core {

/// A regular file this process may execute.
bool executable_file(const std::string& file);

/// The file `name` runs, as execvp(3) and a shell find it: a name with a '/' is a path (made
/// absolute); otherwise the first regular, executable file in the directories of `path` (the
/// PATH value), where an empty entry means the current directory and a relative entry is
/// relative to it. Empty when there is none.
std::optional<std::string> find_program(std::string_view name, std::string_view path);

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
