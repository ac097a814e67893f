// MachineWatch (mainboard/live.hpp): the machine's changing state, read again and again, its
// counters turned into rates over the time between two readings.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "core/fs.hpp"
#include "host/live.hpp"
#include "mainboard/live.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/sensors.hpp"

namespace mainboard {

namespace {

double share(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

/// What a CPU did between two readings of /proc/stat. A counter that went back (a CPU taken
/// offline and brought back) counts as nothing done.
CpuUse cpu_use(const host::CpuTimes& was, const host::CpuTimes& now) {
  auto d = [](std::uint64_t a, std::uint64_t b) { return b >= a ? b - a : 0; };
  std::uint64_t user = d(was.user, now.user) + d(was.nice, now.nice);
  std::uint64_t system =
      d(was.system, now.system) + d(was.irq, now.irq) + d(was.softirq, now.softirq);
  std::uint64_t idle = d(was.idle, now.idle);
  std::uint64_t iowait = d(was.iowait, now.iowait);
  std::uint64_t steal = d(was.steal, now.steal);
  std::uint64_t total = user + system + idle + iowait + steal;
  CpuUse u;
  u.cpu = now.cpu;
  u.user_pct = share(user, total);
  u.system_pct = share(system, total);
  u.iowait_pct = share(iowait, total);
  u.steal_pct = share(steal, total);
  u.busy_pct = share(user + system + steal, total);
  return u;
}

}  // namespace

struct MachineWatch::State {
  const Machine* machine;
  bool all = false;
  core::Fs fs;
  double ticks_per_s = 100;
  std::uint64_t page_bytes = 4096;
  std::map<std::uint32_t, std::string> users;
  std::uint64_t sequence = 0;
  std::chrono::steady_clock::time_point last_time;
  std::vector<host::CpuTimes> last_cpu;
  /// A process's CPU ticks and start time at the last reading (the start tells a PID reused).
  std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> last_process;
  std::map<std::string, std::pair<std::uint64_t, std::optional<std::uint64_t>>> last_energy;
  struct GpuStart {
    std::optional<std::uint64_t> ecc_corrected, ecc_uncorrected, xids;
    std::optional<std::uint64_t> nvlink_tx, nvlink_rx;
  };
  std::vector<GpuStart> gpu_start, gpu_last;

  State(const Machine& m, bool all_processes) : machine(&m), all(all_processes), fs(m.sysroot()) {
    if (long t = ::sysconf(_SC_CLK_TCK); t > 0) ticks_per_s = static_cast<double>(t);
    if (long p = ::sysconf(_SC_PAGESIZE); p > 0) page_bytes = static_cast<std::uint64_t>(p);
    if (auto passwd = fs.read("/etc/passwd")) users = host::user_names(*passwd);
  }

  std::string user_name(std::uint32_t uid) const {
    auto it = users.find(uid);
    return it != users.end() ? it->second : std::to_string(uid);
  }

  void read_cpus(LiveFrame& f, double seconds) {
    auto now = host::read_cpu_times(fs);
    if (seconds > 0)
      for (const auto& t : now) {
        auto was = std::find_if(last_cpu.begin(), last_cpu.end(),
                                [&](const host::CpuTimes& w) { return w.cpu == t.cpu; });
        if (was == last_cpu.end()) continue;
        if (t.cpu < 0)
          f.cpu_total = cpu_use(*was, t);
        else
          f.cpus.push_back(cpu_use(*was, t));
      }
    last_cpu = std::move(now);
  }

  /// Every CPU package's energy counter (RAPL) over the interval: the package zones only (their
  /// core and uncore subzones are inside them), a counter that wrapped corrected by its range.
  void read_power(LiveFrame& f, const Reading<EnergyCounters>& counters, double seconds) {
    if (!counters) return;
    double joules = 0;
    bool any = false;
    std::map<std::string, std::pair<std::uint64_t, std::optional<std::uint64_t>>> now;
    for (const auto& c : counters->counters) {
      if (c.domain != "package") continue;
      now[c.zone] = {c.energy_uj, c.max_energy_range_uj};
      auto was = last_energy.find(c.zone);
      if (was == last_energy.end() || seconds <= 0) continue;
      std::uint64_t d = 0;
      if (c.energy_uj >= was->second.first)
        d = c.energy_uj - was->second.first;
      else if (c.max_energy_range_uj && *c.max_energy_range_uj >= was->second.first)
        d = *c.max_energy_range_uj - was->second.first + c.energy_uj;
      else
        continue;
      joules += static_cast<double>(d) / 1e6;
      any = true;
    }
    last_energy = std::move(now);
    if (any) f.cpu_power_w = joules / seconds;
  }

  static void read_temperature(LiveFrame& f, const Reading<Temperatures>& t) {
    if (!t) return;
    for (const char* kind : {"cpu_package", "cpu"}) {
      for (const auto& s : t->sensors)
        if (s.kind == kind && (!f.cpu_temperature_c || s.celsius > *f.cpu_temperature_c))
          f.cpu_temperature_c = s.celsius;
      if (f.cpu_temperature_c) return;
    }
  }

  void read_gpus(LiveFrame& f, double seconds) {
    const auto& gpus = machine->gpus();
    gpu_start.resize(gpus.size());
    gpu_last.resize(gpus.size());
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      LiveGpu g;
      g.reading = gpus[i]->gpu_snapshot();
      GpuStart now;
      if (const auto& h = g.reading.health) {
        now.ecc_corrected = h->ecc_corrected_volatile;
        now.ecc_uncorrected = h->ecc_uncorrected_volatile;
        if (h->xid_errors) now.xids = *h->xid_errors;
        std::uint64_t tx = 0, rx = 0;
        bool counted = false;
        for (const auto& l : h->links)
          if (l.tx_bytes && l.rx_bytes) {
            tx += *l.tx_bytes;
            rx += *l.rx_bytes;
            counted = true;
          }
        if (counted) {
          now.nvlink_tx = tx;
          now.nvlink_rx = rx;
        }
      }
      auto& start = gpu_start[i];
      auto& last = gpu_last[i];
      if (sequence == 0) start = now;
      auto since = [](const std::optional<std::uint64_t>& a,
                      const std::optional<std::uint64_t>& b) -> std::optional<std::uint64_t> {
        if (!a || !b) return std::nullopt;
        return *b >= *a ? *b - *a : 0;
      };
      // A counter first read after the start (a driver that answered late) starts there.
      if (!start.ecc_corrected) start.ecc_corrected = now.ecc_corrected;
      if (!start.ecc_uncorrected) start.ecc_uncorrected = now.ecc_uncorrected;
      if (!start.xids) start.xids = now.xids;
      g.ecc_corrected_since_start = since(start.ecc_corrected, now.ecc_corrected);
      g.ecc_uncorrected_since_start = since(start.ecc_uncorrected, now.ecc_uncorrected);
      g.xids_since_start = since(start.xids, now.xids);
      if (seconds > 0) {
        if (auto d = since(last.nvlink_tx, now.nvlink_tx))
          g.nvlink_tx_bytes_per_s = static_cast<double>(*d) / seconds;
        if (auto d = since(last.nvlink_rx, now.nvlink_rx))
          g.nvlink_rx_bytes_per_s = static_cast<double>(*d) / seconds;
      }
      last = now;
      f.gpus.push_back(std::move(g));
    }
  }

  void read_processes(LiveFrame& f, double seconds) {
    // The GPUs' processes first: which GPUs each is on and what it holds there.
    std::map<std::uint32_t, LiveProcess> found;
    for (const auto& g : f.gpus)
      for (const auto& p : g.reading.processes) {
        auto& row = found[p.pid];
        row.pid = p.pid;
        row.visible = p.visible;
        if (row.name.empty()) row.name = p.name;
        row.gpus.push_back(g.reading.info.index);
        if (p.used_memory_bytes)
          row.gpu_memory_bytes = row.gpu_memory_bytes.value_or(0) + *p.used_memory_bytes;
      }
    if (all)
      for (auto pid : host::list_pids(fs))
        found[pid].pid = pid;
    auto uptime = f.uptime_s;
    std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> now;
    for (auto& [pid, row] : found) {
      if (!row.visible) {
        f.processes.push_back(std::move(row));
        continue;
      }
      std::string dir = "/proc/" + std::to_string(pid);
      auto stat_text = fs.read(dir + "/stat", 4096);
      auto stat = stat_text ? core::parse_proc_stat(*stat_text) : std::nullopt;
      if (!stat) {
        // Gone since it was listed: a GPU's process stays (the driver named it), others go.
        if (!row.gpus.empty()) f.processes.push_back(std::move(row));
        continue;
      }
      row.ppid = stat->ppid;
      row.name = stat->name;
      row.threads = stat->threads;
      row.rss_bytes = stat->rss_pages * page_bytes;
      double started = static_cast<double>(stat->start_ticks) / ticks_per_s;
      if (uptime && *uptime >= started) row.elapsed_s = *uptime - started;
      now[pid] = {stat->cpu_ticks, stat->start_ticks};
      if (auto was = last_process.find(pid); seconds > 0 && was != last_process.end() &&
                                             was->second.second == stat->start_ticks &&
                                             stat->cpu_ticks >= was->second.first)
        row.cpu_pct = 100.0 * static_cast<double>(stat->cpu_ticks - was->second.first) /
                      ticks_per_s / seconds;
      if (auto status = fs.read(dir + "/status", 65536))
        if (auto uid = host::status_uid(*status)) row.user = user_name(*uid);
      row.command = host::read_command_line(fs, pid);
      if (row.command.empty()) row.command = "[" + row.name + "]";
      f.processes.push_back(std::move(row));
    }
    last_process = std::move(now);
  }
};

MachineWatch::MachineWatch(const Machine& machine, bool all_processes)
    : state_(std::make_unique<State>(machine, all_processes)) {}

MachineWatch::~MachineWatch() = default;

void MachineWatch::list_all_processes(bool all) {
  state_->all = all;
}

LiveFrame MachineWatch::next() {
  auto& s = *state_;
  LiveFrame f;
  auto now = std::chrono::steady_clock::now();
  double seconds = s.sequence == 0 ? 0.0 : std::chrono::duration<double>(now - s.last_time).count();
  s.last_time = now;
  f.sequence = s.sequence;
  f.interval_s = seconds;
  f.unix_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  f.all_processes = s.all;
  const Machine& m = *s.machine;
  f.hostname = m.hostname();
  f.uptime_s = host::uptime_s(s.fs);
  s.read_cpus(f, seconds);
  auto cpu = m.reading("cpu_clocks");
  f.load_1m = cpu.cpu.load_1m;
  f.load_5m = cpu.cpu.load_5m;
  f.load_15m = cpu.cpu.load_15m;
  f.memory = m.memory();
  auto swap = m.reading("swap");
  f.swap_total_bytes = swap.memory_hardware.swap_total_bytes;
  f.swap_used_bytes = swap.memory_hardware.swap_used_bytes;
  f.cgroup_memory = m.cgroup_memory();
  f.pressure = m.pressure();
  s.read_power(f, m.reading("energy_counters").energy_counters, seconds);
  State::read_temperature(f, m.reading("temperatures").temperatures);
  s.read_gpus(f, seconds);
  for (const auto& npu : m.npus())
    f.npus.push_back(npu->npu_snapshot());
  s.read_processes(f, seconds);
  ++s.sequence;
  return f;
}

}  // namespace mainboard
