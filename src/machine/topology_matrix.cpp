#include "mainboard/topology_matrix.hpp"

#include <algorithm>
#include <cctype>

namespace mainboard {

namespace {

/// "dddd:bb:dd.f": what a directory of a PCI function is named in sysfs.
bool topo_is_pci_address(const std::string& s) {
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (std::size_t i : {0u, 1u, 2u, 3u, 5u, 6u, 8u, 9u, 11u})
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

int topo_rank(const TopologyCell& c) {
  return static_cast<int>(c.path);
}

}  // namespace

std::string to_string(const TopologyCell& cell) {
  switch (cell.path) {
    case PciPath::self: return "X";
    case PciPath::nvlink: return "NV" + std::to_string(cell.nvlinks);
    case PciPath::pix: return "PIX";
    case PciPath::pxb: return "PXB";
    case PciPath::phb: return "PHB";
    case PciPath::node: return "NODE";
    case PciPath::sys: return "SYS";
    case PciPath::unknown: break;
  }
  return "N/A";
}

std::vector<std::string> pci_switches(const PciDevice& device) {
  // bridges: the root port first, then for each switch its upstream port and the downstream
  // port below it. From the device, two steps up reach a switch's upstream port; one step up
  // from the root port is the host bridge, where the walk stops (NCCL's rule).
  const auto& b = device.bridges;
  std::vector<std::string> out;
  for (std::size_t i = b.size(); i >= 2; i -= 2) {
    if (!topo_is_pci_address(b[i - 2])) break;
    out.push_back(b[i - 2]);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

TopologyCell pci_path(const PciDevice& a, const PciDevice& b, std::uint32_t numa_nodes) {
  if (a.address == b.address) return {PciPath::self, 0};
  if (a.host_bridge.empty() || b.host_bridge.empty()) return {PciPath::unknown, 0};
  if (a.host_bridge != b.host_bridge) {
    if (a.numa_node && b.numa_node)
      return {*a.numa_node == *b.numa_node ? PciPath::node : PciPath::sys, 0};
    // numa_node -1: a kernel without NUMA, or firmware that does not say (no ACPI _PXM).
    return {numa_nodes == 1 ? PciPath::node : PciPath::unknown, 0};
  }
  auto sa = pci_switches(a), sb = pci_switches(b);
  std::size_t common = 0;
  while (common < sa.size() && common < sb.size() && sa[common] == sb[common])
    ++common;
  if (common == 0) return {PciPath::phb, 0};
  // The switches on the way: those below the deepest common one on each side, and that one.
  std::size_t crossed = (sa.size() - common) + (sb.size() - common) + 1;
  return {crossed == 1 ? PciPath::pix : PciPath::pxb, 0};
}

TopologyMatrix topology_matrix(const PciTopology& pci, const NvLinkCounts& nvlinks,
                               std::uint32_t numa_nodes) {
  TopologyMatrix m;
  m.devices = pci.devices;
  const auto& d = m.devices;
  m.cells.assign(d.size(), std::vector<TopologyCell>(d.size()));
  for (std::size_t i = 0; i < d.size(); ++i)
    for (std::size_t j = 0; j < d.size(); ++j) {
      TopologyCell cell = pci_path(d[i], d[j], numa_nodes);
      if (i != j && d[i].kind == "gpu" && d[j].kind == "gpu") {
        auto key = std::minmax(d[i].address, d[j].address);
        auto it = nvlinks.find({key.first, key.second});
        if (it != nvlinks.end() && it->second > 0) cell = {PciPath::nvlink, it->second};
      }
      m.cells[i][j] = cell;
    }
  return m;
}

bool is_rdma_nic(const PciDevice& device) {
  return device.kind == "infiniband" || device.kind == "roce";
}

std::vector<NearestNic> nearest_nics(const TopologyMatrix& matrix, bool rdma_only) {
  std::vector<NearestNic> out;
  const auto& d = matrix.devices;
  for (std::size_t g = 0; g < d.size(); ++g) {
    if (d[g].kind != "gpu") continue;
    std::optional<std::size_t> best;
    for (std::size_t n = 0; n < d.size(); ++n) {
      bool nic = is_rdma_nic(d[n]) || d[n].kind == "ethernet";
      if (!nic || (rdma_only && !is_rdma_nic(d[n]))) continue;
      if (!best) {
        best = n;
        continue;
      }
      int now = topo_rank(matrix.cells[g][n]), was = topo_rank(matrix.cells[g][*best]);
      if (now < was || (now == was && is_rdma_nic(d[n]) && !is_rdma_nic(d[*best]))) best = n;
    }
    if (best) out.push_back({d[g].name, d[*best].name, d[*best].kind, matrix.cells[g][*best]});
  }
  return out;
}

}  // namespace mainboard
