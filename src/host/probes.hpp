#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/environ.hpp"
#include "core/fs.hpp"
#include "host/note.hpp"
#include "mainboard/board.hpp"
#include "mainboard/cgroup.hpp"
#include "mainboard/cpu.hpp"
#include "mainboard/environment.hpp"
#include "mainboard/memory.hpp"
#include "mainboard/runner.hpp"
#include "mainboard/storage.hpp"
#include "mainboard/toolchain.hpp"

/// Probes of the host: each reads bytes through core::Fs (or core Runner) and returns a model.
/// None of them throws; a reading that cannot be taken is marked in the model and in the Note.
namespace mainboard::host {

// cpu_linux.cpp
/// `cache`: where a topology read before is kept (and found, when nothing it depends on changed).
CpuInfo probe_cpu(const core::Fs& fs, Note& note, ToolCache* cache = nullptr);
/// Identity fields from /proc/cpuinfo alone (used by probe_cpu; exposed for tests).
CpuInfo parse_cpuinfo_identity(std::string_view cpuinfo);
std::vector<ClockReading> read_cpu_clocks(const core::Fs& fs);
struct LoadAverage {
  double one = 0, five = 0, fifteen = 0;
};
/// The load averages, or nothing with why in `why` (unreadable, not three finite numbers).
std::optional<LoadAverage> read_loadavg(const core::Fs& fs, std::string* why = nullptr);
/// Why a file that Fs::read returned nothing for could not be read: missing (errno), a FIFO or
/// other non-file, larger than `max_bytes`, or read but binary (a NUL inside), for a reason
/// that says what was read and what was not.
std::string unreadable_reason(const core::Fs& fs, std::string_view path, std::size_t max_bytes);
/// The architecture (as uname -m names it) that /proc/cpuinfo's layout says, or "" where it
/// says none: for a recorded host with no /proc/sys/kernel/arch.
std::string cpuinfo_architecture(std::string_view cpuinfo);

// memory_linux.cpp
Reading<Memory> read_system_memory(const core::Fs& fs, std::string scope = "system",
                                   bool unified = false);
/// System memory from /proc/meminfo, or, on a host without /proc, through sysctl and vm_stat.
Reading<Memory> host_memory(const core::Fs& fs, const Runner* runner);
/// SwapTotal and SwapTotal - SwapFree, in bytes.
std::optional<std::pair<std::uint64_t, std::uint64_t>> read_swap(const core::Fs& fs);
/// DIMMs from `dmidecode -t 17`, run through the runner; empty (and noted) when it is missing
/// or refused.
std::vector<DimmCard> probe_dimms(const core::Fs& fs, const Runner& runner, Note& note);
/// Whether there is an SMBIOS table for dmidecode to read (sysfs, or /dev/mem on old kernels).
bool smbios_table_present(const core::Fs& fs);
std::vector<DimmCard> parse_dmidecode_memory(std::string_view text);

// board_linux.cpp
Reading<Board> probe_board(const core::Fs& fs);

// environment_linux.cpp
Environment probe_environment(const core::Fs& fs, const core::EnvMap& env, const Runner& runner,
                              Note& note);
/// The scheduler whose job variables are set, if any.
std::optional<Job> detect_job(const core::EnvMap& env, const core::Fs* fs = nullptr);
std::vector<Scheduler> detect_schedulers(const Runner& runner);

// os_linux.cpp
/// The distribution (os-release), the kernel's release and the C library (`getconf
/// GNU_LIBC_VERSION`, through the runner).
OperatingSystem probe_os(const core::Fs& fs, const Runner& runner, Note& note);
/// The kernel settings that move measurements (host/tuning_linux.cpp).
HostTuning probe_tuning(const core::Fs& fs, Note& note);
/// KEY=value lines of an os-release file, quotes and escapes undone.
std::map<std::string, std::string> parse_os_release(std::string_view text);

// cgroup_linux.cpp
Reading<CgroupMemory> probe_cgroup_memory(const core::Fs& fs);

// storage_linux.cpp
struct MountEntry {
  std::string device;
  std::string mount_point;
  std::string type;
};
std::vector<MountEntry> parse_mounts(std::string_view text);
/// The mount holding `path`: the longest mount point that is a prefix of it.
std::optional<MountEntry> mount_for(const std::vector<MountEntry>& mounts, std::string_view path);
/// The disks under /sys/block; what could not be read of one (its size) is added to `problems`.
std::vector<BlockDevice> probe_block_devices(const core::Fs& fs,
                                             std::vector<std::string>* problems = nullptr);
Disk probe_disk(const core::Fs& fs, const core::EnvMap& env, Note& note);
Scratch probe_scratch(const core::Fs& fs, const core::EnvMap& env, Note& note);
StorageTier classify_filesystem(const std::string& type, const std::string& device,
                                const std::vector<BlockDevice>& devices);

/// The CPU topology as hwloc XML, for a recorded host (core::paths::kRecordTopology): this host's
/// (scrubbed of the host name), or the one a recorded host carries.
std::optional<std::string> topology_xml(const core::Fs& fs);

// hostname
std::string read_hostname(const core::Fs& fs);

}  // namespace mainboard::host

namespace mainboard {

/// Where a Cpu's live readings come from: the host's file system (a sysroot) and, on hosts
/// without /proc (a Mac, live or recorded), the runner for sysctl and vm_stat.
struct Cpu::Readers {
  std::shared_ptr<const core::Fs> fs;
  std::shared_ptr<const Runner> runner;
};

}  // namespace mainboard
