#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/export.hpp"
#include "mainboard/unit.hpp"

namespace mainboard {

/// One cache level as the topology reports it; `instances` counts the copies on the machine.
struct MAINBOARD_API CacheInfo {
  int level = 0;                 ///< 1, 2, 3, 4
  std::string type;              ///< data, instruction or unified
  std::uint64_t size_bytes = 0;  ///< size of one instance
  std::uint32_t instances = 0;
  bool operator==(const CacheInfo&) const = default;
};

/// Where the CPU's topology came from: "hwloc", "sysfs" (the kernel's CPU and NUMA files, where
/// hwloc's view is absent: a recorded host without its topology XML, or hwloc failing),
/// "/proc/cpuinfo" (neither: counted from its fields) or "sysctl" (macOS).
enum class TopologySource { none, hwloc, proc_cpuinfo, sysctl, sysfs };
MAINBOARD_API const char* to_string(TopologySource source);

/// Where the cache sizes come from: "kernel" (its cacheinfo in sysfs), "processor" (what the
/// processor reports, x86's CPUID, where the kernel lists none), "sysctl" (macOS) or
/// "hypervisor" (a virtual machine: every answer there, the kernel's included, is built from the
/// CPUID the hypervisor presents, which need not be the cache the guest gets: a 2-vCPU guest told
/// of a 508 MiB L3). "" (none) with no caches.
enum class CacheSource { none, kernel, processor, sysctl, hypervisor };
MAINBOARD_API const char* to_string(CacheSource source);

/// Identity and capacity of the host CPU; computed once.
struct MAINBOARD_API CpuInfo {
  std::string label;              ///< model name, e.g. "AMD EPYC 9654 96-Core Processor"
  std::string vendor;             ///< e.g. AMD, Intel, ARM, NVIDIA
  std::string architecture;       ///< instruction set, e.g. x86_64, aarch64
  std::string microarchitecture;  ///< e.g. "Zen 4", "Sapphire Rapids", "Neoverse V2"; may be empty
  std::optional<int> family;      ///< x86 family, or the Arm implementer code
  std::optional<int> model;       ///< x86 model, or the Arm part number
  std::optional<int> stepping;
  std::uint32_t packages = 0;
  std::uint32_t cores = 0;    ///< physical cores over all packages
  std::uint32_t threads = 0;  ///< hardware threads (logical CPUs)
  std::uint32_t numa_nodes = 0;
  /// Each NUMA node's memory, in node order (hwloc); empty when the topology does not say (or
  /// in a snapshot saved before it was read).
  std::optional<std::vector<std::uint64_t>> numa_memory_bytes;
  std::vector<CacheInfo> caches;            ///< L1d, L1i, L2, L3 … in that order, where present
  std::vector<std::string> isa_extensions;  ///< notable vector/matrix extensions (avx512f, sve…)
  TopologySource topology_source = TopologySource::none;
  CacheSource cache_source = CacheSource::none;
  /// NUMA nodes with memory and no CPUs, by index in numa_memory_bytes' order: a GH200's HBM
  /// onlined by the driver, CXL memory.
  std::vector<std::uint32_t> memory_only_numa_nodes;
  /// Arm: the SVE vector length a process starts with, in bits (128 on Neoverse V2 and N2, 256
  /// on V1), from /proc/sys/abi/sve_default_vector_length; empty without SVE.
  std::optional<std::uint32_t> sve_vector_bits;
  bool operator==(const CpuInfo&) const = default;

  /// Size of one instance of a cache, or empty when there is none at that level/type.
  std::optional<std::uint64_t> cache_bytes(int level, const std::string& type) const;
};

/// What the CPU is doing, read afresh each time: clocks and the run-queue load.
struct MAINBOARD_API CpuReadings {
  std::vector<ClockReading> clocks;
  std::optional<double> load_1m;  ///< run-queue load averages from /proc/loadavg
  std::optional<double> load_5m;
  std::optional<double> load_15m;
  bool operator==(const CpuReadings&) const = default;
};

/// The CPU at one moment: its identity (read once) plus its readings (read each time). The two
/// lifetimes are separate types so each is filled and copied whole.
struct MAINBOARD_API CpuSnapshot : CpuReadings {
  CpuInfo info;
  bool operator==(const CpuSnapshot&) const = default;
};

/// The host CPU as a unit. Identity comes from the topology; clocks and memory are live.
class MAINBOARD_API Cpu final : public Unit {
 public:
  struct Readers;  ///< where its live readings come from (private: the sysroot and the runner)
  Cpu(CpuInfo info, std::shared_ptr<const Readers> readers);
  ~Cpu() override;
  UnitKind kind() const override { return UnitKind::cpu; }
  const std::string& label() const override { return info_.label; }
  const std::string& architecture() const override { return info_.architecture; }
  const std::string& vendor() const override { return info_.vendor; }
  const CpuInfo& info() const { return info_; }
  /// System memory: the CPU sees all of it.
  Reading<Memory> memory() const override;
  /// Per-domain clocks from cpufreq policies, or one domain from /proc/cpuinfo.
  std::vector<ClockReading> clock_readings() const override;
  CpuSnapshot reading() const;

 private:
  CpuInfo info_;
  std::shared_ptr<const Readers> readers_;
};

}  // namespace mainboard
