// The mainboard command: parses (cli.hpp's table of commands), then runs what was parsed.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "cli/cli.hpp"

namespace {

/// The command's status, unless its output could not all be written (a full disk, a file too
/// large): then that is the error, as for cat, not a success over a cut-off file.
int written(int code) {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return code;
  std::fprintf(stderr, "mainboard: error: the output could not be written: %s\n",
               errno ? std::strerror(errno) : "write error");
  return code == 0 ? 1 : code;
}

}  // namespace

int main(int argc, char** argv) {
  auto parsed = mainboard::cli::parse(std::vector<std::string>(argv + 1, argv + argc));
  if (auto* exit = std::get_if<mainboard::cli::Exit>(&parsed)) {
    std::fwrite(exit->out.data(), 1, exit->out.size(), stdout);
    // A usage error may quote what was typed: shown, not obeyed.
    mainboard::cli::print(exit->err, false, stderr);
    return written(exit->code);
  }
  return written(mainboard::cli::run(std::get<mainboard::cli::Parsed>(parsed)));
}
