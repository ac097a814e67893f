// `mainboard topo`: the path between every GPU, NPU, network adapter and NVMe drive on PCIe,
// as `nvidia-smi topo -m` prints it, with each device's CPU and NUMA affinity.
#include "cli/commands.hpp"
#include "core/text.hpp"
#include "mainboard/json.hpp"
#include "mainboard/topology_matrix.hpp"
#include "view/topology_text.hpp"

namespace mainboard::cli {

void Topo::declare(CLI::App& cmd) {
  cmd.add_flag("--json", json, "the devices and the matrix as JSON");
}

/// Exit status: 0 with the matrix, 1 when the PCI devices could not be read.
int Topo::run(const Global& g) {
  Machine machine(machine_options(g));
  auto pci = machine.reading("pci").pci;
  std::uint32_t numa_nodes = machine.reading("cpu").cpu.info.numa_nodes;
  // NV#: what each GPU's NVLinks reach (its identity and link health only: no telemetry).
  std::vector<GpuSnapshot> gpus;
  for (const auto& gpu : machine.gpus()) {
    GpuSnapshot s;
    s.info = gpu->info();
    s.health = gpu->health();
    gpus.push_back(std::move(s));
  }
  auto matrix = topology_matrix(pci.or_empty(), nvlink_counts(gpus), numa_nodes);
  if (json) {
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& row : matrix.cells) {
      nlohmann::json r = nlohmann::json::array();
      for (const auto& c : row)
        r.push_back(to_string(c));
      cells.push_back(r);
    }
    nlohmann::json j = {{"devices", matrix.devices}, {"matrix", cells}};
    if (!pci) j["unavailable"] = pci.reason();
    print_json(j);
    return pci ? 0 : 1;
  }
  if (!pci) {
    std::fprintf(stderr, "mainboard: error: no PCI topology: %s\n",
                 core::terminal_text(pci.reason()).c_str());
    return 1;
  }
  view::Style style{view::want_color(g.color, 1)};
  print(view::render_topology(matrix, style), style.color);
  return 0;
}

}  // namespace mainboard::cli
