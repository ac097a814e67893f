#pragma once
// What `mainboard serve` exports: one live reading of the host and every accelerator, and its
// metric families (docs/serve.md lists each one).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/cgroup.hpp"
#include "mainboard/cpu.hpp"
#include "mainboard/fabric.hpp"
#include "mainboard/gpu.hpp"
#include "mainboard/memory.hpp"
#include "mainboard/memory_health.hpp"
#include "mainboard/npu.hpp"
#include "mainboard/pressure.hpp"
#include "mainboard/sensors.hpp"
#include "serve/exposition.hpp"

namespace mainboard {
class Machine;
}

namespace mainboard::serve {

/// Everything one scrape reports, read at once.
struct Scrape {
  Reading<Memory> memory;
  std::optional<std::uint64_t> swap_total_bytes;
  std::optional<std::uint64_t> swap_used_bytes;
  std::string swap_unavailable;  ///< why swap could not be read; empty when it was
  Reading<CgroupMemory> cgroup;
  Reading<Pressure> pressure;
  Reading<EnergyCounters> energy;  ///< RAPL
  Reading<Infiniband> infiniband;  ///< InfiniBand and RoCE ports
  Reading<Network> network;        ///< physical network interfaces
  Reading<Temperatures> temperatures;
  Reading<HugePages> huge_pages;
  Reading<MemoryErrors> memory_errors;
  CpuSnapshot cpu;
  std::vector<GpuSnapshot> gpus;
  std::vector<NpuSnapshot> npus;
  double seconds = 0;  ///< how long the reading took
};

/// Reads the host's live figures and every GPU's and NPU's telemetry. Never throws for a
/// reading that cannot be taken: it is left out, and the unavailable family says why.
Scrape read(const Machine& machine);

/// The reading's metric families, added to `out`.
void expose(const Scrape& reading, Exposition& out);

/// The exporter's own figures.
struct ExporterStats {
  std::uint64_t scrapes = 0;   ///< requests for /metrics answered, this one included
  std::uint64_t readings = 0;  ///< readings taken (scrapes within the minimum interval share one)
  double reading_age_s = 0;    ///< how old the reading served is
};
void expose(const ExporterStats& stats, Exposition& out);

}  // namespace mainboard::serve
