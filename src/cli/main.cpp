// The mainboard command: parses (cli.hpp's table of commands), then runs what was parsed.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "cli/cli.hpp"
#include "cli/common.hpp"

namespace {

/// The command's status, unless its output could not all be written (a full disk, a file too
/// large): then that is the error, as for cat, not a success over a cut-off file.
int written(int code) {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return code;
  int why = errno ? errno : mainboard::cli::first_write_errno();
  std::fprintf(stderr, "mainboard: error: the output could not be written: %s\n",
               why ? std::strerror(why) : "write error");
  return code == 0 ? 1 : code;
}

}  // namespace

int main(int argc, char** argv) {
  auto parsed = mainboard::cli::parse(std::vector<std::string>(argv + 1, argv + argc));
  if (auto* exit = std::get_if<mainboard::cli::Exit>(&parsed)) {
    mainboard::cli::write_out(exit->out.data(), exit->out.size(), stdout);
    // A usage error may quote what was typed: shown, not obeyed.
    mainboard::cli::print(exit->err, false, stderr);
    return written(exit->code);
  }
  return written(mainboard::cli::run(std::get<mainboard::cli::Parsed>(parsed)));
}
