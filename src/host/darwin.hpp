#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "host/note.hpp"
#include "mainboard/cpu.hpp"
#include "mainboard/memory.hpp"
#include "mainboard/runner.hpp"

/// The host on macOS, through the commands macOS has (`sysctl`, `vm_stat`) run by the Runner:
/// no /proc there. Platform-neutral, so a recorded Mac replays on Linux and the parsing is tested
/// everywhere. (A native build could read the same sysctls with sysctlbyname; these are cheap
/// enough for a snapshot.)
namespace mainboard::host::darwin {

/// `sysctl KEY…` output ("key: value" per line) by key.
std::map<std::string, std::string> parse_sysctl(std::string_view text);
/// `vm_stat` output: the page size and the page counts by their label ("Pages active").
struct VmStat {
  std::uint64_t page_size = 4096;
  std::map<std::string, std::uint64_t> pages;
};
std::optional<VmStat> parse_vm_stat(std::string_view text);

/// Whether this runner looks like a Mac's (it can find sysctl and vm_stat).
bool available(const Runner& runner);
CpuInfo probe_cpu(const Runner& runner, Note& note);
/// hw.memsize for the total; used = (active + wired + compressed) pages, as Activity Monitor
/// counts "Memory Used".
Reading<Memory> read_memory(const Runner& runner, std::string scope = "system",
                            bool unified = false);

}  // namespace mainboard::host::darwin
