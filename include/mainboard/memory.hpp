#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/export.hpp"
#include "mainboard/reading.hpp"

namespace mainboard {

inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

/// Where a memory reading came from; in JSON the name in quotes ("/proc/meminfo", "nvml_v2").
enum class MemorySource {
  none,                    ///< ""
  proc_meminfo,            ///< "/proc/meminfo": MemTotal and MemAvailable
  sysctl,                  ///< "sysctl hw.memsize, vm_stat" (macOS)
  nvml_v2,                 ///< "nvml_v2": nvmlDeviceGetMemoryInfo_v2 (excludes reserved memory)
  nvml,                    ///< "nvml": nvmlDeviceGetMemoryInfo
  cuda,                    ///< "cuda": cuMemGetInfo, where NVML has none
  amdgpu,                  ///< "amdgpu": mem_info_* in sysfs
  npu_memory_utilization,  ///< "npu_memory_utilization": what an Intel NPU has mapped
  system_profiler,         ///< "system_profiler": a discrete Mac GPU's VRAM size
  system_profiler_ram,     ///< "system_profiler physical_memory": a Mac's RAM size alone
};
MAINBOARD_API const char* to_string(MemorySource source);

/// A memory reading for the host, a unit or a region. Where a platform does not expose one, the
/// caller holds a `Reading<Memory>` that says why instead.
struct MAINBOARD_API Memory {
  std::uint64_t total_bytes = 0;
  std::optional<std::uint64_t> used_bytes;
  std::optional<std::uint64_t> free_bytes;
  std::string scope = "system";              ///< e.g. system, vram, unified
  bool unified = false;                      ///< CPU and accelerators share this pool
  MemorySource source = MemorySource::none;  ///< where the figure came from

  double total_gb() const { return static_cast<double>(total_bytes) / kBytesPerGiB; }
  double used_gb() const { return static_cast<double>(used_bytes.value_or(0)) / kBytesPerGiB; }
  double free_gb() const { return static_cast<double>(free_bytes.value_or(0)) / kBytesPerGiB; }
  /// Percentage of the total in use; 0 when the total is 0 or usage is unknown.
  double percent_used() const;

  /// Live system RAM from /proc/meminfo of this process's root (MAINBOARD_SYSROOT or /):
  /// used = MemTotal - MemAvailable, free = MemAvailable; unavailable where that file is
  /// missing or has no MemTotal.
  static Reading<Memory> system(std::string scope = "system", bool unified = false);

  bool operator==(const Memory&) const = default;
};

/// One DIMM slot as SMBIOS type 17 describes it. Serial numbers are never kept.
struct MAINBOARD_API DimmCard {
  std::string locator;  ///< e.g. "DIMM_A1"
  std::string bank_locator;
  std::optional<std::uint64_t> size_bytes;            ///< empty for an unpopulated slot
  std::string type;                                   ///< e.g. DDR5
  std::string form_factor;                            ///< e.g. DIMM, SODIMM
  std::optional<std::uint32_t> speed_mts;             ///< rated speed in MT/s
  std::optional<std::uint32_t> configured_speed_mts;  ///< speed it runs at
  std::string manufacturer;
  std::string part_number;
  std::optional<std::uint32_t> rank;

  bool populated() const { return size_bytes.has_value() && *size_bytes > 0; }
  bool operator==(const DimmCard&) const = default;
};

/// DIMM slots, read once. `cards` is empty when dmidecode is missing or refused (it needs root).
struct MAINBOARD_API MemorySlots {
  /// Unavailable where dmidecode is missing, refused (it needs root) or finds no SMBIOS table.
  Reading<std::vector<DimmCard>> cards;

  /// Highest rated speed over populated slots; empty when no card reports one.
  std::optional<std::uint32_t> speed_mhz() const;
  std::size_t slots_total() const { return cards.or_empty().size(); }
  std::size_t slots_used() const;
  bool operator==(const MemorySlots&) const = default;
};

/// Swap in use, read each time (/proc/meminfo).
struct MAINBOARD_API SwapReading {
  std::uint64_t swap_total_bytes = 0;
  std::uint64_t swap_used_bytes = 0;

  double swap_total_gb() const { return static_cast<double>(swap_total_bytes) / kBytesPerGiB; }
  double swap_used_gb() const { return static_cast<double>(swap_used_bytes) / kBytesPerGiB; }
  bool operator==(const SwapReading&) const = default;
};

/// DIMM slots (identity) and swap (a reading), as one value; each lifetime is its own base.
struct MAINBOARD_API MemoryHardware : MemorySlots, SwapReading {
  bool operator==(const MemoryHardware&) const = default;
};

}  // namespace mainboard
