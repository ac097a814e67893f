#pragma once

// The counters a live view turns into rates: each CPU's time (/proc/stat) and each process's
// (/proc/PID/stat, core/proc_stat.hpp), with what names a process (its user, its command line).
// Parsers take the text; readers go through the Fs. Nothing here throws.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fs.hpp"
#include "core/proc_stat.hpp"

namespace mainboard::host {

/// One line of /proc/stat: a CPU's time in each state, in clock ticks since boot.
struct CpuTimes {
  int cpu = -1;  ///< -1 for the "cpu" line (every CPU summed)
  std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                steal = 0;
  std::uint64_t total() const {
    return user + nice + system + idle + iowait + irq + softirq + steal;
  }
};

/// The "cpu" and "cpuN" lines of /proc/stat (the summed line first); lines that are not numbers
/// are left out. Guest time is already in user and nice, so it is not added again.
std::vector<CpuTimes> parse_cpu_times(std::string_view text);

/// A process's command line (NUL-separated in /proc/PID/cmdline) with spaces between the words;
/// empty for a kernel thread or a process that has gone.
std::string command_line(std::string_view cmdline);

/// /proc/PID/cmdline, words separated by spaces (read as bytes: its words end in NULs, which a
/// text read refuses); at most `max_bytes` of it.
std::string read_command_line(const core::Fs& fs, std::uint32_t pid, std::size_t max_bytes = 65536);

/// The real user id of /proc/PID/status ("Uid:\t1000\t1000\t1000\t1000").
std::optional<std::uint32_t> status_uid(std::string_view status);

/// /etc/passwd as a map from user id to name.
std::map<std::uint32_t, std::string> user_names(std::string_view passwd);

/// Reads /proc/stat through `fs`.
std::vector<CpuTimes> read_cpu_times(const core::Fs& fs);

/// The PIDs under /proc.
std::vector<std::uint32_t> list_pids(const core::Fs& fs);

/// Seconds since boot (/proc/uptime's first figure).
std::optional<double> uptime_s(const core::Fs& fs);

}  // namespace mainboard::host
