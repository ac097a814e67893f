#pragma once

// Where the host's devices sit on PCIe: every GPU, NPU, InfiniBand/RoCE and Ethernet adapter and
// NVMe drive, with the bridges above it, its NUMA node and its CPUs, read from sysfs alone; and
// the path between each pair as `nvidia-smi topo -m` names it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/export.hpp"

namespace mainboard {

/// One device of interest on PCIe.
struct MAINBOARD_API PciDevice {
  std::string name;       ///< GPU0, NPU0, mlx5_0, ens1f0, nvme0
  std::string kind;       ///< gpu, npu, infiniband, ethernet, nvme
  std::string address;    ///< 0000:17:00.0
  std::string vendor_id;  ///< 0x10de
  std::string device_id;
  std::string driver;
  std::optional<std::int32_t> numa_node;
  std::vector<std::uint32_t> cpus;  ///< local_cpulist
  /// The host bridge it hangs from (pci0000:16) and the bridges between, top first.
  std::string host_bridge;
  std::vector<std::string> bridges;
  bool operator==(const PciDevice&) const = default;
};

template <class V>
void fields(V& v, PciDevice& m) {
  v("name", m.name);
  v("kind", m.kind);
  v("address", m.address);
  v("vendor_id", m.vendor_id);
  v("device_id", m.device_id);
  v("driver", m.driver);
  v("numa_node", m.numa_node);
  v("cpus", m.cpus);
  v("host_bridge", m.host_bridge);
  v("bridges", m.bridges);
}

/// The devices of interest, in the order `topo` lists them (GPUs, NPUs, NICs, NVMe, each by
/// address). Unavailable where /sys/bus/pci cannot be read.
struct MAINBOARD_API PciTopology {
  std::vector<PciDevice> devices;
  bool operator==(const PciTopology&) const = default;
};

template <class V>
void fields(V& v, PciTopology& m) {
  v("devices", m.devices);
}

}  // namespace mainboard
