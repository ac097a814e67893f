#pragma once

// The energy a region used (a metered region, a command, a profiling session), by domain.

#include <optional>
#include <string>
#include <vector>

#include "mainboard/export.hpp"

namespace mainboard {

/// One domain's energy over a metered region.
struct MAINBOARD_API DomainEnergy {
  std::string domain;  ///< "cpu" (every CPU package together), "dram", "gpu0", "gpu1"…
  std::string source;  ///< what counted it: the RAPL zones, or the GPU's uuid (NVML)
  double joules = 0;
  double mean_w = 0;  ///< joules over the region's seconds
  bool operator==(const DomainEnergy&) const = default;
};

/// The energy a region used, by domain, as Zeus and CodeCarbon measure it: CPU packages and
/// DRAM from RAPL (the counters' difference across the region, wrap-around corrected), each
/// GPU from its driver's total energy counter (NVML, Volta and later). Energy is the whole
/// host's and the whole GPU's, not the region's processes' alone.
struct MAINBOARD_API RegionEnergy {
  std::vector<DomainEnergy> domains;  ///< those read, in the order cpu, dram, gpu0…
  std::optional<double> total_j;      ///< the domains summed; empty where none was read
  std::optional<double> mean_w;       ///< total_j over the region's seconds
  /// Domains that could not be read, each with why: "cpu, dram: only root may read RAPL…".
  std::vector<std::string> unavailable;
  bool operator==(const RegionEnergy&) const = default;
};

}  // namespace mainboard
