#include "view/gpus.hpp"

#include "view/format.hpp"

#include <fmt/format.h>

namespace mainboard::view {

namespace {

std::string why(const Style& style, const std::string& what, const std::string& reason) {
  return style.warn(what + " unavailable") + (reason.empty() ? "" : style.dim(" (" + reason + ")"));
}

std::string rate_kbps(double kbps) {
  return bytes(static_cast<std::uint64_t>(kbps * 1024.0)) + "/s";
}

/// Where a GPU process is, when not simply here: " (host pid 4242)", " (pid 17 in its
/// container)", " (another PID namespace)".
std::string process_where(const GpuProcess& p) {
  if (!p.visible) return " (host pid; in another PID namespace)";
  std::string where;
  if (p.host_pid) where += fmt::format(" (host pid {})", *p.host_pid);
  if (p.container_pid) where += fmt::format(" (pid {} in its container)", *p.container_pid);
  return where;
}

/// GPM's unit activity: "SMs active 92 % (occupancy 48 %) · tensor 62 % · DRAM bandwidth 71 %".
std::string unit_activity_line(const GpuUnitActivity& a) {
  std::vector<std::string> parts;
  if (a.sm_active_pct)
    parts.push_back(
        fmt::format("SMs active {:.0f} %", *a.sm_active_pct) +
        (a.sm_occupancy_pct ? fmt::format(" (occupancy {:.0f} %)", *a.sm_occupancy_pct) : ""));
  if (a.tensor_active_pct) parts.push_back(fmt::format("tensor {:.0f} %", *a.tensor_active_pct));
  if (a.dram_bandwidth_pct)
    parts.push_back(fmt::format("DRAM bandwidth {:.0f} %", *a.dram_bandwidth_pct));
  if (parts.empty()) return {};
  return join(parts, " · ") + (a.window_s ? fmt::format(" over {:.1f} s", *a.window_s) : "");
}

/// NVLink at a glance: "NVLink4 17/18 up · tx 72.0 MiB rx 144 MiB since driver load · link 2:
/// 12 replays, 1 recovery, 3 CRC errors".
std::string links_line(const std::vector<GpuLink>& links) {
  if (links.empty()) return {};
  std::size_t up = 0;
  std::uint64_t tx = 0, rx = 0;
  bool counted = false;
  std::vector<std::string> errors;
  for (const auto& l : links) {
    up += l.active ? 1 : 0;
    if (l.tx_bytes || l.rx_bytes) counted = true;
    tx += l.tx_bytes.value_or(0);
    rx += l.rx_bytes.value_or(0);
    std::vector<std::string> e;
    auto count = [&](const std::optional<std::uint64_t>& n, const char* one, const char* many) {
      if (n.value_or(0)) e.push_back(plural(*n, one, many));
    };
    count(l.replay_errors, "replay", "replays");
    count(l.recovery_errors, "recovery", "recoveries");
    count(l.crc_errors, "CRC error", "CRC errors");
    if (!e.empty()) errors.push_back(fmt::format("link {}: {}", l.link, join(e, ", ")));
  }
  std::string version = links.front().version ? fmt::format("{}", *links.front().version) : "";
  std::vector<std::string> parts = {fmt::format("NVLink{} {}/{} up", version, up, links.size())};
  if (counted) parts.push_back("tx " + bytes(tx) + " rx " + bytes(rx) + " since driver load");
  for (auto& e : errors)
    parts.push_back(std::move(e));
  return join(parts, " · ");
}

/// XIDs: "no XIDs since boot", or "2 XIDs since boot, last 45 (preemptive cleanup …) pid 4242
/// python3".
std::string xid_line(const GpuHealth& h) {
  if (!h.xid_errors) return {};
  if (*h.xid_errors == 0 || !h.last_xid) return fmt::format("no XIDs {}", h.xid_period());
  const auto& x = *h.last_xid;
  std::string out =
      fmt::format("{} {}, last {}", plural(*h.xid_errors, "XID", "XIDs"), h.xid_period(), x.code);
  if (!x.meaning.empty()) out += " (" + x.meaning + ")";
  if (x.pid) out += fmt::format(" pid {}", *x.pid);
  if (!x.process.empty()) out += " " + x.process;
  return out;
}

}  // namespace

std::string cuda_stack_line(const CudaStack& c) {
  std::vector<std::string> parts;
  if (!c.driver_version.empty())
    parts.push_back("driver " + c.driver_version +
                    (c.cuda_driver_version.empty() ? "" : " (CUDA " + c.cuda_driver_version + ")"));
  auto lib = [&](const char* name, const LibraryInfo& l) {
    parts.push_back(l.found ? std::string(name) + (l.version.empty() ? "" : " " + l.version)
                            : std::string("no ") + name);
  };
  lib("NVML", c.nvml);
  lib("libcuda", c.cuda_driver);
  lib("CUPTI", c.cupti);
  lib("CUDA runtime", c.cuda_runtime);
  if (c.nvcc_version) parts.push_back("nvcc " + *c.nvcc_version);
  return join(parts, " · ");
}

std::string render_gpus(const std::vector<GpuSnapshot>& gpus, const std::vector<NpuSnapshot>& npus,
                        const CudaStack& cuda, const Style& style) {
  std::string out;
  auto line = [&](const std::string& label, const std::string& text) {
    out += "  " + style.label(fmt::format("{:<7}", label)) + text + "\n";
  };
  auto more = [&](const std::string& text) {
    if (!text.empty()) out += "         " + text + "\n";
  };
  if (gpus.empty()) line("GPUs", style.dim("none found"));
  for (const auto& g : gpus) {
    const auto& i = g.info;
    const auto& t = g.telemetry;
    const auto& util = t.utilization.or_empty();
    const auto& heat = t.thermal.or_empty();
    const auto& power_now = t.energy.or_empty();
    const auto& link = g.pcie.or_empty();
    std::vector<std::string> id = {i.label};
    if (!i.architecture.empty()) id.push_back(i.architecture + " " + i.arch_key);
    if (i.sm_count) id.push_back(fmt::format("{} SMs", *i.sm_count));
    if (i.core_count) id.push_back(fmt::format("{} GPU cores", *i.core_count));
    if (!i.metal_support.empty()) id.push_back(i.metal_support);
    if (i.peak_bandwidth_gbs) id.push_back(fmt::format("{:.0f} GB/s peak", *i.peak_bandwidth_gbs));
    if (i.coherent) id.push_back("coherent with the host");
    line(fmt::format("GPU {}", i.index), style.bold(join(id, " · ")));
    more(join({i.uuid, i.pci_bus_id.empty() ? "" : "PCI " + i.pci_bus_id,
               i.driver_version.empty() ? "" : "driver " + i.driver_version},
              " · "));
    if (i.mig_enabled && *i.mig_enabled) {
      std::vector<std::string> migs;
      for (const auto& m : i.mig_devices)
        migs.push_back(m.uuid + (m.memory_total_bytes ? " " + bytes(*m.memory_total_bytes) : ""));
      more("MIG " + join(migs, ", "));
    }
    // Readings that are missing for the same reason are said once.
    std::vector<std::pair<std::string, std::string>> missing;  // (what, why)
    auto unavailable = [&](const std::string& what, const std::string& reason) {
      for (auto& m : missing)
        if (m.second == reason) {
          m.first += ", " + what;
          return;
        }
      missing.emplace_back(what, reason);
    };
    std::vector<std::string> live;
    if (const auto& m = t.memory)
      live.push_back("memory " + capacity_pair(m->used_bytes.value_or(0), m->total_bytes) +
                     (m->source == MemorySource::cuda
                          ? (m->unified ? " (unified; the CUDA driver's figure)"
                                        : " (the CUDA driver's figure)")
                      : m->unified ? " (unified)"
                                   : ""));
    else
      unavailable("memory", m.reason());
    for (const auto& r : g.memory_regions)
      live.push_back(r.scope + " " + capacity_pair(r.used_bytes.value_or(0), r.total_bytes));
    if (t.utilization.ok())
      live.push_back(
          fmt::format("util {:.0f} %", util.compute_pct.value_or(0)) +
          (util.memory_pct ? fmt::format(" (memory controller {:.0f} %)", *util.memory_pct) : ""));
    else
      unavailable("utilization", t.utilization.reason());
    more(join(live, " · "));
    std::vector<std::string> clocks;
    bool has_sm = false;
    for (const auto& c : t.clocks)
      has_sm = has_sm || c.domain == "sm";
    for (const auto& c : t.clocks)
      if (c.domain == "sm" || c.domain == "memory" || (!has_sm && c.domain == "graphics"))
        clocks.push_back(fmt::format("{} {:.0f}{} MHz", c.domain, c.current_mhz.value_or(0),
                                     c.max_mhz ? fmt::format("/{:.0f}", *c.max_mhz) : ""));
    std::string thermal;
    if (t.thermal.ok()) {
      thermal = fmt::format("{:.0f} °C", *heat.temperature_c);
      if (heat.slowdown_c) thermal += fmt::format(" (slowdown {:.0f} °C)", *heat.slowdown_c);
      if (!heat.throttle_reasons.empty()) thermal += " " + join(heat.throttle_reasons, ",");
    } else {
      unavailable("temperature", t.thermal.reason());
    }
    more(join({join(clocks, ", "), thermal,
               g.fan_speed_pct ? fmt::format("fan {:.0f} %", *g.fan_speed_pct) : ""},
              " · "));
    std::vector<std::string> power;
    if (t.energy.ok()) {
      if (power_now.power_w)
        power.push_back(
            fmt::format("{:.0f} W", *power_now.power_w) +
            (power_now.power_limit_w ? fmt::format(" of {:.0f} W", *power_now.power_limit_w) : ""));
      if (power_now.energy_j)
        power.push_back(fmt::format("{:.1f} kJ since driver load", *power_now.energy_j / 1000));
    } else {
      unavailable("power", t.energy.reason());
    }
    if (link.link_gen)
      power.push_back(fmt::format("PCIe gen{} x{}", *link.link_gen, link.link_width.value_or(0)));
    if (link.tx_kbps)
      power.push_back("tx " + rate_kbps(*link.tx_kbps) + " rx " +
                      rate_kbps(link.rx_kbps.value_or(0)));
    more(join(power, " · "));
    more(unit_activity_line(g.unit_activity.or_empty()));
    if (g.health) {
      more(links_line(g.health->links));
      more(xid_line(*g.health));
      if (auto xid = g.health->unavailable.find("xid"); xid != g.health->unavailable.end())
        unavailable("XIDs", xid->second.reason);
    }
    for (const auto& [what, reason] : missing)
      more(why(style, what, reason));
    for (const auto& p : g.processes)
      more(fmt::format("pid {} {}{}{}", p.pid, p.name.empty() ? "?" : p.name,
                       p.used_memory_bytes ? " " + bytes(*p.used_memory_bytes) : "",
                       process_where(p)));
  }
  for (const auto& n : npus) {
    const auto& i = n.info;
    const auto& t = n.telemetry;
    const auto& util = t.utilization.or_empty();
    line(fmt::format("NPU {}", i.index),
         style.bold(join({i.label, i.architecture, i.driver}, " · ")));
    std::vector<std::string> parts;
    if (!i.pci_bus_id.empty()) parts.push_back("PCI " + i.pci_bus_id);
    for (const auto& c : t.clocks)
      parts.push_back(fmt::format("clock {:.0f}{} MHz", c.current_mhz.value_or(0),
                                  c.max_mhz ? fmt::format("/{:.0f}", *c.max_mhz) : ""));
    if (const auto& m = t.memory)
      parts.push_back("memory " + capacity_pair(m->used_bytes.value_or(0), m->total_bytes) +
                      (m->unified ? " (unified)" : ""));
    if (t.utilization.ok())
      parts.push_back(fmt::format("busy {:.0f} %", util.compute_pct.value_or(0)));
    if (!parts.empty()) more(join(parts, " · "));
  }
  bool any_cuda = cuda.nvml.found || cuda.cuda_driver.found || cuda.cupti.found ||
                  cuda.cuda_runtime.found || cuda.nvcc_version;
  line("CUDA", any_cuda ? cuda_stack_line(cuda) : style.dim("none found"));
  return out;
}

}  // namespace mainboard::view
