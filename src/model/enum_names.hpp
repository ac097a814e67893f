#pragma once

// Every enum's names, once: a {value, name} table per enum that to_string(), the JSON
// conversions and the parsers all read. A new value is one line in its table.

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "mainboard/check.hpp"
#include "mainboard/profile.hpp"
#include "mainboard/profile_report.hpp"
#include "mainboard/profiler.hpp"
#include "mainboard/snapshot.hpp"
#include "mainboard/storage.hpp"
#include "mainboard/toolchain.hpp"
#include "mainboard/unit.hpp"

namespace mainboard::detail {

template <class E>
struct EnumNames;

#define MAINBOARD_ENUM_NAMES(E, ...)                                    \
  template <>                                                           \
  struct EnumNames<E> {                                                 \
    static constexpr std::pair<E, const char*> table[] = {__VA_ARGS__}; \
  }

MAINBOARD_ENUM_NAMES(XidSource, {XidSource::none, ""}, {XidSource::kernel_log, "kernel_log"},
                     {XidSource::nvml_events, "nvml_events"});
MAINBOARD_ENUM_NAMES(MemorySource, {MemorySource::none, ""},
                     {MemorySource::proc_meminfo, "/proc/meminfo"},
                     {MemorySource::sysctl, "sysctl hw.memsize, vm_stat"},
                     {MemorySource::nvml_v2, "nvml_v2"}, {MemorySource::nvml, "nvml"},
                     {MemorySource::cuda, "cuda"}, {MemorySource::amdgpu, "amdgpu"},
                     {MemorySource::npu_memory_utilization, "npu_memory_utilization"},
                     {MemorySource::system_profiler, "system_profiler"},
                     {MemorySource::system_profiler_ram, "system_profiler physical_memory"});
MAINBOARD_ENUM_NAMES(TopologySource, {TopologySource::none, ""}, {TopologySource::hwloc, "hwloc"},
                     {TopologySource::proc_cpuinfo, "/proc/cpuinfo"},
                     {TopologySource::sysctl, "sysctl"}, {TopologySource::sysfs, "sysfs"});
MAINBOARD_ENUM_NAMES(CacheSource, {CacheSource::none, ""}, {CacheSource::kernel, "kernel"},
                     {CacheSource::processor, "processor"}, {CacheSource::sysctl, "sysctl"},
                     {CacheSource::hypervisor, "hypervisor"});
MAINBOARD_ENUM_NAMES(UnitKind, {UnitKind::cpu, "cpu"}, {UnitKind::gpu, "gpu"},
                     {UnitKind::npu, "npu"});
MAINBOARD_ENUM_NAMES(ToolCategory, {ToolCategory::c, "c"}, {ToolCategory::cxx, "cxx"},
                     {ToolCategory::cuda, "cuda"}, {ToolCategory::hip, "hip"},
                     {ToolCategory::fortran, "fortran"}, {ToolCategory::mpi, "mpi"},
                     {ToolCategory::build, "build"}, {ToolCategory::python, "python"});
MAINBOARD_ENUM_NAMES(StorageTier, {StorageTier::memory, "memory"},
                     {StorageTier::local_ssd, "local-ssd"}, {StorageTier::local_disk, "local-disk"},
                     {StorageTier::local, "local"}, {StorageTier::network, "network"},
                     {StorageTier::unknown, "unknown"});
MAINBOARD_ENUM_NAMES(ProbeStatus, {ProbeStatus::ok, "ok"},
                     {ProbeStatus::unsupported, "unsupported"}, {ProbeStatus::failed, "failed"});
MAINBOARD_ENUM_NAMES(DiffKind, {DiffKind::changed, "changed"}, {DiffKind::added, "added"},
                     {DiffKind::removed, "removed"});
MAINBOARD_ENUM_NAMES(GpuActivity::Kind, {GpuActivity::Kind::kernel, "kernel"},
                     {GpuActivity::Kind::memcpy, "memcpy"}, {GpuActivity::Kind::memset, "memset"},
                     {GpuActivity::Kind::synchronization, "synchronization"},
                     {GpuActivity::Kind::overhead, "overhead"});
MAINBOARD_ENUM_NAMES(Bound, {Bound::memory, "memory"}, {Bound::compute, "compute"},
                     {Bound::unknown, "unknown"});
MAINBOARD_ENUM_NAMES(Severity, {Severity::info, "info"}, {Severity::warning, "warning"},
                     {Severity::blocker, "blocker"});
/// Flags: a set is written as its names joined with "|".
MAINBOARD_ENUM_NAMES(Activity, {Activity::kernel, "kernel"}, {Activity::memcpy, "memcpy"},
                     {Activity::memset, "memset"}, {Activity::synchronization, "synchronization"},
                     {Activity::overhead, "overhead"}, {Activity::counters, "counters"});

#undef MAINBOARD_ENUM_NAMES

/// The name of `value` ("unknown" for a value outside the enum).
template <class E>
const char* name_of(E value) {
  for (const auto& [v, name] : EnumNames<E>::table)
    if (v == value) return name;
  return "unknown";
}

/// The value named `name`, if any.
template <class E>
std::optional<E> value_of(std::string_view name) {
  for (const auto& [v, n] : EnumNames<E>::table)
    if (name == n) return v;
  return std::nullopt;
}

/// A set of flags as "kernel|memcpy".
std::string names_of(Activity set);
/// "kernel|memcpy" as a set; empty when a name is unknown.
std::optional<Activity> parse_activities(std::string_view text);

}  // namespace mainboard::detail
