// Where each device of interest sits on PCIe, from sysfs alone, for any vendor
// (Documentation/ABI/testing/sysfs-bus-pci). Every function is a link in /sys/bus/pci/devices
// into the device tree:
//
//   0000:19:00.0 -> ../../../devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:00.0/0000:19:00.0
//
// the host bridge first (pci0000:16), then the bridges down to the function: the root port, and
// for each PCIe switch its upstream and downstream ports. In the function's directory: class
// (0x030200), vendor, device, the driver link, numa_node (-1 where the firmware does not say)
// and local_cpulist; a network function lists its interfaces in net/ and its RDMA devices in
// infiniband/, an NVMe controller its name in nvme/.
#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/fs.hpp"
#include "core/text.hpp"
#include "host/readers.hpp"

namespace mainboard::host {

namespace {

constexpr const char* kPciDevicesDir = "/sys/bus/pci/devices";

bool pci_topo_is_address(std::string_view s) {
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (std::size_t i : {0u, 1u, 2u, 3u, 5u, 6u, 8u, 9u, 11u})
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

/// "0x10de" as sysfs writes it, or empty when the file is missing or not one hex number.
std::string pci_topo_hex_id(const core::Fs& fs, const std::string& path) {
  auto line = fs.read_line(path);
  if (!line || line->size() < 3 || line->size() > 10 || !core::starts_with(*line, "0x")) return {};
  if (!core::parse_u64_base(line->substr(2), 16)) return {};
  return core::to_lower(*line);
}

/// Display controllers that are no GPU: the BMC's VGA on a server board.
bool pci_topo_bmc_display(const std::string& vendor) {
  return vendor == "0x1a03"      // ASPEED (AST2x00)
         || vendor == "0x102b"   // Matrox (G200 on server boards)
         || vendor == "0x19e5";  // Huawei (Hi171x BMC)
}

/// The kind of device a PCI class is, or empty for one we do not list (bridges, audio
/// functions of GPUs, USB, ...). PCI Code and ID Assignment Specification, Appendix D.
std::string pci_topo_kind(std::uint32_t cls, const std::string& vendor) {
  std::uint32_t base_sub = cls >> 8;
  if (base_sub == 0x0300 || base_sub == 0x0302) return pci_topo_bmc_display(vendor) ? "" : "gpu";
  if (base_sub == 0x1200) return "npu";
  if (base_sub == 0x0207) return "infiniband";
  if (base_sub == 0x0200) return "ethernet";
  if (cls == 0x010802) return "nvme";
  return {};
}

/// The first name listed in `dir` that is not hidden, or empty.
std::string pci_topo_first_name(const core::Fs& fs, const std::string& dir) {
  for (const auto& name : fs.list(dir))
    if (!name.empty() && name[0] != '.') return name;
  return {};
}

struct PciTopoPlace {
  std::string host_bridge;
  std::vector<std::string> bridges;
};

/// The host bridge and the bridges above `address` from its link's target, or why not.
std::optional<PciTopoPlace> pci_topo_place(const std::string& address, const std::string& target,
                                           std::string& why) {
  namespace fs = std::filesystem;
  fs::path t(target);
  fs::path full = (t.is_absolute() ? t : fs::path(kPciDevicesDir) / t).lexically_normal();
  std::vector<std::string> parts;
  for (const auto& p : full)
    if (p != "/" && !p.empty()) parts.push_back(p.string());
  if (parts.empty() || parts.back() != address) {
    why = "its link does not end in its address";
    return std::nullopt;
  }
  // Up from the function: PCI addresses are bridges, the first other name the host bridge
  // (pci0000:16; a Hyper-V or VMD domain names it otherwise).
  PciTopoPlace place;
  std::size_t i = parts.size() - 1;
  while (i > 0 && pci_topo_is_address(parts[i - 1]))
    place.bridges.push_back(parts[--i]);
  if (i == 0 || parts[i - 1] == "devices" || parts[i - 1] == "sys") {
    why = "no host bridge above it in its link";
    return std::nullopt;
  }
  place.host_bridge = parts[i - 1];
  std::reverse(place.bridges.begin(), place.bridges.end());
  return place;
}

}  // namespace

Reading<PciTopology> read_pci(const Sources& sources, const MachineSnapshot&, Note& note) {
  const core::Fs& fs = *sources.fs;
  auto entries = fs.list(kPciDevicesDir);
  if (entries.empty()) {
    std::string why = fs.exists(kPciDevicesDir)
                          ? "/sys/bus/pci/devices lists no device"
                          : "no /sys/bus/pci/devices (not Linux, or a host without PCI)";
    note.unsupported(why);
    return Reading<PciTopology>::none(std::move(why));
  }
  std::vector<PciDevice> found;
  std::vector<std::string> skipped;
  for (const auto& address : entries) {
    if (!pci_topo_is_address(address)) continue;
    std::string dir = std::string(kPciDevicesDir) + "/" + address;
    auto target = fs.readlink(dir);
    if (!target) {
      skipped.push_back(address + " (not a link into the device tree)");
      continue;
    }
    auto class_line = fs.read_line(dir + "/class");
    std::optional<std::uint64_t> cls;
    if (class_line && core::starts_with(*class_line, "0x") && class_line->size() <= 8)
      cls = core::parse_u64_base(class_line->substr(2), 16);
    if (!cls) {
      skipped.push_back(address + (class_line ? " (class not a number)" : " (no class)"));
      continue;
    }
    PciDevice d;
    d.vendor_id = pci_topo_hex_id(fs, dir + "/vendor");
    d.kind = pci_topo_kind(static_cast<std::uint32_t>(*cls), d.vendor_id);
    if (d.kind.empty()) continue;
    std::string why;
    auto place = pci_topo_place(address, *target, why);
    if (!place) {
      skipped.push_back(address + " (" + why + ")");
      continue;
    }
    d.address = core::to_lower(address);
    d.host_bridge = place->host_bridge;
    d.bridges = place->bridges;
    d.device_id = pci_topo_hex_id(fs, dir + "/device");
    d.driver = fs.link_name(dir + "/driver").value_or("");
    // -1: no NUMA in the kernel, or no proximity domain from the firmware (ACPI _PXM).
    if (auto node = fs.read_i64(dir + "/numa_node"); node && *node >= 0 && *node < 65536)
      d.numa_node = static_cast<std::int32_t>(*node);
    if (auto cpus = fs.read_line(dir + "/local_cpulist"))
      d.cpus = core::parse_cpu_list(*cpus).value_or(std::vector<std::uint32_t>{});
    if (d.kind == "ethernet" || d.kind == "infiniband") {
      // An RDMA device on it (an InfiniBand HCA, or a RoCE adapter): named as the verbs name it.
      std::string rdma = pci_topo_first_name(fs, dir + "/infiniband");
      if (!rdma.empty() && d.kind == "ethernet") d.kind = "roce";
      d.name = !rdma.empty() ? rdma : pci_topo_first_name(fs, dir + "/net");
      // A virtio adapter's interface hangs from its virtio device: ADDR/virtio0/net/eth0.
      if (d.name.empty())
        for (const auto& sub : fs.list(dir))
          if (core::starts_with(sub, "virtio") && d.name.empty())
            d.name = pci_topo_first_name(fs, dir + "/" + sub + "/net");
    } else if (d.kind == "nvme") {
      d.name = pci_topo_first_name(fs, dir + "/nvme");
    }
    if (d.name.empty()) d.name = d.address;
    found.push_back(std::move(d));
  }
  // GPUs, NPUs, network adapters, NVMe drives; each by address (nvidia-smi's default order).
  auto group = [](const PciDevice& d) {
    return d.kind == "gpu" ? 0 : d.kind == "npu" ? 1 : d.kind == "nvme" ? 3 : 2;
  };
  std::stable_sort(found.begin(), found.end(), [&](const PciDevice& a, const PciDevice& b) {
    return std::pair(group(a), a.address) < std::pair(group(b), b.address);
  });
  int gpus = 0, npus = 0;
  for (auto& d : found) {
    if (d.kind == "gpu") d.name = "GPU" + std::to_string(gpus++);
    if (d.kind == "npu") d.name = "NPU" + std::to_string(npus++);
  }
  if (!skipped.empty()) {
    std::string list;
    for (const auto& s : skipped)
      list += (list.empty() ? "" : ", ") + s;
    note.reason = "skipped " + list;
  }
  return PciTopology{std::move(found)};
}

}  // namespace mainboard::host
