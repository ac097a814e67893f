#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mainboard/export.hpp"

namespace mainboard {

/// One external command: an argv vector (never a shell string), with a deadline.
struct MAINBOARD_API Command {
  std::vector<std::string> argv;
  std::chrono::milliseconds timeout{5000};
  /// At the deadline the command's process group gets SIGTERM and this long to end before
  /// SIGKILL; zero (the default) is SIGKILL at once. For a program that must clean up what it
  /// holds outside itself: srun, killed outright, leaves its Slurm job allocated.
  std::chrono::milliseconds stop_grace{0};
  /// Output beyond this many bytes per stream is discarded and `truncated` is set.
  std::size_t max_output_bytes = 4u << 20;
  /// Changes to the inherited environment: a value sets the variable, an empty optional
  /// removes it.
  std::map<std::string, std::optional<std::string>> environment;
};

struct MAINBOARD_API CommandResult {
  bool started = false;    ///< the program could be found and started
  bool timed_out = false;  ///< killed at the deadline
  bool truncated = false;  ///< output exceeded max_output_bytes
  int exit_code = -1;      ///< its exit status, 128 + the signal when one ended it, -1 if not run
  int signal = 0;          ///< terminating signal when it was killed
  std::string out;         ///< captured stdout
  std::string err;         ///< captured stderr
  std::string error;       ///< why it could not be started, if it was not

  bool ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
};

/// The seam through which every external program is found and run. The live implementation
/// spawns processes; tests and recorded hosts answer from a table.
class MAINBOARD_API Runner {
 public:
  virtual ~Runner() = default;

  /// Absolute path of an executable found on this runner's PATH, if any.
  virtual std::optional<std::string> find_executable(std::string_view name) const = 0;

  /// Runs every command concurrently and returns their results in the same order.
  virtual std::vector<CommandResult> run_all(const std::vector<Command>& commands) const = 0;

  /// The program a launcher at `path` runs, where that can be told without running it (a pyenv
  /// shim: the interpreter it selects); empty otherwise. A probe of a version runs that program
  /// instead, and a cache keys on it: the shim's own file does not change when the selection does.
  virtual std::optional<std::string> launched_program(const std::string& path) const;

  /// The search path (PATH's value) this runner finds executables on, where those are this
  /// host's files; empty for a runner that answers from elsewhere.
  virtual std::optional<std::string> search_path() const { return std::nullopt; }

  CommandResult run(const Command& command) const;
};

/// Spawns real processes (posix_spawn, no shell) with stdin from /dev/null, LC_ALL=C, and
/// stdout/stderr captured; kills a command's whole process group at its deadline.
class MAINBOARD_API LocalRunner final : public Runner {
 public:
  /// `path` is the search path (the PATH variable's value) used to find executables, searched as
  /// a shell searches it (an empty entry is the current directory).
  explicit LocalRunner(std::string path);
  std::optional<std::string> find_executable(std::string_view name) const override;
  std::vector<CommandResult> run_all(const std::vector<Command>& commands) const override;
  std::optional<std::string> launched_program(const std::string& path) const override;
  std::optional<std::string> search_path() const override { return path_; }

 private:
  std::string path_;
};

/// Answers from recorded outputs: which executables exist and what each argv printed.
/// An argv that was not recorded reads as a program that could not be started.
class MAINBOARD_API ReplayRunner final : public Runner {
 public:
  struct Entry {
    std::vector<std::string> argv;
    CommandResult result;
  };
  ReplayRunner(std::map<std::string, std::string> executables, std::vector<Entry> entries);
  std::optional<std::string> find_executable(std::string_view name) const override;
  std::vector<CommandResult> run_all(const std::vector<Command>& commands) const override;

 private:
  std::map<std::string, std::string, std::less<>> executables_;
  std::vector<Entry> entries_;
};

}  // namespace mainboard
