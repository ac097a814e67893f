#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/board.hpp"
#include "mainboard/cgroup.hpp"
#include "mainboard/cpu.hpp"
#include "mainboard/cuda.hpp"
#include "mainboard/environment.hpp"
#include "mainboard/export.hpp"
#include "mainboard/fabric.hpp"
#include "mainboard/gpu.hpp"
#include "mainboard/memory.hpp"
#include "mainboard/memory_health.hpp"
#include "mainboard/npu.hpp"
#include "mainboard/pci_topology.hpp"
#include "mainboard/pressure.hpp"
#include "mainboard/reading.hpp"
#include "mainboard/sensors.hpp"
#include "mainboard/storage.hpp"
#include "mainboard/toolchain.hpp"
#include "mainboard/tuning.hpp"

namespace mainboard {

/// Version of the snapshot's JSON layout; bumped when a field changes meaning or is removed.
inline constexpr int kSnapshotSchemaVersion = 2;
/// The oldest schema_version this build still reads.
inline constexpr int kSnapshotSchemaVersionRead = 1;

/// What one probe or provider did: so a user sees why a value is missing and what it cost.
struct MAINBOARD_API Diagnostic {
  std::string probe;  ///< e.g. cpu, memory, board, toolchain, gpu:nvidia
  ProbeStatus status = ProbeStatus::ok;
  std::string reason;
  std::int64_t duration_ns = 0;  ///< time this probe took when it ran
  bool operator==(const Diagnostic&) const = default;
};

/// The host probes, one row each, in the order their diagnostics are listed:
///
///     X(name, lifetime, after, Part, member, path)
///
/// `name` is the probe's diagnostic and its reader, `Part host::read_<name>(sources, so_far,
/// note)` (src/host/readers.hpp). What the reader returns goes to the snapshot's `member` (which
/// is also its JSON key), at `path` within it: empty for the member itself or for the member's
/// base class of type `Part`. An `identity` part is read once per Machine and copied into every
/// snapshot; a `live` one at every reading. `after` is an identity probe whose part this one
/// reads (`none`). This row drives how the part is filled, copied between snapshots, read alone
/// (Machine::reading) and written to and read from JSON. A new probe is its model's header, its
/// reader's file and a row and member here.
#define MAINBOARD_HOST_PROBES(X)                                             \
  /* Identity: read once per Machine. */                                     \
  X(cpu, identity, none, CpuInfo, cpu, .info)                                \
  X(board, identity, none, Reading<Board>, board, )                          \
  X(environment, identity, none, Environment, environment, )                 \
  X(dimms, identity, none, MemorySlots, memory_hardware, )                   \
  X(os, identity, none, std::optional<OperatingSystem>, os, )                \
  X(toolchain, identity, none, std::optional<Toolchain>, toolchain, )        \
  X(compilers, identity, toolchain, CompilerConfig, compilers, )             \
  X(cuda, identity, toolchain, CudaStack, cuda, )                            \
  X(pci, identity, none, Reading<PciTopology>, pci, )                        \
  /* Live: read at every snapshot. */                                        \
  X(hostname, live, none, std::string, hostname, )                           \
  X(cpu_clocks, live, none, CpuReadings, cpu, )                              \
  X(memory, live, none, Reading<Memory>, memory, )                           \
  X(tuning, live, none, std::optional<HostTuning>, tuning, )                 \
  X(swap, live, none, SwapReading, memory_hardware, )                        \
  X(cgroup_memory, live, none, Reading<CgroupMemory>, cgroup_memory, )       \
  X(pressure, live, none, Reading<Pressure>, pressure, )                     \
  X(disk, live, none, Disk, disk, )                                          \
  X(scratch, live, none, Scratch, scratch, )                                 \
  X(infiniband, live, none, Reading<Infiniband>, infiniband, )               \
  X(network, live, none, Reading<Network>, network, )                        \
  X(temperatures, live, none, Reading<Temperatures>, temperatures, )         \
  X(energy_counters, live, none, Reading<EnergyCounters>, energy_counters, ) \
  X(huge_pages, live, none, Reading<HugePages>, huge_pages, )                \
  X(memory_errors, live, none, Reading<MemoryErrors>, memory_errors, )

/// Everything probed about the host at one moment, as one serializable value.
struct MAINBOARD_API MachineSnapshot {
  int schema_version = kSnapshotSchemaVersion;
  std::int64_t timestamp_ns = 0;  ///< monotonic clock (the one profiles use)
  std::int64_t unix_time_ns = 0;  ///< wall clock, for humans and for ordering files
  std::string hostname;
  CpuSnapshot cpu;
  Reading<Memory> memory;
  MemoryHardware memory_hardware;
  std::vector<GpuSnapshot> gpus;
  std::vector<NpuSnapshot> npus;
  CudaStack cuda;  ///< the NVIDIA libraries found (or why not)
  Environment environment;
  /// The operating system; empty when none of it could be read (or in a snapshot saved before
  /// it was read).
  std::optional<OperatingSystem> os;
  /// The kernel settings that move measurements (governors, boost, SMT, ASLR, huge pages,
  /// perf_event_paranoid); empty where none could be read.
  std::optional<HostTuning> tuning;
  Reading<Board> board;                ///< unavailable without DMI
  std::optional<Toolchain> toolchain;  ///< empty when the snapshot skipped it
  CompilerConfig compilers;
  Reading<CgroupMemory> cgroup_memory;
  Reading<Pressure> pressure;  ///< how much work waits for CPU, memory and I/O
  Disk disk;
  Scratch scratch;
  /// Devices on PCIe with the bridges above them: what `topo` draws its matrix from.
  Reading<PciTopology> pci;
  Reading<Infiniband> infiniband;           ///< InfiniBand and RoCE devices and their ports
  Reading<Network> network;                 ///< physical network interfaces
  Reading<Temperatures> temperatures;       ///< hwmon sensors and thermal zones
  Reading<EnergyCounters> energy_counters;  ///< RAPL counters of CPU packages and DRAM
  Reading<HugePages> huge_pages;            ///< static huge page pools, per size and node
  Reading<MemoryErrors> memory_errors;      ///< EDAC corrected and uncorrected errors
  std::vector<Diagnostic> diagnostics;

  /// Schedulable units: the CPU plus every GPU and NPU.
  std::size_t unit_count() const { return 1 + gpus.size() + npus.size(); }
  /// Distinct unit kinds present, cpu first.
  std::vector<UnitKind> kinds() const;
  const Diagnostic* diagnostic(const std::string& probe) const;
  bool operator==(const MachineSnapshot&) const = default;
};

}  // namespace mainboard
