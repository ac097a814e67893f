// `mainboard snapshot`: the whole machine, as a summary or the JSON document.
#include "cli/commands.hpp"
#include "mainboard/json.hpp"
#include "view/summary.hpp"

namespace mainboard::cli {

void Snapshot::declare(CLI::App& cmd) {
  cmd.add_flag("--json", json, "the full snapshot as JSON on stdout");
  cmd.add_flag("--no-toolchain", no_toolchain, "skip the compiler and build tool probe");
  cmd.add_option("-o,--output", output, "write the JSON snapshot to this file")->type_name("FILE");
}

std::string Snapshot::complete(const CLI::App&, std::vector<std::string>) {
  return check_outputs({{"-o", output}});
}

int Snapshot::run(const Global& g) {
  Machine machine(machine_options(g));
  SnapshotOptions opts;
  opts.toolchain = !no_toolchain;
  auto snap = machine.snapshot(opts);
  if (json || !output.empty()) {
    emit_json(snap, output);
  } else {
    view::Style style{view::want_color(g.color, 1)};
    print(view::render_summary(snap, style), style.color);
  }
  return 0;
}

}  // namespace mainboard::cli
