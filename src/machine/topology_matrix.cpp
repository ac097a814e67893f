#include "mainboard/topology_matrix.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>

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

std::string sysfs_pci_address(std::string_view bus_id) {
  // domain:bus:device.function, the domain of any width (NVML 8 digits, CUDA and sysfs 4).
  auto colon = bus_id.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 8) return "";
  auto hex = [](std::string_view part, std::size_t most) -> std::optional<unsigned> {
    unsigned v = 0;
    const char* end = part.data() + part.size();
    if (part.empty() || part.size() > most) return std::nullopt;
    auto [stop, ec] = std::from_chars(part.data(), end, v, 16);
    if (ec != std::errc() || stop != end) return std::nullopt;
    return v;
  };
  auto rest = bus_id.substr(colon + 1);  // "13:00.0"
  if (rest.size() != 7 || rest[2] != ':' || rest[5] != '.') return "";
  auto domain = hex(bus_id.substr(0, colon), 8), bus = hex(rest.substr(0, 2), 2),
       device = hex(rest.substr(3, 2), 2), function = hex(rest.substr(6, 1), 1);
  if (!domain || !bus || !device || !function || *device > 0x1f || *function > 7) return "";
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", *domain, *bus, *device, *function);
  return out;
}

NvLinkCounts nvlink_counts(const std::vector<GpuSnapshot>& gpus) {
  std::map<std::pair<std::string, std::string>, std::uint32_t> direct;  // as each side counts
  std::map<std::string, std::uint32_t> to_switches;
  std::vector<std::string> addresses;
  for (const auto& g : gpus)
    addresses.push_back(sysfs_pci_address(g.info.pci_bus_id));
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const auto& self = addresses[i];
    if (self.empty() || !gpus[i].health) continue;
    for (const auto& link : gpus[i].health->links) {
      if (!link.active) continue;
      std::string far = link.remote_pci_bus_id ? sysfs_pci_address(*link.remote_pci_bus_id) : "";
      bool to_gpu = !far.empty() && far != self &&
                    std::find(addresses.begin(), addresses.end(), far) != addresses.end() &&
                    link.remote_kind.value_or("gpu") == "gpu";
      if (to_gpu)
        ++direct[{self, far}];
      else if (link.remote_kind == "switch")
        ++to_switches[self];
    }
  }
  NvLinkCounts out;
  for (const auto& [pair, n] : direct) {
    auto key = std::minmax(pair.first, pair.second);
    auto& count = out[{key.first, key.second}];
    count = std::max(count, n);
  }
  for (auto a = to_switches.begin(); a != to_switches.end(); ++a)
    for (auto b = std::next(a); b != to_switches.end(); ++b)
      out[{a->first, b->first}] += std::min(a->second, b->second);  // map order: a < b
  return out;
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
