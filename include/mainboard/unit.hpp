#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/export.hpp"
#include "mainboard/memory.hpp"
#include "mainboard/reading.hpp"

namespace mainboard {

enum class UnitKind { cpu, gpu, npu };
MAINBOARD_API const char* to_string(UnitKind kind);

/// Clock frequencies of one hardware domain (a cpufreq policy, a GPU's SM or memory clock).
struct MAINBOARD_API ClockReading {
  std::string domain;  ///< e.g. "cpu0-7", "sm", "memory"
  std::optional<double> current_mhz;
  std::optional<double> min_mhz;
  std::optional<double> max_mhz;
  std::string source;  ///< e.g. cpufreq, /proc/cpuinfo, nvml
  bool operator==(const ClockReading&) const = default;
};

/// The readings below are each a Reading: unavailable as a whole where the platform or driver
/// offers none, with optional fields for what a reading that was taken may still lack.
struct MAINBOARD_API Utilization {
  std::optional<double> compute_pct;
  std::optional<double> memory_pct;  ///< memory controller busy time, where exposed
  bool operator==(const Utilization&) const = default;
};

struct MAINBOARD_API Energy {
  std::optional<double> power_w;
  std::optional<double> power_limit_w;
  std::optional<double> energy_j;  ///< cumulative since the driver loaded
  bool operator==(const Energy&) const = default;
};

struct MAINBOARD_API Thermal {
  std::optional<double> temperature_c;
  std::optional<double> slowdown_c;
  std::optional<double> shutdown_c;
  std::vector<std::string> throttle_reasons;  ///< decoded names, empty when not throttling
  bool operator==(const Thermal&) const = default;
};

/// Point-in-time neutral telemetry of one unit.
struct MAINBOARD_API UnitSnapshot {
  std::string name;       ///< caller's label, e.g. a profiling region
  std::string unit_name;  ///< the unit's label
  UnitKind kind = UnitKind::cpu;
  std::string vendor;
  std::int64_t timestamp_ns = 0;  ///< monotonic clock, the one profiles use
  std::vector<ClockReading> clocks;
  Reading<Memory> memory;
  Reading<Utilization> utilization;
  Reading<Energy> energy;
  Reading<Thermal> thermal;
  bool operator==(const UnitSnapshot&) const = default;
};

/// A schedulable execution resource: a CPU package or cluster, a GPU, an NPU. Identity is
/// computed once; the readings (memory, clocks, utilization, energy, thermal) are live and read
/// afresh at each call. A reading that cannot be taken is unsupported, never an exception.
class MAINBOARD_API Unit {
 public:
  virtual ~Unit() = default;
  virtual UnitKind kind() const = 0;
  virtual const std::string& label() const = 0;
  virtual const std::string& architecture() const = 0;
  virtual const std::string& vendor() const = 0;
  virtual Reading<Memory> memory() const = 0;
  virtual std::vector<ClockReading> clock_readings() const = 0;
  virtual Reading<Utilization> utilization() const;
  virtual Reading<Energy> energy() const;
  virtual Reading<Thermal> thermal() const;
  /// All neutral readings at once, labelled with `name`.
  virtual UnitSnapshot snapshot(const std::string& name = "") const;
};

}  // namespace mainboard
