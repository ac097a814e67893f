// The host's tuning for measurement (HostTuning): cpufreq governors and boost, SMT, ASLR,
// transparent huge pages, perf_event_paranoid. Files as the kernel documents them
// (Documentation/admin-guide/pm/cpufreq.rst, .../mm/transhuge.rst, sysctl/kernel.rst).
#include <algorithm>

#include "core/text.hpp"
#include "host/probes.hpp"

namespace mainboard::host {

namespace {

/// "always [madvise] never" → "madvise"; empty when no choice is bracketed.
std::string bracketed(std::string_view line) {
  auto open = line.find('[');
  auto close = line.find(']', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos || close <= open + 1)
    return {};
  return std::string(line.substr(open + 1, close - open - 1));
}

/// A sysctl-like file holding one small integer.
std::optional<int> small_int(const core::Fs& fs, std::string_view path) {
  auto v = fs.read_i64(path);
  if (!v || *v < -1000 || *v > 1000) return std::nullopt;
  return static_cast<int>(*v);
}

}  // namespace

HostTuning probe_tuning(const core::Fs& fs, Note& note) {
  HostTuning t;
  for (const auto& name : fs.list("/sys/devices/system/cpu")) {
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0) continue;
    auto id = core::parse_u64(std::string_view(name).substr(3));
    if (!id || *id > 1u << 20) continue;
    auto governor = fs.read_line("/sys/devices/system/cpu/" + name + "/cpufreq/scaling_governor");
    if (!governor) continue;
    auto g = std::string(core::trim(*governor));
    if (g.empty() || g.size() > 64) continue;
    t.governors[g].push_back(static_cast<std::uint32_t>(*id));
  }
  for (auto& [governor, cpus] : t.governors)
    std::sort(cpus.begin(), cpus.end());

  if (auto boost = small_int(fs, "/sys/devices/system/cpu/cpufreq/boost")) {
    t.boost = *boost != 0;
    t.boost_control = "/sys/devices/system/cpu/cpufreq/boost";
  } else if (auto no_turbo = small_int(fs, "/sys/devices/system/cpu/intel_pstate/no_turbo")) {
    t.boost = *no_turbo == 0;
    t.boost_control = "/sys/devices/system/cpu/intel_pstate/no_turbo";
  }
  if (auto smt = small_int(fs, "/sys/devices/system/cpu/smt/active")) t.smt_active = *smt != 0;
  t.aslr = small_int(fs, "/proc/sys/kernel/randomize_va_space");
  if (auto thp = fs.read_line("/sys/kernel/mm/transparent_hugepage/enabled"))
    t.transparent_hugepages = bracketed(*thp);
  t.perf_event_paranoid = small_int(fs, "/proc/sys/kernel/perf_event_paranoid");
  if (t.governors.empty() && !t.boost && !t.smt_active && !t.aslr &&
      t.transparent_hugepages.empty() && !t.perf_event_paranoid)
    note.unsupported("none of the tuning files under /sys and /proc could be read");
  return t;
}

}  // namespace mainboard::host
