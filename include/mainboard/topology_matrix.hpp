#pragma once

// The path between each pair of devices on PCIe, as `nvidia-smi topo -m` names it, computed
// from the PCI reading alone (mainboard/pci_topology.hpp): a pure function, shared by `topo`,
// `check` and the schematic.
//
// nvidia-smi's legend, and how each is decided here from the bridges above each device:
//
//   X     the device itself
//   NV#   a bonded set of # NVLinks (from what the GPUs' NVLinks reach: nvlink_counts below)
//   PIX   at most one PCIe switch between them (both under the same switch, no other switch on
//         the way)
//   PXB   several PCIe switches, but no host bridge crossed
//   PHB   through a PCIe host bridge: the same host bridge, not under a common switch
//   NODE  different host bridges of the same NUMA node
//   SYS   across NUMA nodes (QPI/UPI, Infinity Fabric between sockets)
//
// A switch is what NCCL makes of sysfs (src/graph/xml.cc, ncclTopoGetXmlFromSys): from a device
// go up two directories (past the downstream port it hangs from, to the switch's upstream port)
// while that is still a PCI address; the root port under the host bridge is no switch. NCCL has
// no NODE: it keeps one CPU node per NUMA node, so two host bridges of one node are PHB to it;
// we follow nvidia-smi there. Where a NUMA node is not known (numa_node -1, or not read) the
// path across host bridges is NODE on a host with one NUMA node, and unknown ("N/A") otherwise.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mainboard/export.hpp"
#include "mainboard/gpu.hpp"
#include "mainboard/pci_topology.hpp"

namespace mainboard {

/// How two devices reach each other, nearest first.
enum class PciPath { self, nvlink, pix, pxb, phb, node, sys, unknown };

struct MAINBOARD_API TopologyCell {
  PciPath path = PciPath::unknown;
  std::uint32_t nvlinks = 0;  ///< links bonded between the two, for PciPath::nvlink
  bool operator==(const TopologyCell&) const = default;
};

/// "X", "NV4", "PIX", "PXB", "PHB", "NODE", "SYS", "N/A".
MAINBOARD_API std::string to_string(const TopologyCell& cell);

/// NVLinks between two GPUs, keyed by their PCI addresses (lower case, the smaller first).
using NvLinkCounts = std::map<std::pair<std::string, std::string>, std::uint32_t>;

/// The NVLinks between each pair of GPUs, from each GPU's active links and what they reach
/// (GpuLink::remote_pci_bus_id, remote_kind). A link to the other GPU counts for that pair (the
/// more of the two GPUs' counts, where one of them could not say). Links to NVSwitches join
/// every two GPUs that have them, by as many as the fewer of the two has: nvidia-smi prints
/// NV18 between any two GPUs of a DGX H100. A link whose far end is not told counts for nothing.
MAINBOARD_API NvLinkCounts nvlink_counts(const std::vector<GpuSnapshot>& gpus);
/// A PCI address as sysfs writes it ("0000:13:00.0"), from NVML's ("00000000:13:00.0") or
/// CUDA's form; empty when it is none.
MAINBOARD_API std::string sysfs_pci_address(std::string_view bus_id);

/// The PCIe switches above a device, top first, each named by its upstream port's address.
MAINBOARD_API std::vector<std::string> pci_switches(const PciDevice& device);

/// The path between two devices over PCIe. `numa_nodes` is the host's count of NUMA nodes (0
/// when not known).
MAINBOARD_API TopologyCell pci_path(const PciDevice& a, const PciDevice& b,
                                    std::uint32_t numa_nodes = 0);

/// Every device against every other, in the reading's order.
struct MAINBOARD_API TopologyMatrix {
  std::vector<PciDevice> devices;
  std::vector<std::vector<TopologyCell>> cells;  ///< cells[i][j]: devices[i] to devices[j]
  bool operator==(const TopologyMatrix&) const = default;
};

/// The matrix of `pci`'s devices; a GPU pair named in `nvlinks` is NV# instead of its PCIe path.
MAINBOARD_API TopologyMatrix topology_matrix(const PciTopology& pci,
                                             const NvLinkCounts& nvlinks = {},
                                             std::uint32_t numa_nodes = 0);

/// A GPU's nearest network adapter.
struct MAINBOARD_API NearestNic {
  std::string gpu;       ///< GPU0
  std::string nic;       ///< mlx5_0
  std::string nic_kind;  ///< infiniband, roce, ethernet
  TopologyCell path;
  bool operator==(const NearestNic&) const = default;
};

/// Whether a device is a network adapter that does RDMA (InfiniBand, or RoCE).
MAINBOARD_API bool is_rdma_nic(const PciDevice& device);

/// For each GPU (in order) the network adapter nearest it: among RDMA adapters only when
/// `rdma_only`, else among all, an RDMA one first where two are as near. GPUs with no adapter
/// to compare are left out; of equally near adapters the first in the reading's order wins.
MAINBOARD_API std::vector<NearestNic> nearest_nics(const TopologyMatrix& matrix,
                                                   bool rdma_only = false);

}  // namespace mainboard
