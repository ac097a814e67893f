// `mainboard check`: is this node ready for a benchmark or a job (docs/check.md).
#include "mainboard/check.hpp"
#include "cli/commands.hpp"
#include "mainboard/json.hpp"
#include "view/summary.hpp"

namespace mainboard::cli {

void Check::declare(CLI::App& cmd) {
  cmd.add_flag("--json", json, "the findings as JSON");
  cmd.add_flag("--strict", strict, "warnings count as not ready too");
}

/// Exit status: 0 ready, 1 not ready.
int Check::run(const Global& g) {
  Machine machine(machine_options(g));
  auto r = check_readiness(machine.snapshot({.toolchain = false}), strict);
  if (json) {
    nlohmann::json j = r;
    j["ready"] = r.ready();
    print_json(j);
  } else {
    bool color = view::want_color(g.color, 1);
    print(r.text(color), color);
  }
  return r.ready() ? 0 : 1;
}

}  // namespace mainboard::cli
