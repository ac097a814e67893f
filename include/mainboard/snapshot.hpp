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
#include "mainboard/gpu.hpp"
#include "mainboard/memory.hpp"
#include "mainboard/npu.hpp"
#include "mainboard/pressure.hpp"
#include "mainboard/storage.hpp"
#include "mainboard/toolchain.hpp"
#include "mainboard/tuning.hpp"

namespace mainboard {

/// Version of the snapshot's JSON layout; bumped when a field changes meaning or is removed.
inline constexpr int kSnapshotSchemaVersion = 1;

enum class ProbeStatus { ok, unsupported, failed };
MAINBOARD_API const char* to_string(ProbeStatus status);

/// What one probe or provider did: so a user sees why a value is missing and what it cost.
struct MAINBOARD_API Diagnostic {
  std::string probe;  ///< e.g. cpu, memory, board, toolchain, gpu:nvidia
  ProbeStatus status = ProbeStatus::ok;
  std::string reason;
  std::int64_t duration_ns = 0;  ///< time this probe took when it ran
  bool operator==(const Diagnostic&) const = default;
};

/// Everything probed about the host at one moment, as one serializable value.
struct MAINBOARD_API MachineSnapshot {
  int schema_version = kSnapshotSchemaVersion;
  std::int64_t timestamp_ns = 0;  ///< monotonic clock (the one profiles use)
  std::int64_t unix_time_ns = 0;  ///< wall clock, for humans and for ordering files
  std::string hostname;
  CpuSnapshot cpu;
  Memory memory;
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
  Board board;
  std::optional<Toolchain> toolchain;  ///< empty when the snapshot skipped it
  CompilerConfig compilers;
  CgroupMemory cgroup_memory;
  Pressure pressure;  ///< how much work waits for CPU, memory and I/O
  Disk disk;
  Scratch scratch;
  std::vector<Diagnostic> diagnostics;

  /// Schedulable units: the CPU plus every GPU and NPU.
  std::size_t unit_count() const { return 1 + gpus.size() + npus.size(); }
  /// Distinct unit kinds present, cpu first.
  std::vector<UnitKind> kinds() const;
  const Diagnostic* diagnostic(const std::string& probe) const;
  bool operator==(const MachineSnapshot&) const = default;
};

}  // namespace mainboard
