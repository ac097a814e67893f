#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mainboard/export.hpp"
#include "mainboard/reading.hpp"

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

/// JSON field lists (mainboard/json.hpp): a model may list its fields beside itself, and the
/// snapshot's JSON takes them from here.
template <class V>
void fields(V& v, StallShare& m) {
  v("avg10", m.avg10);
  v("avg60", m.avg60);
  v("avg300", m.avg300);
  v("total_us", m.total_us);
}

/// The pressure on one resource: `some` (at least one task waited) and `full` (every non-idle
/// task waited at once: nothing ran; absent for the CPU before Linux 5.13).
struct MAINBOARD_API ResourcePressure {
  StallShare some;
  std::optional<StallShare> full;
  bool operator==(const ResourcePressure&) const = default;
};

template <class V>
void fields(V& v, ResourcePressure& m) {
  v("some", m.some);
  v("full", m.full);
}

/// Pressure stall information (PSI, /proc/pressure, Linux 4.20 and later, when the kernel has it
/// on): how much of the time work waited for the CPU, for memory (reclaim, swap-in, thrashing)
/// and for I/O. A host under memory or I/O pressure is no place for a benchmark.
/// Unavailable as a whole (a Reading) where there is no /proc/pressure: PSI off or an old kernel.
struct MAINBOARD_API Pressure {
  std::optional<ResourcePressure> cpu;
  std::optional<ResourcePressure> memory;
  std::optional<ResourcePressure> io;
  bool operator==(const Pressure&) const = default;
};

template <class V>
void fields(V& v, Pressure& m) {
  v("cpu", m.cpu);
  v("memory", m.memory);
  v("io", m.io);
}

}  // namespace mainboard
