#include <algorithm>

#include "core/clock.hpp"
#include "core/fs.hpp"
#include "host/darwin.hpp"
#include "host/probes.hpp"
#include "mainboard/cpu.hpp"
#include "mainboard/gpu.hpp"
#include "mainboard/npu.hpp"
#include "mainboard/snapshot.hpp"

namespace mainboard {

Utilization Unit::utilization() const {
  Utilization u;
  u.reason = "not exposed for this unit";
  return u;
}

Energy Unit::energy() const {
  Energy e;
  e.reason = "not exposed for this unit";
  return e;
}

Thermal Unit::thermal() const {
  Thermal t;
  t.reason = "not exposed for this unit";
  return t;
}

UnitSnapshot Unit::snapshot(const std::string& name) const {
  UnitSnapshot s;
  s.name = name;
  s.unit_name = label();
  s.kind = kind();
  s.vendor = vendor();
  s.timestamp_ns = core::monotonic_ns();
  s.clocks = clock_readings();
  s.memory = memory();
  s.utilization = utilization();
  s.energy = energy();
  s.thermal = thermal();
  return s;
}

PcieReading Gpu::pcie() const {
  PcieReading p;
  p.reason = "not exposed by this provider";
  return p;
}

std::optional<double> Gpu::fan_speed_pct() const {
  return std::nullopt;
}
std::vector<Memory> Gpu::memory_regions() const { return {}; }

std::vector<GpuProcess> Gpu::processes() const {
  return {};
}

GpuSnapshot Gpu::gpu_snapshot(const std::string& name) const {
  GpuSnapshot s;
  s.info = info();
  s.telemetry = snapshot(name);
  s.memory_regions = memory_regions();
  s.pcie = pcie();
  s.fan_speed_pct = fan_speed_pct();
  s.processes = processes();
  return s;
}

NpuSnapshot Npu::npu_snapshot(const std::string& name) const {
  return NpuSnapshot{info(), snapshot(name)};
}

Cpu::Cpu(CpuInfo info, std::shared_ptr<const core::Fs> fs, std::shared_ptr<const Runner> runner)
    : info_(std::move(info)), fs_(std::move(fs)), runner_(std::move(runner)) {}

Memory Cpu::memory() const { return host::host_memory(*fs_, runner_.get()); }

std::vector<ClockReading> Cpu::clock_readings() const {
  return host::read_cpu_clocks(*fs_);
}

CpuSnapshot Cpu::reading() const {
  CpuSnapshot s;
  s.info = info_;
  s.clocks = clock_readings();
  if (auto load = host::read_loadavg(*fs_)) {
    s.load_1m = load->one;
    s.load_5m = load->five;
    s.load_15m = load->fifteen;
  }
  return s;
}

namespace host {

Memory host_memory(const core::Fs& fs, const Runner* runner) {
  auto m = read_system_memory(fs);
  // No /proc/meminfo: a Mac (live or recorded) answers through sysctl and vm_stat.
  if (!m.supported && runner && !fs.exists("/proc") && darwin::available(*runner))
    return darwin::read_memory(*runner);
  return m;
}

}  // namespace host

std::optional<std::uint64_t> CpuInfo::cache_bytes(int level, const std::string& type) const {
  for (const auto& c : caches)
    if (c.level == level && c.type == type) return c.size_bytes;
  return std::nullopt;
}

double Memory::percent_used() const {
  if (total_bytes == 0 || !used_bytes) return 0.0;
  return 100.0 * static_cast<double>(*used_bytes) / static_cast<double>(total_bytes);
}

std::optional<std::uint32_t> MemoryHardware::speed_mhz() const {
  std::optional<std::uint32_t> best;
  for (const auto& c : cards)
    if (c.populated() && c.speed_mts && (!best || *c.speed_mts > *best)) best = c.speed_mts;
  return best;
}

std::size_t MemoryHardware::slots_used() const {
  return static_cast<std::size_t>(
      std::count_if(cards.begin(), cards.end(), [](const DimmCard& c) { return c.populated(); }));
}

std::vector<UnitKind> MachineSnapshot::kinds() const {
  std::vector<UnitKind> out{UnitKind::cpu};
  if (!gpus.empty()) out.push_back(UnitKind::gpu);
  if (!npus.empty()) out.push_back(UnitKind::npu);
  return out;
}

const Diagnostic* MachineSnapshot::diagnostic(const std::string& probe) const {
  for (const auto& d : diagnostics)
    if (d.probe == probe) return &d;
  return nullptr;
}

}  // namespace mainboard
