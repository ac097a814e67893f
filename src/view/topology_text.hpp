#pragma once

#include <string>

#include "mainboard/topology_matrix.hpp"
#include "view/format.hpp"

namespace mainboard::view {

/// The matrix as `nvidia-smi topo -m` prints it: a column per device, then each device's CPU
/// and NUMA affinity, then the legend. Names from the host are escaped for the terminal.
std::string render_topology(const TopologyMatrix& matrix, const Style& style);

/// "0-23,48-71": a CPU list as the kernel writes one; "N/A" when empty.
std::string cpu_list_text(const std::vector<std::uint32_t>& cpus);

}  // namespace mainboard::view
