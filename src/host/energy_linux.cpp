// RAPL energy counters through the powercap class (Documentation/power/powercap/powercap.rst):
//
//   /sys/class/powercap/intel-rapl:0/name                 package-0 (package-0-die-1 on
//                                                         multi-die parts)
//   /sys/class/powercap/intel-rapl:0/energy_uj            123456789 (microjoules, wraps)
//   /sys/class/powercap/intel-rapl:0/max_energy_range_uj  262143328850 (where it wraps)
//   /sys/class/powercap/intel-rapl:0:0/name               core, uncore or dram
//   /sys/class/powercap/intel-rapl:1/name                 psys (the platform, where offered)
//
// The class directory lists zones and subzones side by side. AMD's RAPL (family 17h and later,
// Linux 5.11) is driven by the same intel_rapl_common code and appears under the same names;
// the perf "power" PMU (arch/x86/events/rapl.c) reads the same MSRs and is not needed here.
// intel-rapl-mmio:N repeats a package's counter through MMIO (for power limits): it is skipped,
// so a package is never counted twice. Since Linux 5.10 (CVE-2020-8694, a side channel through
// the counters' resolution) energy_uj is mode 0400, root's.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/fs.hpp"
#include "core/text.hpp"
#include "host/readers.hpp"

namespace mainboard::host {

namespace {

constexpr const char* kRaplPowercap = "/sys/class/powercap";
constexpr const char* kRaplOnlyRoot =
    "only root may read RAPL energy counters (since Linux 5.10, CVE-2020-8694)";

/// "intel-rapl:0" → {0}, "intel-rapl:0:2" → {0, 2}; empty for anything else (the control type
/// "intel-rapl", "intel-rapl-mmio:0", another driver's zones).
std::vector<std::uint32_t> rapl_zone_numbers(std::string_view zone) {
  constexpr std::string_view prefix = "intel-rapl:";
  if (!core::starts_with(zone, prefix)) return {};
  std::vector<std::uint32_t> out;
  for (auto part : core::split(zone.substr(prefix.size()), ':')) {
    auto n = core::parse_u64(part);
    if (!n || *n > 0xffff) return {};
    out.push_back(static_cast<std::uint32_t>(*n));
  }
  if (out.empty() || out.size() > 2) return {};
  return out;
}

/// The domain of a zone's name: "package-0" and "package-0-die-1" → package (of package 0);
/// core, uncore, dram, psys as they are. Empty for a name that is none of these.
std::optional<std::pair<std::string, std::optional<std::uint32_t>>> rapl_domain(
    std::string_view name) {
  if (core::starts_with(name, "package-")) {
    auto rest = name.substr(8);
    auto dash = rest.find('-');
    auto number = core::parse_u64(rest.substr(0, dash));
    if (!number || *number > 0xffff) return std::nullopt;
    if (dash != std::string_view::npos && !core::starts_with(rest.substr(dash), "-die-"))
      return std::nullopt;
    return std::pair{std::string("package"), std::optional(static_cast<std::uint32_t>(*number))};
  }
  for (const char* known : {"core", "uncore", "dram", "psys"})
    if (name == known) return std::pair{std::string(known), std::optional<std::uint32_t>()};
  return std::nullopt;
}

/// Whether a file that exists refuses this process (EACCES or EPERM), as energy_uj does for
/// anyone but root since Linux 5.10.
bool rapl_refused(const core::Fs& fs, const std::string& path) {
  int fd = fs.open(path, O_RDONLY | O_NONBLOCK);
  if (fd >= 0) {
    ::close(fd);
    return false;
  }
  return errno == EACCES || errno == EPERM;
}

/// A short quote of a value that did not parse, safe for one line.
std::string rapl_quote(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 24))
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return "'" + out + (text.size() > 24 ? "…'" : "'");
}

}  // namespace

Reading<EnergyCounters> read_energy_counters(const Sources& sources, const MachineSnapshot&,
                                             Note& note) {
  const core::Fs& fs = *sources.fs;
  std::vector<std::pair<std::vector<std::uint32_t>, std::string>> zones;
  for (const auto& entry : fs.list_fixed(kRaplPowercap)) {
    auto numbers = rapl_zone_numbers(entry);
    if (!numbers.empty()) zones.emplace_back(std::move(numbers), entry);
  }
  if (zones.empty()) {
    std::string why =
        "no RAPL energy counters (no /sys/class/powercap/intel-rapl:N): not an Intel or AMD "
        "CPU with RAPL, a virtual machine, or the intel_rapl_msr module not loaded";
    note.unsupported(why);
    return Reading<EnergyCounters>::none(std::move(why));
  }
  // intel-rapl:2 before intel-rapl:10, and each package before its subzones.
  std::sort(zones.begin(), zones.end());

  EnergyCounters out;
  std::vector<std::string> left_out;
  std::size_t refused = 0;
  for (const auto& [numbers, zone] : zones) {
    std::string dir = std::string(kRaplPowercap) + "/" + zone;
    auto name = fs.read_line_fixed(dir + "/name");
    if (!name) {
      left_out.push_back(zone + ": no name");
      continue;
    }
    auto domain = rapl_domain(*name);
    if (!domain) {
      left_out.push_back(zone + ": unknown domain " + rapl_quote(*name));
      continue;
    }
    EnergyCounter c;
    c.zone = zone;
    c.domain = domain->first;
    c.package = domain->second;
    if (numbers.size() == 2)  // a subzone counts within its package: its parent's name says which
      if (auto parent = fs.read_line_fixed(std::string(kRaplPowercap) +
                                           "/intel-rapl:" + std::to_string(numbers[0]) + "/name"))
        if (auto parent_domain = rapl_domain(*parent)) c.package = parent_domain->second;

    std::string energy_path = dir + "/energy_uj";
    auto text = fs.read(energy_path, 64);
    if (!text) {
      bool present = fs.exists(energy_path);
      if (present && rapl_refused(fs, energy_path)) {
        ++refused;
        left_out.push_back(zone + ": " + kRaplOnlyRoot);
      } else {
        left_out.push_back(zone + (present ? ": energy_uj could not be read" : ": no energy_uj"));
      }
      continue;
    }
    auto energy = core::parse_u64(*text);
    if (!energy) {
      left_out.push_back(
          zone + ": energy_uj is not a count of microjoules: " + rapl_quote(core::trim(*text)));
      continue;
    }
    if (auto max_text = fs.read_fixed(dir + "/max_energy_range_uj")) {
      auto max = core::parse_u64(*max_text);
      if (max && *max > 0)
        c.max_energy_range_uj = max;
      else
        left_out.push_back(zone + ": max_energy_range_uj is not a count of microjoules: " +
                           rapl_quote(core::trim(*max_text)) + " (wrap-around not corrected)");
    }
    // The counter runs from 0 up to max_energy_range_uj and starts again: a value past it is
    // not a reading.
    if (c.max_energy_range_uj && *energy > *c.max_energy_range_uj) {
      left_out.push_back(zone + ": energy_uj " + std::to_string(*energy) +
                         " exceeds max_energy_range_uj " + std::to_string(*c.max_energy_range_uj));
      continue;
    }
    c.energy_uj = *energy;
    out.counters.push_back(std::move(c));
  }

  std::string reasons;
  for (const auto& r : left_out)
    reasons += (reasons.empty() ? "" : "; ") + r;
  if (out.counters.empty()) {
    if (refused > 0) {
      note.unsupported(kRaplOnlyRoot);
      return Reading<EnergyCounters>::none(kRaplOnlyRoot);
    }
    std::string why = "no RAPL energy counter could be read: " + reasons;
    note.failed(why);
    return Reading<EnergyCounters>::none(std::move(why), ProbeStatus::failed);
  }
  if (!reasons.empty()) note.reason = "left out " + reasons;
  return out;
}

}  // namespace mainboard::host
