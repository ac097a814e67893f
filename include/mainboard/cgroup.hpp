#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mainboard/export.hpp"
#include "mainboard/reading.hpp"

namespace mainboard {

/// The memory cap the kernel enforces on this process's control group: the real OOM-kill
/// ceiling for a job, often far below the machine's RAM.
/// Unavailable as a whole (a Reading) where the process's cgroup or its memory controller
/// cannot be found, or a limit that exists cannot be read.
struct MAINBOARD_API CgroupMemory {
  int version = 0;                           ///< 1 or 2
  std::string path;                          ///< the cgroup, as /proc/self/cgroup names it
  std::optional<std::uint64_t> limit_bytes;  ///< empty: no cap ("max" or the v1 sentinel)
  std::optional<std::uint64_t> usage_bytes;  ///< current charge of the cgroup
  std::optional<std::uint64_t> swap_limit_bytes;
  std::string limit_source;  ///< the file the tightest limit came from

  bool capped() const { return limit_bytes.has_value(); }
  bool operator==(const CgroupMemory&) const = default;
};

}  // namespace mainboard
