#pragma once

/// The only place that spells the Linux system paths mainboard reads. Every read goes through
/// core::Fs, which puts the sysroot in front of these.
namespace mainboard::core::paths {

inline constexpr const char* kProcCpuinfo = "/proc/cpuinfo";
inline constexpr const char* kProcMeminfo = "/proc/meminfo";
inline constexpr const char* kProcLoadavg = "/proc/loadavg";
inline constexpr const char* kProcNetDev = "/proc/net/dev";
inline constexpr const char* kProcSelfCgroup = "/proc/self/cgroup";
inline constexpr const char* kProcSelfMountinfo = "/proc/self/mountinfo";
inline constexpr const char* kProcSelfMounts = "/proc/self/mounts";
inline constexpr const char* kProcSelfStatus = "/proc/self/status";
inline constexpr const char* kProcHostname = "/proc/sys/kernel/hostname";
inline constexpr const char* kProcArch = "/proc/sys/kernel/arch";
inline constexpr const char* kProcOsrelease = "/proc/sys/kernel/osrelease";

inline constexpr const char* kSysCpu = "/sys/devices/system/cpu";
inline constexpr const char* kSysCpufreq = "/sys/devices/system/cpu/cpufreq";
inline constexpr const char* kSysNode = "/sys/devices/system/node";
inline constexpr const char* kSysDmiId = "/sys/class/dmi/id";
inline constexpr const char* kSysBlock = "/sys/block";
inline constexpr const char* kSysFsCgroup = "/sys/fs/cgroup";
inline constexpr const char* kSysClassDrm = "/sys/class/drm";
inline constexpr const char* kSysClassAccel = "/sys/class/accel";
inline constexpr const char* kSysClassHabanalabs = "/sys/class/habanalabs";
inline constexpr const char* kSysKfdNodes = "/sys/class/kfd/kfd/topology/nodes";
inline constexpr const char* kSysAmdgpuVersion = "/sys/module/amdgpu/version";

inline constexpr const char* kEtcPasswd = "/etc/passwd";
inline constexpr const char* kEtcGroup = "/etc/group";

/// Files a gathered (recorded) host keeps beside its sysroot tree.
inline constexpr const char* kRecordDir = "/.mainboard";
inline constexpr const char* kRecordCommands = "/.mainboard/commands.json";
inline constexpr const char* kRecordEnvironment = "/.mainboard/environment.json";
inline constexpr const char* kRecordSpace = "/.mainboard/space.json";
inline constexpr const char* kRecordWritable = "/.mainboard/writable";
inline constexpr const char* kRecordIdentity = "/.mainboard/identity.json";
/// The CPU topology as hwloc XML (hwloc cannot read another root without changing the process
/// environment, so a recorded host carries its topology instead).
inline constexpr const char* kRecordTopology = "/.mainboard/topology.xml";

}  // namespace mainboard::core::paths
