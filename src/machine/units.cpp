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

Reading<Utilization> Unit::utilization() const {
  return Unavailable{ProbeStatus::unsupported, "not exposed for this unit"};
}

Reading<Energy> Unit::energy() const {
  return Unavailable{ProbeStatus::unsupported, "not exposed for this unit"};
}

Reading<Thermal> Unit::thermal() const {
  return Unavailable{ProbeStatus::unsupported, "not exposed for this unit"};
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

Reading<PcieReading> Gpu::pcie() const {
  return Unavailable{ProbeStatus::unsupported, "not exposed by this provider"};
}

std::optional<double> Gpu::fan_speed_pct() const {
  return std::nullopt;
}
std::vector<Memory> Gpu::memory_regions() const {
  return {};
}

std::vector<GpuProcess> Gpu::processes() const {
  return {};
}

bool Gpu::lists_processes() const {
  return false;
}

GpuHealth Gpu::health() const {
  return {};
}

Reading<GpuUnitActivity> Gpu::unit_activity() const {
  return Unavailable{ProbeStatus::unsupported, "not exposed by this provider"};
}

GpuSnapshot Gpu::gpu_snapshot(const std::string& name) const {
  GpuSnapshot s;
  s.info = info();
  s.telemetry = snapshot(name);
  s.memory_regions = memory_regions();
  s.pcie = pcie();
  s.fan_speed_pct = fan_speed_pct();
  s.processes = processes();
  if (auto h = health(); h != GpuHealth{}) s.health = std::move(h);
  s.unit_activity = unit_activity();
  return s;
}

NpuSnapshot Npu::npu_snapshot(const std::string& name) const {
  return NpuSnapshot{info(), snapshot(name)};
}

Cpu::Cpu(CpuInfo info, std::shared_ptr<const Readers> readers)
    : info_(std::move(info)), readers_(std::move(readers)) {}
Cpu::~Cpu() = default;

Reading<Memory> Cpu::memory() const {
  return host::host_memory(*readers_->fs, readers_->runner.get());
}

std::vector<ClockReading> Cpu::clock_readings() const {
  return host::read_cpu_clocks(*readers_->fs);
}

CpuSnapshot Cpu::reading() const {
  CpuSnapshot s;
  s.info = info_;
  s.clocks = clock_readings();
  if (auto load = host::read_loadavg(*readers_->fs)) {
    s.load_1m = load->one;
    s.load_5m = load->five;
    s.load_15m = load->fifteen;
  }
  return s;
}

namespace host {

Reading<Memory> host_memory(const core::Fs& fs, const Runner* runner) {
  auto m = read_system_memory(fs);
  // No /proc/meminfo: a Mac (live or recorded) answers through sysctl and vm_stat.
  if (!m && runner && !fs.exists("/proc") && darwin::available(*runner))
    return darwin::read_memory(*runner);
  return m;
}

}  // namespace host

}  // namespace mainboard
