#include "view/topology_text.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace mainboard::view {

namespace {

std::string topo_pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

}  // namespace

std::string cpu_list_text(const std::vector<std::uint32_t>& cpus) {
  if (cpus.empty()) return "N/A";
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
      ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string render_topology(const TopologyMatrix& m, const Style& style) {
  const auto& d = m.devices;
  if (d.empty()) return "No GPU, NPU, network adapter or NVMe drive found on PCIe.\n";
  std::vector<std::string> names;
  std::size_t first = 0, column = 5;
  for (const auto& dev : d) {
    names.push_back(core::terminal_text(dev.name));
    first = std::max(first, names.back().size());
    column = std::max(column, names.back().size() + 1);
  }
  first += 2;
  std::string out = std::string(first, ' ');
  for (const auto& n : names)
    out += style.label(topo_pad(n, column));
  out += style.label("CPU Affinity") + "  " + style.label("NUMA Affinity") + "\n";
  for (std::size_t i = 0; i < d.size(); ++i) {
    out += style.label(topo_pad(names[i], first));
    for (std::size_t j = 0; j < d.size(); ++j)
      out += topo_pad(to_string(m.cells[i][j]), column);
    std::string affinity = cpu_list_text(d[i].cpus);
    out += topo_pad(affinity, std::max<std::size_t>(14, affinity.size() + 2));
    out += d[i].numa_node ? std::to_string(*d[i].numa_node) : std::string("N/A");
    out += "\n";
  }
  out +=
      "\nLegend:\n\n"
      "  X    = Self\n"
      "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA "
      "nodes (e.g., QPI/UPI)\n"
      "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host "
      "Bridges within a NUMA node\n"
      "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
      "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe "
      "Host Bridge)\n"
      "  PIX  = Connection traversing at most a single PCIe bridge\n"
      "  NV#  = Connection traversing a bonded set of # NVLinks\n"
      "  N/A  = Not known (a NUMA node the firmware does not give)\n";
  std::string legend;
  for (std::size_t i = 0; i < d.size(); ++i)
    if (d[i].kind != "gpu" && d[i].kind != "npu")
      legend +=
          "  " + names[i] + ": " + d[i].kind + " at " + core::terminal_text(d[i].address) + "\n";
  if (!legend.empty()) out += "\nDevices:\n\n" + legend;
  return out;
}

}  // namespace mainboard::view
