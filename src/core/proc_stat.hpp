#pragma once

// /proc/PID/stat, one parser for every reader of it (the meter's process tree, the live view).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mainboard::core {

/// What /proc/PID/stat says of a process.
struct ProcStat {
  std::uint32_t pid = 0;
  std::uint32_t ppid = 0;
  std::string name;  ///< comm, as the kernel keeps it (15 bytes at most)
  char state = '?';
  std::uint64_t cpu_ticks = 0;    ///< utime + stime, in clock ticks
  std::uint64_t start_ticks = 0;  ///< when it started, in clock ticks after boot
  std::uint64_t rss_pages = 0;
  std::uint32_t threads = 0;
};

/// Parses /proc/PID/stat. The name (field 2) is in parentheses and may itself hold spaces and
/// parentheses, so the fields after it are counted from the last ')'. Empty for anything that
/// is not such a line.
std::optional<ProcStat> parse_proc_stat(std::string_view text);

}  // namespace mainboard::core
