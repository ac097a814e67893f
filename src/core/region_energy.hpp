#pragma once

// The energy of a region: RAPL counters (the machine's energy_counters probe) and each GPU's
// total energy counter, read at the region's start and at every sample, summed as differences.
// One mechanism for the meter, a metered command and both kinds of profiling session; it reads
// only through the public Machine and Gpu.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/energy.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/unit.hpp"

namespace mainboard {

class Gpu;

namespace detail {

class EnergyTracker {
 public:
  /// Takes the first reading of every counter. `gpus`: read the GPUs' counters too.
  EnergyTracker(const Machine& machine, bool gpus);

  /// One more reading; a RAPL counter that went back wrapped (once: sample faster than that).
  void sample();
  /// sample(), when the last reading is a second old or more: RAPL counters wrap after minutes
  /// at the earliest, so a loop of any pace need read them no more often than that.
  void sample_if_due();
  /// The energy between the first reading and the last, over `seconds`.
  RegionEnergy result(double seconds) const;

 private:
  struct RaplZone {
    std::string domain;  ///< package or dram
    std::uint64_t last_uj = 0;
    std::optional<std::uint64_t> max_uj;
    double used_uj = 0;
    std::string broken;  ///< why its sum is no longer trusted (went back with no known range)
  };
  struct GpuCounter {
    std::shared_ptr<const Gpu> gpu;
    std::string name;  ///< gpu0, gpu1…
    std::string uuid;
    std::optional<double> first_j, last_j;
    std::string why;  ///< why there is no counter
  };

  void read_rapl();
  void read_gpus();

  const Machine* machine_;
  std::chrono::steady_clock::time_point last_read_ = std::chrono::steady_clock::now();
  std::map<std::string, RaplZone> rapl_;  ///< by zone: intel-rapl:0…
  std::string rapl_why_;                  ///< why RAPL was not read at the start
  std::string rapl_left_out_;             ///< counters the probe left out, and why
  std::vector<GpuCounter> gpus_;
};

}  // namespace detail
}  // namespace mainboard
