#pragma once

/// JSON for every model: `nlohmann::json j = snapshot;` and `j.get<mainboard::Profile>()`.
/// The model headers themselves are plain C++; include this one where JSON is wanted. Loading
/// ignores unknown fields and throws mainboard::Error when a required field is missing or has
/// the wrong type.

#include <nlohmann/json_fwd.hpp>

#include "mainboard/board.hpp"
#include "mainboard/cgroup.hpp"
#include "mainboard/check.hpp"
#include "mainboard/cpu.hpp"
#include "mainboard/cuda.hpp"
#include "mainboard/environment.hpp"
#include "mainboard/export.hpp"
#include "mainboard/fleet.hpp"
#include "mainboard/gpu.hpp"
#include "mainboard/memory.hpp"
#include "mainboard/meter.hpp"
#include "mainboard/npu.hpp"
#include "mainboard/pressure.hpp"
#include "mainboard/profile.hpp"
#include "mainboard/profile_report.hpp"
#include "mainboard/sampler.hpp"
#include "mainboard/snapshot.hpp"
#include "mainboard/storage.hpp"
#include "mainboard/toolchain.hpp"
#include "mainboard/tuning.hpp"
#include "mainboard/unit.hpp"

#define MAINBOARD_DECLARE_JSON(Type)                                \
  MAINBOARD_API void to_json(nlohmann::json& j, const Type& value); \
  MAINBOARD_API void from_json(const nlohmann::json& j, Type& value)

namespace mainboard {

// board.hpp
MAINBOARD_DECLARE_JSON(Board);
MAINBOARD_DECLARE_JSON(Reading<Board>);

// cgroup.hpp
MAINBOARD_DECLARE_JSON(CgroupMemory);
MAINBOARD_DECLARE_JSON(Reading<CgroupMemory>);

// pressure.hpp
MAINBOARD_DECLARE_JSON(StallShare);
MAINBOARD_DECLARE_JSON(ResourcePressure);
MAINBOARD_DECLARE_JSON(Pressure);
MAINBOARD_DECLARE_JSON(Reading<Pressure>);
// fabric.hpp, sensors.hpp, memory_health.hpp, pci_topology.hpp
MAINBOARD_DECLARE_JSON(InfinibandPort);
MAINBOARD_DECLARE_JSON(InfinibandDevice);
MAINBOARD_DECLARE_JSON(Infiniband);
MAINBOARD_DECLARE_JSON(Reading<Infiniband>);
MAINBOARD_DECLARE_JSON(NetworkInterface);
MAINBOARD_DECLARE_JSON(Network);
MAINBOARD_DECLARE_JSON(Reading<Network>);
MAINBOARD_DECLARE_JSON(TemperatureSensor);
MAINBOARD_DECLARE_JSON(Temperatures);
MAINBOARD_DECLARE_JSON(Reading<Temperatures>);
MAINBOARD_DECLARE_JSON(EnergyCounter);
MAINBOARD_DECLARE_JSON(EnergyCounters);
MAINBOARD_DECLARE_JSON(Reading<EnergyCounters>);
MAINBOARD_DECLARE_JSON(HugePagePool);
MAINBOARD_DECLARE_JSON(HugePages);
MAINBOARD_DECLARE_JSON(Reading<HugePages>);
MAINBOARD_DECLARE_JSON(MemoryController);
MAINBOARD_DECLARE_JSON(MemoryErrors);
MAINBOARD_DECLARE_JSON(Reading<MemoryErrors>);
MAINBOARD_DECLARE_JSON(PciDevice);
MAINBOARD_DECLARE_JSON(PciTopology);
MAINBOARD_DECLARE_JSON(Reading<PciTopology>);

// cpu.hpp
MAINBOARD_DECLARE_JSON(CacheInfo);
MAINBOARD_DECLARE_JSON(CpuInfo);
MAINBOARD_DECLARE_JSON(CpuSnapshot);

// cuda.hpp
MAINBOARD_DECLARE_JSON(LibraryInfo);
MAINBOARD_DECLARE_JSON(CudaStack);

// environment.hpp
MAINBOARD_DECLARE_JSON(Scheduler);
MAINBOARD_DECLARE_JSON(Job);
MAINBOARD_DECLARE_JSON(Environment);
MAINBOARD_DECLARE_JSON(OperatingSystem);
MAINBOARD_DECLARE_JSON(HostTuning);
MAINBOARD_DECLARE_JSON(Severity);
MAINBOARD_DECLARE_JSON(Finding);
MAINBOARD_DECLARE_JSON(Readiness);
MAINBOARD_DECLARE_JSON(FleetNode);
MAINBOARD_DECLARE_JSON(Fleet);

// gpu.hpp
MAINBOARD_DECLARE_JSON(PcieReading);
MAINBOARD_DECLARE_JSON(Reading<PcieReading>);
MAINBOARD_DECLARE_JSON(GpuProcess);
MAINBOARD_DECLARE_JSON(MigDevice);
MAINBOARD_DECLARE_JSON(GpuInfo);
MAINBOARD_DECLARE_JSON(GpuLink);
MAINBOARD_DECLARE_JSON(XidError);
MAINBOARD_DECLARE_JSON(GpuHealth);
MAINBOARD_DECLARE_JSON(Unavailable);
MAINBOARD_DECLARE_JSON(GpuUnitActivity);
MAINBOARD_DECLARE_JSON(Reading<GpuUnitActivity>);
MAINBOARD_DECLARE_JSON(GpuSnapshot);

// memory.hpp
MAINBOARD_DECLARE_JSON(Memory);
MAINBOARD_DECLARE_JSON(Reading<Memory>);
MAINBOARD_DECLARE_JSON(DimmCard);
MAINBOARD_DECLARE_JSON(MemoryHardware);

// meter.hpp
MAINBOARD_DECLARE_JSON(DomainEnergy);
MAINBOARD_DECLARE_JSON(RegionEnergy);
MAINBOARD_DECLARE_JSON(CommandMeasurement);

// npu.hpp
MAINBOARD_DECLARE_JSON(NpuInfo);
MAINBOARD_DECLARE_JSON(NpuSnapshot);

// profile.hpp
MAINBOARD_DECLARE_JSON(SpanStat);
MAINBOARD_DECLARE_JSON(SpanEvent);
MAINBOARD_DECLARE_JSON(ThreadInfo);
MAINBOARD_DECLARE_JSON(RankInfo);
MAINBOARD_DECLARE_JSON(ClockReference);
MAINBOARD_DECLARE_JSON(TargetExit);
MAINBOARD_DECLARE_JSON(ProcessInfo);
MAINBOARD_DECLARE_JSON(RankSpread);
MAINBOARD_DECLARE_JSON(StepLag);
MAINBOARD_DECLARE_JSON(RankSummary);
MAINBOARD_DECLARE_JSON(Straggler);
MAINBOARD_DECLARE_JSON(TimeBreakdown);
MAINBOARD_DECLARE_JSON(RankReport);
MAINBOARD_DECLARE_JSON(DeviceSample);
MAINBOARD_DECLARE_JSON(GpuActivity);
MAINBOARD_DECLARE_JSON(LaunchShape);
MAINBOARD_DECLARE_JSON(KernelSummary);
MAINBOARD_DECLARE_JSON(RegionGpuTime);
MAINBOARD_DECLARE_JSON(TraceReport);
MAINBOARD_DECLARE_JSON(KernelEfficiency);
MAINBOARD_DECLARE_JSON(KernelCounters);
MAINBOARD_DECLARE_JSON(Change);
MAINBOARD_DECLARE_JSON(KernelDiff);
MAINBOARD_DECLARE_JSON(StackFrame);
MAINBOARD_DECLARE_JSON(StackSample);
MAINBOARD_DECLARE_JSON(FunctionStat);
MAINBOARD_DECLARE_JSON(StackStat);
MAINBOARD_DECLARE_JSON(IdleGap);
MAINBOARD_DECLARE_JSON(Timeline);
MAINBOARD_DECLARE_JSON(RegionDiff);
MAINBOARD_DECLARE_JSON(FunctionDiff);
MAINBOARD_DECLARE_JSON(ProfileDiff);
MAINBOARD_DECLARE_JSON(Profile);

// profile_report.hpp
MAINBOARD_DECLARE_JSON(Bound);
MAINBOARD_DECLARE_JSON(KernelStat);
MAINBOARD_DECLARE_JSON(IterationTimes);
MAINBOARD_DECLARE_JSON(ProfileReport);

// sampler.hpp
MAINBOARD_DECLARE_JSON(ThreadStack);
MAINBOARD_DECLARE_JSON(AsyncTask);
MAINBOARD_DECLARE_JSON(LocalVariable);
MAINBOARD_DECLARE_JSON(StackDump);

// snapshot.hpp
MAINBOARD_DECLARE_JSON(ProbeStatus);
MAINBOARD_DECLARE_JSON(Diagnostic);
MAINBOARD_DECLARE_JSON(MachineSnapshot);

// storage.hpp
MAINBOARD_DECLARE_JSON(BlockDevice);
MAINBOARD_DECLARE_JSON(Filesystem);
MAINBOARD_DECLARE_JSON(Disk);
MAINBOARD_DECLARE_JSON(StorageTier);
MAINBOARD_DECLARE_JSON(XidSource);
MAINBOARD_DECLARE_JSON(MemorySource);
MAINBOARD_DECLARE_JSON(TopologySource);
MAINBOARD_DECLARE_JSON(CacheSource);
MAINBOARD_DECLARE_JSON(ScratchCandidate);
MAINBOARD_DECLARE_JSON(Scratch);

// toolchain.hpp
MAINBOARD_DECLARE_JSON(ToolCategory);
MAINBOARD_DECLARE_JSON(DetectedTool);
MAINBOARD_DECLARE_JSON(Toolchain);
MAINBOARD_DECLARE_JSON(CompilerConfig);

// unit.hpp
MAINBOARD_DECLARE_JSON(UnitKind);
MAINBOARD_DECLARE_JSON(ClockReading);
MAINBOARD_DECLARE_JSON(Utilization);
MAINBOARD_DECLARE_JSON(Reading<Utilization>);
MAINBOARD_DECLARE_JSON(Energy);
MAINBOARD_DECLARE_JSON(Reading<Energy>);
MAINBOARD_DECLARE_JSON(Thermal);
MAINBOARD_DECLARE_JSON(Reading<Thermal>);
MAINBOARD_DECLARE_JSON(UnitSnapshot);

}  // namespace mainboard

#undef MAINBOARD_DECLARE_JSON
