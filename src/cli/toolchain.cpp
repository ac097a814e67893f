// `mainboard toolchain`: compilers and build tools, and the CMake arguments for them.
#include <cstdio>

#include "cli/commands.hpp"
#include "core/text.hpp"
#include "mainboard/json.hpp"
#include "view/summary.hpp"

namespace mainboard::cli {

void Toolchain::declare(CLI::App& cmd) {
  cmd.add_flag("--json", json, "as JSON");
  cmd.add_flag("--cmake", cmake, "only the -D arguments for CMake, on one line");
}

int Toolchain::run(const Global& g) {
  Machine machine(machine_options(g));
  const auto& tc = machine.toolchain();
  const auto& cfg = machine.compilers();
  if (cmake) {
    // Quoted for a shell: pasted after `cmake`, or `eval cmake -S . "$(mainboard toolchain
    // --cmake)"` (a ';' in a list of CUDA architectures would end the command unquoted).
    print(core::shell_quote(cfg.cmake_args()) + "\n");
    if (auto note = machine.cuda_stack().toolkit_newer_than_driver(); !note.empty())
      std::fprintf(stderr, "mainboard: warning: %s\n", note.c_str());  // stdout stays arguments
    return 0;
  }
  if (json) {
    nlohmann::json j = {{"toolchain", tc}, {"compilers", cfg}};
    print_json(j);
    return 0;
  }
  view::Style style{view::want_color(g.color, 1)};
  print(view::render_toolchain(tc, cfg, style, machine.cuda_stack().toolkit_newer_than_driver()),
        style.color);
  return 0;
}

}  // namespace mainboard::cli
