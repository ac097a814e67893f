// `mainboard gather DIR`: what mainboard reads on this host, copied for --sysroot elsewhere.
#include <cstdio>

#include "cli/commands.hpp"

namespace mainboard::cli {

void Gather::declare(CLI::App& cmd) {
  cmd.add_option("DIR", dir, "where to write the tree")->required();
  cmd.add_option("--hostname", options.hostname, "the hostname the tree reports")
      ->capture_default_str();
  cmd.add_flag("--force", options.force, "write into a directory that is not empty");
}

int Gather::run(const Global& g) {
  options.sysroot = g.sysroot;  // --sysroot: gather a recorded host again
  auto report = gather_host(dir, options);
  std::fprintf(stderr,
               "mainboard: gathered %zu files (and %zu empty ones the probes only looked for) and "
               "%zu command outputs into %s, with the recording in %s/.mainboard\n",
               report.files, report.empty_files, report.commands, dir.c_str(), dir.c_str());
  for (const auto& note : report.notes)
    std::fprintf(stderr, "mainboard: %s\n", note.c_str());
  std::fprintf(stderr, "mainboard: replay with: MAINBOARD_SYSROOT=%s mainboard snapshot\n",
               dir.c_str());
  return 0;
}

}  // namespace mainboard::cli
