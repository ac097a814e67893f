#pragma once

#include <cstddef>
#include <functional>

#include "mainboard/export.hpp"

namespace mainboard {

class Machine;

/// When a GPU counts as in use by someone else.
struct MAINBOARD_API BusyThresholds {
  double util_pct = 10.0;    ///< compute utilization above this is busy
  double memory_pct = 90.0;  ///< memory use above this share of capacity is busy
};

/// Whether GPU `index` is under load right now. A host without GPUs reads as idle (false); an
/// index past the last GPU throws mainboard::Error. Readings a GPU cannot give count as idle.
MAINBOARD_API bool gpu_busy(const Machine& machine, std::size_t index,
                            const BusyThresholds& thresholds = {});
MAINBOARD_API bool gpu_busy(std::size_t index = 0, const BusyThresholds& thresholds = {});

/// Polls gpu_busy every `poll_interval_s` until the GPU is idle (true, at once if it already
/// is) or `timeout_s` has passed while it stays busy (false). `sleep` waits the given seconds;
/// it is a parameter so tests spend no real time. Elapsed time is the sum of the sleeps.
MAINBOARD_API bool wait_for_idle(const Machine& machine, std::size_t index, double timeout_s = 30.0,
                                 double poll_interval_s = 0.5,
                                 const BusyThresholds& thresholds = {},
                                 const std::function<void(double)>& sleep = {});

}  // namespace mainboard
