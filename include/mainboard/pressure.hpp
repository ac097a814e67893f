#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mainboard/export.hpp"

namespace mainboard {

/// One line of a pressure stall file: the share of wall time in which tasks waited for the
/// resource, as the kernel averages it, and the waiting time since boot.
struct MAINBOARD_API StallShare {
  double avg10 = 0;            ///< percent of the last 10 seconds
  double avg60 = 0;            ///< percent of the last minute
  double avg300 = 0;           ///< percent of the last five minutes
  std::uint64_t total_us = 0;  ///< microseconds of waiting since boot
  bool operator==(const StallShare&) const = default;
};

/// The pressure on one resource: `some` (at least one task waited) and `full` (every non-idle
/// task waited at once: nothing ran; absent for the CPU before Linux 5.13).
struct MAINBOARD_API ResourcePressure {
  StallShare some;
  std::optional<StallShare> full;
  bool operator==(const ResourcePressure&) const = default;
};

/// Pressure stall information (PSI, /proc/pressure, Linux 4.20 and later, when the kernel has it
/// on): how much of the time work waited for the CPU, for memory (reclaim, swap-in, thrashing)
/// and for I/O. A host under memory or I/O pressure is no place for a benchmark.
struct MAINBOARD_API Pressure {
  bool supported = false;
  std::optional<ResourcePressure> cpu;
  std::optional<ResourcePressure> memory;
  std::optional<ResourcePressure> io;
  std::string reason;  ///< why there is none (no /proc/pressure: PSI off or an old kernel)
  bool operator==(const Pressure&) const = default;
};

}  // namespace mainboard
