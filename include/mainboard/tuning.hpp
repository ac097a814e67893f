#pragma once

// How the host is tuned for measurement: the kernel settings that move benchmark figures and
// decide whether a profiler may sample (read from /sys and /proc, through the sysroot seam).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/export.hpp"

namespace mainboard {

struct MAINBOARD_API HostTuning {
  /// cpufreq governor → the CPUs using it ("performance" → {0, 1, …}); empty without cpufreq
  /// (most virtual machines).
  std::map<std::string, std::vector<std::uint32_t>> governors;
  /// Frequency boost (turbo) on; empty where the kernel offers no switch for it.
  std::optional<bool> boost;
  /// The file that switches it: /sys/devices/system/cpu/cpufreq/boost (1 = on) or
  /// /sys/devices/system/cpu/intel_pstate/no_turbo (0 = on).
  std::string boost_control;
  /// Simultaneous multithreading active (/sys/devices/system/cpu/smt/active).
  std::optional<bool> smt_active;
  /// kernel.randomize_va_space: 0 off, 1 stack and libraries, 2 also the heap.
  std::optional<int> aslr;
  /// Transparent huge pages: "always", "madvise" or "never" (the bracketed choice).
  std::string transparent_hugepages;
  /// kernel.perf_event_paranoid: above 1 an unprivileged user cannot sample kernel stacks,
  /// above 2 (Debian's default) cannot open perf events at all.
  std::optional<int> perf_event_paranoid;
  bool operator==(const HostTuning&) const = default;
};

}  // namespace mainboard
