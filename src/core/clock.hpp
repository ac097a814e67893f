#pragma once

#include <cstdint>

namespace mainboard::core {

/// The one monotonic clock every timestamp in a snapshot or profile comes from (CLOCK_MONOTONIC
/// nanoseconds, the clock CUPTI and perf can be aligned to).
std::int64_t monotonic_ns();
/// CPU time of the whole process (every thread), in nanoseconds (CLOCK_PROCESS_CPUTIME_ID).
std::int64_t process_cpu_ns();
/// Wall-clock nanoseconds since the Unix epoch.
std::int64_t unix_ns();
/// Nanoseconds since the host booted, suspend included (CLOCK_BOOTTIME): the kernel log's clock.
std::int64_t boot_ns();

/// Another clock (TSC ticks, CUPTI timestamps) mapped onto monotonic_ns() through two
/// calibration pairs, one taken when a session starts and one when it stops: rate and offset.
class ClockMap {
 public:
  ClockMap(std::int64_t from_start, std::int64_t to_start, std::int64_t from_stop,
           std::int64_t to_stop)
      : from_(from_start),
        to_(to_start),
        rate_(from_stop > from_start ? static_cast<double>(to_stop - to_start) /
                                           static_cast<double>(from_stop - from_start)
                                     : 1.0) {}
  /// The other clock read `to_start` at `from_start` and runs at `rate` nanoseconds per unit.
  static ClockMap at_rate(std::int64_t from_start, std::int64_t to_start, double rate) {
    ClockMap m(from_start, to_start, from_start, to_start);
    m.rate_ = rate;
    return m;
  }
  /// Nanoseconds per unit of the other clock.
  double rate() const { return rate_; }
  /// A reading of the other clock as monotonic nanoseconds.
  std::int64_t operator()(std::int64_t t) const {
    return to_ + static_cast<std::int64_t>(static_cast<double>(t - from_) * rate_);
  }
  /// A length measured on the other clock, in nanoseconds.
  std::int64_t length(std::int64_t d) const {
    return static_cast<std::int64_t>(static_cast<double>(d) * rate_);
  }

 private:
  std::int64_t from_, to_;
  double rate_;
};

}  // namespace mainboard::core
