#pragma once

#include <cstdint>

namespace mainboard::core {

/// The one monotonic clock every timestamp in a snapshot or profile comes from (CLOCK_MONOTONIC
/// nanoseconds, the clock CUPTI and perf can be aligned to).
std::int64_t monotonic_ns();
/// Wall-clock nanoseconds since the Unix epoch.
std::int64_t unix_ns();

}  // namespace mainboard::core
