// `mainboard gpus`: every GPU and NPU, identity and a telemetry reading each.
#include "view/gpus.hpp"
#include "cli/commands.hpp"
#include "mainboard/json.hpp"

namespace mainboard::cli {

void Gpus::declare(CLI::App& cmd) {
  cmd.add_flag("--json", json, "as JSON, with the CUDA stack and the providers' diagnostics");
}

int Gpus::run(const Global& g) {
  Machine machine(machine_options(g));
  std::vector<GpuSnapshot> gpus;
  for (const auto& gpu : machine.gpus())
    gpus.push_back(gpu->gpu_snapshot());
  std::vector<NpuSnapshot> npus;
  for (const auto& npu : machine.npus())
    npus.push_back(npu->npu_snapshot());
  const auto& cuda = machine.cuda_stack();
  if (json) {
    std::vector<Diagnostic> diagnostics;
    for (const auto& d : machine.identity_diagnostics())
      if (d.probe.rfind("gpu:", 0) == 0 || d.probe.rfind("npu:", 0) == 0 || d.probe == "cuda")
        diagnostics.push_back(d);
    nlohmann::json j = {
        {"gpus", gpus}, {"npus", npus}, {"cuda", cuda}, {"diagnostics", diagnostics}};
    print_json(j);
    return 0;
  }
  view::Style style{view::want_color(g.color, 1)};
  print(view::render_gpus(gpus, npus, cuda, style), style.color);
  return 0;
}

}  // namespace mainboard::cli
