// The mainboard command: parses (cli.hpp's table of commands), then runs what was parsed.
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include "cli/cli.hpp"

int main(int argc, char** argv) {
  auto parsed = mainboard::cli::parse(std::vector<std::string>(argv + 1, argv + argc));
  if (auto* exit = std::get_if<mainboard::cli::Exit>(&parsed)) {
    std::fwrite(exit->out.data(), 1, exit->out.size(), stdout);
    std::fwrite(exit->err.data(), 1, exit->err.size(), stderr);
    return exit->code;
  }
  return mainboard::cli::run(std::get<mainboard::cli::Parsed>(parsed));
}
