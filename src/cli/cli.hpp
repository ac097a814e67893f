// The command line of `mainboard`: the table of commands, parsing into a value, and running it.
// main() is parse() then run(); the tests call parse() in-process.
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "cli/commands.hpp"

namespace mainboard::cli {

/// One row of the table: a command (or a group of them, such as `profile`).
struct CommandInfo {
  const char* path;  ///< "snapshot", "profile run": the group's name, a space, the command's
  const char* help;  ///< one line, for --help
  /// Makes the command with its defaults; nullptr for a group, which only holds commands.
  std::unique_ptr<Command> (*make)();
  /// The command runs another (meter, profile run): it keeps the words after its options and
  /// after "--" for it, and takes the global options itself.
  bool runs_a_command = false;
  /// Words after "--" go to it (fleet passes them to srun).
  bool takes_dashes = false;
};

/// Every command, in the order --help lists them.
const std::vector<CommandInfo>& commands();

/// What parsing gave: the command to run, with its options and the global ones.
struct Parsed {
  Global global;
  const CommandInfo* info = nullptr;  ///< nullptr: no command was given (the schematic)
  std::unique_ptr<Command> command;
};

/// Parsing ended the run: help or the version (exit 0, on `out`) or a usage error (exit 2, on
/// `err`, with where to find the usage).
struct Exit {
  int code = 0;
  std::string out, err;
};

/// The arguments after the program's name.
std::variant<Parsed, Exit> parse(const std::vector<std::string>& args);

/// Runs what was parsed: the command's exit status, or the error mapped to one (1, or a signal's
/// 128+N, or 127/126 for a command that cannot be started), said on stderr.
int run(Parsed& parsed);

}  // namespace mainboard::cli
