// The readiness rules (docs/check.md): pure functions of one machine snapshot, so that a recorded
// host (--sysroot) and the fake GPU drivers check exactly as a live node does.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "core/text.hpp"
#include "mainboard/check.hpp"
#include "mainboard/json.hpp"
#include "mainboard/topology_matrix.hpp"
#include "model/json_fields.hpp"
#include "view/format.hpp"

namespace mainboard {

namespace {

/// Why the load average is missing: the cpu_clocks probe's words about /proc/loadavg.
std::string load_unknown_reason(const MachineSnapshot& s) {
  if (const auto* d = s.diagnostic("cpu_clocks"))
    for (auto part : core::split(d->reason, ';'))
      if (part.find("/proc/loadavg") != std::string_view::npos)
        return std::string(core::trim(part));
  return "no readable /proc/loadavg";
}

/// "0-3,8,10-11" for a sorted list of CPU numbers.

std::string cpu_list(const std::vector<std::uint32_t>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
      ++j;
    if (!out.empty()) out += ',';
    out += j == i ? std::to_string(cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

struct Rules {
  const MachineSnapshot& s;
  std::vector<Finding> out;

  void add(std::string id, std::string subject, Severity severity, std::string reading,
           std::string why, std::string fix) {
    out.push_back({std::move(id), std::move(subject), severity, std::move(reading), std::move(why),
                   std::move(fix)});
  }

  void host() {
    const auto& t = s.tuning;
    if (t) tuning(*t);
    // Other work on the CPUs: the load average beyond what this check itself adds.
    auto threads = s.cpu.info.threads;
    if (s.cpu.load_1m && threads) {
      double load = *s.cpu.load_1m;
      auto reading = fmt::format("load {:.2f} on {} logical CPUs", load, threads);
      if (load > 0.5 * threads)
        add("cpu.load", "host", Severity::blocker, reading,
            "other processes keep more than half the CPUs busy: timings and throughput move with "
            "them",
            "wait for them to finish, or find them with `top -o %CPU`");
      else if (load > 0.1 * threads + 0.5)
        add("cpu.load", "host", Severity::warning, reading,
            "other processes are using CPU time the measured work would share",
            "find them with `top -o %CPU`");
    }
    memory();
    pressure();
    fabric();
    sensors_and_memory_errors();
    unknown();
    if (!s.scratch.found)
      add("scratch.none", "host", Severity::info, "no writable node-local directory found",
          "checkpoints and datasets then go to shared or home file systems", "");
    else if (s.scratch.free_bytes && *s.scratch.free_bytes < (10ull << 30))
      add("scratch.free", "host", Severity::warning,
          fmt::format("{} free on {}", view::bytes(*s.scratch.free_bytes), s.scratch.path),
          "a job writing checkpoints or caches there can fill it",
          "free space under " + s.scratch.path + ", or point TMPDIR elsewhere");
  }

  void tuning(const HostTuning& t) {
    std::vector<std::string> slow;
    for (const auto& [governor, cpus] : t.governors)
      if (governor != "performance") slow.push_back(governor + " on cpu" + cpu_list(cpus));
    if (!slow.empty())
      add("cpu.governor", "host", Severity::warning, "governor " + view::join(slow, "; "),
          "the clock follows the load, so the first part of every run is slower and timings vary",
          "cpupower frequency-set --governor performance");
    if (t.boost && *t.boost)
      add("cpu.boost", "host", Severity::info, "frequency boost (turbo) on",
          "the boost clock depends on temperature and on how many cores are busy: run-to-run "
          "variance for benchmarks (leave it on for throughput)",
          t.boost_control.find("no_turbo") != std::string::npos ? "echo 1 > " + t.boost_control
                                                                : "echo 0 > " + t.boost_control);
    if (t.smt_active && *t.smt_active)
      add("cpu.smt", "host", Severity::info, "simultaneous multithreading on",
          "two threads of one core share its units: a benchmark's figures depend on what runs "
          "on the sibling",
          "echo off > /sys/devices/system/cpu/smt/control (or pin to one thread per core)");
    if (t.aslr && *t.aslr != 0)
      add("kernel.aslr", "host", Severity::info,
          fmt::format("address space randomization {}", *t.aslr == 2 ? "full" : "partial"),
          "addresses change from run to run, and with them cache and branch-predictor conflicts",
          "setarch -R COMMAND for one run, or sysctl kernel.randomize_va_space=0");
    if (t.transparent_hugepages == "always")
      add("memory.thp", "host", Severity::warning, "transparent huge pages: always",
          "the kernel compacts memory to make huge pages, which stalls allocating programs at "
          "unpredictable moments",
          "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled");
    if (t.perf_event_paranoid && *t.perf_event_paranoid > 1 && s.environment.user != "root")
      add("perf.paranoid", "host", *t.perf_event_paranoid > 2 ? Severity::warning : Severity::info,
          fmt::format("kernel.perf_event_paranoid = {}", *t.perf_event_paranoid),
          *t.perf_event_paranoid > 2 ? "profile run and attach cannot sample without privileges"
                                     : "profiles get user-space stacks only (no kernel frames)",
          "sysctl kernel.perf_event_paranoid=1");
  }

  /// Memory and I/O stalls (PSI) in the last 10 s: "full" is time in which nothing ran, every
  /// task waited; "some" time in which at least one did.
  void pressure() {
    auto rule = [&](const char* resource, const std::optional<ResourcePressure>& r, const char* why,
                    const char* fix) {
      if (!r) return;
      double full = r->full ? r->full->avg10 : 0;
      auto reading = fmt::format("{} pressure: some {:.1f} %, full {:.1f} % of the last 10 s",
                                 resource, r->some.avg10, full);
      std::string id = std::string(resource) + ".pressure";
      if (full >= 10)
        add(id, "host", Severity::blocker, reading, why, fix);
      else if (r->some.avg10 >= 20)
        add(id, "host", Severity::warning, reading, why, fix);
    };
    if (!s.pressure) return;
    rule("memory", s.pressure->memory,
         "tasks wait for memory (reclaim, swap-in, thrashing): a benchmark's time would include "
         "those stalls",
         "find what holds memory with `ps -eo pid,rss,comm --sort=-rss | head`");
    rule("io", s.pressure->io,
         "tasks wait for I/O: a run that reads data or writes checkpoints would wait with them",
         "find the busy devices and processes with `iostat -x 1` and `iotop`");
  }

  /// InfiniBand and RoCE ports: one that is down, and one that is up but degraded (slower than
  /// its width and lane speed carry, or trained on fewer lanes than the host's other ports of
  /// the same HCA type and link layer: 1X where they run 4X).
  void fabric() {
    if (!s.infiniband) return;
    const auto& devices = s.infiniband->devices;
    auto widest = [&](const InfinibandDevice& d, const InfinibandPort& p) {
      std::uint32_t w = 0;
      for (const auto& o : devices)
        if (o.hca_type == d.hca_type && !d.hca_type.empty())
          for (const auto& q : o.ports)
            if (q.link_layer == p.link_layer && q.state == "ACTIVE" && q.width)
              w = std::max(w, *q.width);
      return w;
    };
    for (const auto& d : devices)
      for (const auto& p : d.ports) {
        bool state_down = !p.state.empty() && p.state != "ACTIVE";
        bool phys_down = !p.physical_state.empty() && p.physical_state != "LinkUp";
        std::string layer = p.link_layer.empty() ? "" : " (" + p.link_layer + ")";
        if (state_down || phys_down) {
          add("infiniband.port.down", d.name, Severity::warning,
              fmt::format("port {} {}, physical state {}{}", p.port,
                          p.state.empty() ? "state unknown" : p.state,
                          p.physical_state.empty() ? "unknown" : p.physical_state, layer),
              phys_down ? "the link is not trained (no cable, a dead cable or switch port): work "
                          "placed on this port gets no RDMA and falls back or fails"
                        : "the link is up but not active (no subnet manager has configured it): "
                          "work placed on this port gets no RDMA and falls back or fails",
              phys_down ? "check the cable and the switch port (`ibstat " + d.name + "`)"
                        : "check the subnet manager (`sminfo`, `ibstat " + d.name + "`)");
          continue;
        }
        if (p.state.empty() || p.physical_state.empty() || !p.rate_gbps || !p.width) continue;
        std::string trained =
            fmt::format("port {} trained {}X{} ({:g} Gb/s){}", p.port, *p.width,
                        p.speed.empty() ? "" : " " + p.speed, *p.rate_gbps, layer);
        auto w = widest(d, p);
        if (p.expected_gbps && *p.rate_gbps + 0.01 < *p.expected_gbps)
          add("infiniband.port.degraded", d.name, Severity::warning,
              fmt::format("{}, where {}X {} carries {:g} Gb/s", trained, *p.width, p.speed,
                          *p.expected_gbps),
              "the link runs slower than its lanes allow: transfers over it take longer",
              "check the cable and the switch port (`mlxlink -d " + d.name + "` on NVIDIA cards)");
        else if (w > *p.width)
          add("infiniband.port.degraded", d.name, Severity::warning,
              fmt::format("{}, where the other {} ports run {}X", trained, d.hca_type, w),
              "the link trained fewer lanes than the others: it carries a fraction of their "
              "bandwidth, and collectives across the nodes run at its pace",
              "reseat or replace the cable or transceiver (`mlxlink -d " + d.name +
                  "` shows the lanes)");
      }
  }

  /// Temperatures at or above their limits, and memory errors EDAC counted. Only limits the
  /// driver or firmware set count: a sensor without one is never judged.
  void sensors_and_memory_errors() {
    if (const auto& t = s.temperatures) {
      std::vector<std::string> critical, high;
      for (const auto& x : t->sensors) {
        auto name = x.chip + " " + (x.label.empty() ? x.sensor : x.label) +
                    (x.device.empty() ? "" : " (" + x.device + ")");
        if (x.critical_celsius && x.celsius >= *x.critical_celsius)
          critical.push_back(fmt::format("{} {:.1f} °C, critical {:.1f} °C", name, x.celsius,
                                         *x.critical_celsius));
        else if (x.high_celsius && x.celsius >= *x.high_celsius)
          high.push_back(
              fmt::format("{} {:.1f} °C, high {:.1f} °C", name, x.celsius, *x.high_celsius));
      }
      if (!critical.empty())
        add("temperature.critical", "host", Severity::blocker, view::join(critical, "; "),
            "a part at its critical temperature throttles hard or shuts down to protect itself: "
            "timings are meaningless and the node may go down",
            "check the cooling (fans, airflow, heat sinks) and what heats it; `sensors` shows "
            "every reading");
      if (!high.empty())
        add("temperature.high", "host", Severity::warning, view::join(high, "; "),
            "a part above its high limit may throttle its clock, so timings vary",
            "check the cooling and what heats it");
    }
    if (const auto& e = s.memory_errors) {
      std::uint64_t ue = 0, ce = 0;
      std::vector<std::string> ue_at, ce_at;
      for (const auto& c : e->controllers) {
        ue += c.uncorrected;
        ce += c.corrected;
        if (c.uncorrected) ue_at.push_back(fmt::format("{}: {}", c.name, c.uncorrected));
        if (c.corrected) ce_at.push_back(fmt::format("{}: {}", c.name, c.corrected));
      }
      if (ue)
        add("memory.errors.uncorrected", "host", Severity::blocker,
            fmt::format("{} uncorrected memory error{} ({})", ue, ue == 1 ? "" : "s",
                        view::join(ue_at, ", ")),
            "memory returned data ECC could not repair: a process reading it was killed or got "
            "corrupt data, and the failing DIMM may fail again",
            "find the DIMM with `edac-util -v` or `ras-mc-ctl --errors` and have it replaced");
      if (ce)
        add("memory.errors.corrected", "host", Severity::warning,
            fmt::format("{} corrected memory error{} ({})", ce, ce == 1 ? "" : "s",
                        view::join(ce_at, ", ")),
            "ECC repaired them, but a DIMM that keeps making errors tends to fail with one it "
            "cannot repair",
            "watch the count (`edac-util -v`); have a DIMM whose count grows replaced");
    }
  }

  /// A rule whose reading is missing cannot call the node fine: a warning names the reading,
  /// why it is missing and what went unchecked (`--strict` fails on it). macOS has no cgroups
  /// and no PSI: nothing is missing there.
  void unknown() {
    bool darwin = s.memory && s.memory->source == MemorySource::sysctl;
    auto missing = [&](const char* id, const std::string& reading, const std::string& why,
                       const char* rule) {
      add(id, "host", Severity::warning, reading + " unknown" + (why.empty() ? "" : ": " + why),
          std::string("it could not be read, so ") + rule + " went unchecked",
          "read it by hand, or run where it can be read (a container may hide it)");
    };
    if (!s.cpu.load_1m)
      missing("cpu.load.unknown", "load average", load_unknown_reason(s),
              "the rule on other work using the CPUs (cpu.load)");
    if (!s.memory)
      missing("memory.unknown", "memory", s.memory.reason(),
              "the rule on available memory (memory.available)");
    else if (!s.memory->used_bytes)
      missing("memory.unknown", "memory in use", "no MemAvailable or MemFree in /proc/meminfo",
              "the rule on available memory (memory.available)");
    if (const auto* d = s.diagnostic("swap"); d && d->status != ProbeStatus::ok)
      missing("memory.swap.unknown", "swap", d->reason, "the rule on swap in use (memory.swap)");
    if (darwin) return;
    if (!s.cgroup_memory)
      missing("cgroup.unknown", "cgroup memory", s.cgroup_memory.reason(),
              "the rule on the cgroup cap's headroom (cgroup.headroom)");
    if (!s.pressure)
      missing("pressure.unknown", "pressure stall information", s.pressure.reason(),
              "the rules on memory and I/O stalls (memory.pressure, io.pressure)");
  }

  void memory() {
    if (!s.memory) return;
    const auto& m = *s.memory;
    if (m.total_bytes && m.used_bytes) {
      std::uint64_t available = m.total_bytes - std::min(*m.used_bytes, m.total_bytes);
      double share = static_cast<double>(available) / static_cast<double>(m.total_bytes);
      auto reading =
          fmt::format("{} of {} available", view::bytes(available), view::bytes(m.total_bytes));
      if (share < 0.1)
        add("memory.available", "host", Severity::blocker, reading,
            "a job that needs more will swap or be killed by the OOM killer",
            "find what holds it with `ps -eo pid,rss,comm --sort=-rss | head`");
      else if (share < 0.25)
        add("memory.available", "host", Severity::warning, reading,
            "less than a quarter of the memory is free for the job", "");
    }
    if (const auto& c = s.cgroup_memory; c && c->capped() && c->usage_bytes) {
      auto cap = *c->limit_bytes;
      auto left = cap - std::min(*c->usage_bytes, cap);
      if (static_cast<double>(left) < 0.1 * static_cast<double>(cap))
        add("cgroup.headroom", "host", Severity::blocker,
            fmt::format("{} of the {} cgroup cap left", view::bytes(left), view::bytes(cap)),
            "the job's cgroup is nearly full: its next allocations are reclaimed or OOM-killed",
            "ask for more memory (Slurm: --mem) or free what the job holds");
    }
    const auto& hw = s.memory_hardware;
    if (hw.swap_used_bytes > 0)
      add("memory.swap", "host", Severity::warning,
          fmt::format("{} of swap in use", view::bytes(hw.swap_used_bytes)),
          "pages of running programs are on disk: touching them costs milliseconds",
          "swapoff -a && swapon -a (once enough memory is free)");
  }

  void health(const GpuHealth& h, const std::string& subject, std::uint32_t index);

  // PCIe topology: GPUDirect RDMA between a GPU and an adapter on the other socket crosses the
  // inter-socket link (UPI/xGMI), which NCCL then avoids or pays for in bandwidth.
  void topology() {
    if (!s.pci) return;
    auto matrix = topology_matrix(*s.pci, nvlink_counts(s.gpus), s.cpu.info.numa_nodes);
    for (const auto& near : nearest_nics(matrix, true)) {
      if (near.path.path != PciPath::sys) continue;
      add("topology.gpu_nic.remote", near.gpu, Severity::warning,
          fmt::format("nearest RDMA adapter {} is {} (across the sockets)", near.nic,
                      to_string(near.path)),
          "its GPUDirect RDMA traffic crosses the link between the sockets, which has less "
          "bandwidth than PCIe within one",
          "use the GPUs beside an adapter for inter-node work; `mainboard topo` shows the pairs");
    }
  }

  void gpus() {
    for (const auto& g : s.gpus) {
      auto subject = fmt::format("GPU {}", g.info.index);
      const auto& t = g.telemetry;
      const auto& util = t.utilization.or_empty();
      const auto& heat = t.thermal.or_empty();
      if (!g.processes.empty()) {
        std::vector<std::string> who;
        for (const auto& p : g.processes)
          who.push_back(fmt::format(
              "pid {}{}{}", p.pid, p.name.empty() ? "" : " " + p.name,
              p.used_memory_bytes ? " (" + view::bytes(*p.used_memory_bytes) + ")" : ""));
        add("gpu.processes", subject, Severity::blocker, view::join(who, ", "),
            "another process shares its SMs and memory: kernels queue behind its work",
            fmt::format("wait for it (mainboard wait-idle --index {}) or use another GPU",
                        g.info.index));
      }
      if (t.utilization.ok() && util.compute_pct && *util.compute_pct > 10)
        add("gpu.busy", subject, Severity::blocker,
            fmt::format("{:.0f} % busy now", *util.compute_pct),
            "kernels of other work are running on it",
            fmt::format("mainboard wait-idle --index {}", g.info.index));
      std::vector<std::string> hardware, software;
      for (const auto& r : heat.throttle_reasons) {
        if (r == "GpuIdle" || r == "ApplicationsClocksSetting" || r == "DisplayClockSetting")
          continue;
        (r.rfind("Hw", 0) == 0 ? hardware : software).push_back(r);
      }
      if (!hardware.empty())
        add("gpu.throttle", subject, Severity::blocker,
            "clocks held down by " + view::join(hardware, ", "),
            "the hardware slows the GPU (temperature, power brake or an external signal): every "
            "figure is below what the GPU can do",
            "check cooling and power (nvidia-smi -q -d PERFORMANCE,TEMPERATURE)");
      else if (!software.empty())
        add("gpu.throttle", subject, Severity::warning,
            "clocks held down by " + view::join(software, ", "),
            "the driver caps the clocks (power limit, thermal target or sync boost)",
            "nvidia-smi -q -d PERFORMANCE shows the limit; raise it with nvidia-smi -pl");
      if (g.health) health(*g.health, subject, g.info.index);
      if (g.info.mig_enabled && *g.info.mig_enabled)
        add("gpu.mig", subject, Severity::info,
            fmt::format("MIG mode on, {} instances", g.info.mig_devices.size()),
            "work sees a slice of the GPU: a MIG instance, not the whole device", "");
      if (t.memory && t.memory->total_bytes && t.memory->used_bytes && g.processes.empty() &&
          t.memory->scope == "vram" &&
          static_cast<double>(*t.memory->used_bytes) >
              0.05 * static_cast<double>(t.memory->total_bytes))
        add("gpu.memory", subject, Severity::warning,
            fmt::format("{} in use with no process listed",
                        view::capacity_pair(*t.memory->used_bytes, t.memory->total_bytes)),
            "memory is held by something the driver does not list (another container, a leaked "
            "context)",
            "nvidia-smi --query-compute-apps=pid,used_memory --format=csv on the host");
    }
  }
};

void Rules::health(const GpuHealth& h, const std::string& subject, std::uint32_t index) {
  auto reset = fmt::format("drain the node and reset the GPU (nvidia-smi -r -i {})", index);
  if (h.remap_failed && *h.remap_failed)
    add("gpu.remap_failed", subject, Severity::blocker, "a memory row remapping failed",
        "the GPU ran out of spare rows for a failing memory location: it can return corrupted "
        "data or fail work",
        "take the GPU out of service and have it replaced");
  if (h.remap_pending && *h.remap_pending)
    add("gpu.remap_pending", subject, Severity::blocker,
        fmt::format("a row remapping waits for a reset ({} rows remapped for uncorrectable "
                    "errors)",
                    h.remapped_rows_uncorrectable.value_or(0)),
        "the faulty memory rows are only replaced at the next GPU reset", reset);
  if (h.retired_pages_pending && *h.retired_pages_pending)
    add("gpu.retired_pending", subject, Severity::blocker,
        "memory pages wait for a reset to be retired",
        "the faulty pages stay in use until the GPU is reset", reset);
  if (h.ecc_uncorrected_volatile && *h.ecc_uncorrected_volatile > 0)
    add("gpu.ecc", subject, Severity::blocker,
        fmt::format("{} uncorrectable ECC errors since the driver loaded",
                    *h.ecc_uncorrected_volatile),
        "work on this GPU may have read corrupted memory; more errors tend to follow",
        "nvidia-smi -q -d ECC,ROW_REMAPPER; " + reset);
  if (h.xid_errors && *h.xid_errors > 0 && h.last_xid) {
    // By what the code says of the GPU: lost or with failing memory (blocker), a link or
    // firmware trouble (warning), or a fault of the application that ran (info).
    const auto& x = *h.last_xid;
    static const std::set<std::uint32_t> kBlockers = {48, 64, 79, 95, 119, 120, 140, 143, 154};
    static const std::set<std::uint32_t> kApplication = {13, 31, 43, 45, 68, 69};
    Severity severity = kBlockers.count(x.code)      ? Severity::blocker
                        : kApplication.count(x.code) ? Severity::info
                                                     : Severity::warning;
    std::string what =
        fmt::format("{} {}, the last {}{}", view::plural(*h.xid_errors, "XID", "XIDs"),
                    h.xid_period(), x.code, x.meaning.empty() ? "" : ": " + x.meaning);
    std::string why = severity == Severity::blocker
                          ? "the driver reported the GPU itself failing; work on it can fail or "
                            "return wrong results until it is reset or replaced"
                      : severity == Severity::info
                          ? "an application's fault (a bad address, a killed process); the GPU "
                            "itself is fine unless these keep coming without one"
                          : "the driver reported trouble on a link or in firmware";
    add("gpu.xid", subject, severity, what, why,
        severity == Severity::info ? "read the kernel log (dmesg | grep Xid) for the process"
                                   : "dmesg | grep Xid; " + reset);
  }
  {
    std::size_t up = 0;
    std::vector<std::string> down, failing;
    for (const auto& l : h.links) {
      if (l.active)
        ++up;
      else
        down.push_back(std::to_string(l.link));
      if (l.recovery_errors.value_or(0) || l.crc_errors.value_or(0))
        failing.push_back(
            fmt::format("link {} ({}, {})", l.link,
                        view::plural(l.recovery_errors.value_or(0), "recovery", "recoveries"),
                        view::plural(l.crc_errors.value_or(0), "CRC error", "CRC errors")));
    }
    if (up > 0 && !down.empty())
      add("gpu.nvlink_down", subject, Severity::warning,
          fmt::format("NVLink {} of {} links up (down: {})", up, h.links.size(),
                      fmt::join(down, ", ")),
          "traffic to other GPUs takes the remaining links (or PCIe): collectives slow down",
          "nvidia-smi nvlink -s -i " + std::to_string(index) + "; " + reset);
    if (!failing.empty())
      add("gpu.nvlink_errors", subject, Severity::warning,
          "NVLink errors: " + fmt::format("{}", fmt::join(failing, ", ")),
          "a link that retrains or fails its CRC loses bandwidth and may go down",
          "nvidia-smi nvlink -e -i " + std::to_string(index));
  }
  if (h.ecc_enabled && !*h.ecc_enabled)
    add("gpu.ecc_off", subject, Severity::info, "ECC off",
        "memory errors go undetected (more memory and bandwidth for the work)",
        fmt::format("nvidia-smi -e 1 -i {} (takes effect after a reset)", index));
  if (h.persistence_mode && !*h.persistence_mode)
    add("gpu.persistence", subject, Severity::warning, "persistence mode off",
        "the driver tears the GPU down when its last client exits, so each job's first CUDA "
        "call pays the initialization again (about a second per GPU)",
        "nvidia-smi -pm 1 (or run nvidia-persistenced)");
}

int rank(Severity s) {
  return s == Severity::blocker ? 0 : s == Severity::warning ? 1 : 2;
}

}  // namespace

const char* to_string(Severity severity) {
  return detail::name_of(severity);
}

bool Readiness::ready() const {
  return count(Severity::blocker) == 0 && (!strict || count(Severity::warning) == 0);
}

std::size_t Readiness::count(Severity severity) const {
  return static_cast<std::size_t>(std::count_if(
      findings.begin(), findings.end(), [&](const Finding& f) { return f.severity == severity; }));
}

Readiness check_readiness(const MachineSnapshot& snapshot, bool strict) {
  Rules rules{snapshot, {}};
  rules.host();
  rules.gpus();
  rules.topology();
  Readiness r;
  r.hostname = snapshot.hostname;
  r.strict = strict;
  r.findings = std::move(rules.out);
  std::stable_sort(r.findings.begin(), r.findings.end(), [](const Finding& a, const Finding& b) {
    return rank(a.severity) < rank(b.severity);
  });
  return r;
}

MAINBOARD_DEFINE_ENUM_JSON(Severity)

template <class V>
void fields(V& v, Finding& m) {
  v("id", m.id);
  v("subject", m.subject);
  v("severity", m.severity);
  v("reading", m.reading);
  v("why", m.why);
  v("fix", m.fix);
}
MAINBOARD_DEFINE_JSON(Finding)

template <class V>
void fields(V& v, Readiness& m) {
  v("hostname", m.hostname);
  v("strict", m.strict);
  v("findings", m.findings);
}
MAINBOARD_DEFINE_JSON(Readiness)

}  // namespace mainboard
