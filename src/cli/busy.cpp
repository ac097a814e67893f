// `mainboard busy` and `mainboard wait-idle`: is GPU N busy, and waiting until it is not.
#include <cstdio>
#include <string>

#include "cli/commands.hpp"

namespace mainboard::cli {

void Busy::declare(CLI::App& cmd) {
  cmd.add_option("--index", index, "which GPU (CUDA ordinal)")
      ->capture_default_str()
      ->type_name("N");
  cmd.add_option("--util", thresholds.util_pct, "busy above this compute utilization (%)")
      ->capture_default_str()
      ->check(number(0, 100))
      ->type_name("PCT");
  cmd.add_option("--memory", thresholds.memory_pct, "busy above this memory use (%)")
      ->capture_default_str()
      ->check(number(0, 100))
      ->type_name("PCT");
  if (!wait) return;
  cmd.add_option("--timeout", timeout_s, "give up after this many seconds")
      ->capture_default_str()
      ->check(number(0, kNoLimit))
      ->type_name("S");
  cmd.add_option("--interval", interval_s, "poll every this many seconds")
      ->capture_default_str()
      ->check(number(0, kNoLimit, true))
      ->type_name("S");
}

std::string Busy::complete(const CLI::App& cmd, std::vector<std::string>) {
  index_given = cmd.count("--index") > 0;
  return "";
}

/// Exit status: 0 idle, 1 busy (or still busy at the timeout), 2 no such GPU. Without --index,
/// a host without GPUs is idle (exit 0); a GPU asked for by index must exist.
int Busy::run(const Global& g) {
  Machine machine(machine_options(g));
  std::size_t count = machine.gpus().size();
  if ((count > 0 || index_given) && index >= count) {
    std::fprintf(stderr, "mainboard: error: no GPU %zu (this host has %s)\n", index,
                 count == 0 ? "none" : std::to_string(count).c_str());
    return 2;
  }
  if (wait) return wait_for_idle(machine, index, timeout_s, interval_s, thresholds) ? 0 : 1;
  return gpu_busy(machine, index, thresholds) ? 1 : 0;
}

}  // namespace mainboard::cli
