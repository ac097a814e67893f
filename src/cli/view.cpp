// `mainboard` with no command: the schematic of the machine.
#include "mainboard/view.hpp"
#include "cli/commands.hpp"
#include "view/summary.hpp"

namespace mainboard::cli {

int View::run(const Global& g) {
  Machine machine(machine_options(g));
  ViewOptions options;
  options.color = view::want_color(g.color, 1);
  options.width = g.width > 0 ? g.width : terminal_width(1);
  MachineView::of(machine).print(options);
  return 0;
}

}  // namespace mainboard::cli
