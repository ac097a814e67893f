#include "view/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "view/format.hpp"
#include "view/gpus.hpp"

namespace mainboard::view {

namespace {

class Block {
 public:
  explicit Block(const Style& style) : style_(style) {}
  void line(const std::string& label, const std::string& text) {
    out_ += "  " + style_.label(fmt::format("{:<9}", label)) + text + "\n";
  }
  void more(const std::string& text) { out_ += "           " + text + "\n"; }
  std::string take() { return std::move(out_); }

 private:
  const Style& style_;
  std::string out_;
};

std::string cache_summary(const CpuInfo& cpu) {
  std::vector<std::string> parts;
  for (const auto& c : cpu.caches) {
    std::string name = "L" + std::to_string(c.level);
    if (c.type == "data") name += "d";
    if (c.type == "instruction") name += "i";
    parts.push_back(fmt::format("{} {} ×{}", name, bytes(c.size_bytes), c.instances));
  }
  return join(parts, ", ");
}

std::string unsupported(const Style& style, const std::string& reason) {
  return style.warn("unavailable") + (reason.empty() ? "" : style.dim(": " + reason));
}

/// The fabric in a line or two each: every InfiniBand/RoCE port ("mlx5_0 200 Gb/s 4X HDR", a
/// down one in warning colour with its physical state) and the physical NICs with their speed
/// (IPoIB interfaces are their port's). Nothing where a host has neither.
void summary_fabric_lines(Block& b, const MachineSnapshot& s, const Style& style) {
  auto lines = [&](const char* label, const std::vector<std::string>& parts) {
    constexpr std::size_t kPerLine = 4;
    for (std::size_t i = 0; i < parts.size(); i += kPerLine) {
      std::vector<std::string> chunk(
          parts.begin() + static_cast<std::ptrdiff_t>(i),
          parts.begin() + static_cast<std::ptrdiff_t>(std::min(parts.size(), i + kPerLine)));
      if (i == 0)
        b.line(label, join(chunk));
      else
        b.more(join(chunk));
    }
  };
  if (s.infiniband) {
    std::vector<std::string> ports;
    for (const auto& d : s.infiniband->devices) {
      if (d.ports.empty()) ports.push_back(d.name + style.dim(" no ports read"));
      for (const auto& p : d.ports) {
        std::string name = d.ports.size() > 1 ? fmt::format("{}/{}", d.name, p.port) : d.name;
        if (p.link_layer == "Ethernet") name += " RoCE";
        bool down = (!p.state.empty() && p.state != "ACTIVE") ||
                    (!p.physical_state.empty() && p.physical_state != "LinkUp");
        if (down) {
          ports.push_back(style.warn(
              fmt::format("{} {} ({})", name, p.state.empty() ? "state unknown" : p.state,
                          p.physical_state.empty() ? "physical state unknown" : p.physical_state)));
        } else if (p.rate_gbps) {
          ports.push_back(fmt::format(
              "{} {:g} Gb/s{}", name, *p.rate_gbps,
              p.width ? fmt::format(" {}X{}", *p.width, p.speed.empty() ? "" : " " + p.speed)
                      : ""));
        } else {
          ports.push_back(name + (p.state.empty() ? " state unknown" : " " + p.state) +
                          style.dim(", rate unknown"));
        }
      }
    }
    lines("Fabric", ports);
  }
  if (s.network) {
    std::vector<std::string> nics;
    for (const auto& i : s.network->interfaces) {
      if (i.type == "infiniband") continue;
      std::string speed;
      if (i.speed_mbps)
        speed = *i.speed_mbps >= 1000 ? fmt::format(" {:g} Gb/s", *i.speed_mbps / 1000.0)
                                      : fmt::format(" {} Mb/s", *i.speed_mbps);
      else
        speed = " " + (i.operstate.empty() ? std::string("state unknown") : i.operstate);
      nics.push_back(i.name + speed + (i.driver.empty() ? "" : style.dim(" " + i.driver)));
    }
    lines("Network", nics);
  }
}

}  // namespace

std::string render_summary(const MachineSnapshot& s, const Style& style) {
  Block b(style);
  const auto& cpu = s.cpu.info;
  std::string title = join({s.hostname, cpu.label, cpu.architecture}, " · ");
  std::string out = style.bold(title) + "\n";

  // The system first, as fastfetch: distribution, kernel, C library.
  if (s.os) {
    b.line("System",
           join({s.os->name.empty() ? join({s.os->id, s.os->version_id}, " ") : s.os->name,
                 s.os->kernel.empty() ? "" : "kernel " + s.os->kernel, s.os->libc,
                 // Said where it is not the usual 4 KiB (64 KiB arm64 kernels).
                 s.os->page_size_bytes && *s.os->page_size_bytes != 4096
                     ? fmt::format("{} KiB pages", *s.os->page_size_bytes / 1024)
                     : ""},
                " · "));
  } else {
    const auto* d = s.diagnostic("os");
    b.line("System", unsupported(style, d ? d->reason : ""));
  }

  std::string identity = cpu.label;
  if (!cpu.microarchitecture.empty() && cpu.label.find(cpu.microarchitecture) == std::string::npos)
    identity += " — " + cpu.microarchitecture;
  b.line("CPU", identity);
  // NUMA nodes with their memory: "2 NUMA nodes (256 GiB each)", or each one's when they differ.
  std::string numa = plural(cpu.numa_nodes, "NUMA node", "NUMA nodes");
  if (cpu.numa_memory_bytes && cpu.numa_memory_bytes->size() > 1) {  // one: the Memory line
    const auto& m = *cpu.numa_memory_bytes;
    bool same = std::all_of(m.begin(), m.end(), [&](std::uint64_t node) { return node == m[0]; });
    std::vector<std::string> each;
    for (std::uint32_t i = 0; i < m.size(); ++i) {
      bool cpuless = std::find(cpu.memory_only_numa_nodes.begin(), cpu.memory_only_numa_nodes.end(),
                               i) != cpu.memory_only_numa_nodes.end();
      each.push_back(bytes(m[i]) + (cpuless ? " without CPUs" : ""));
    }
    numa += same && cpu.memory_only_numa_nodes.empty() ? " (" + bytes(m[0]) + " each)"
                                                       : " (" + join(each, " + ") + ")";
  }
  b.more(join({plural(cpu.packages, "package", "packages"), plural(cpu.cores, "core", "cores"),
               plural(cpu.threads, "thread", "threads"), numa},
              ", "));
  if (auto caches = cache_summary(cpu); !caches.empty())
    b.more(
        cpu.cache_source == CacheSource::hypervisor
            ? style.dim("caches as the hypervisor's CPUID describes them, not measured: " + caches)
            : "caches " + caches);
  // Memory outside the NUMA nodes (hot-plugged or ballooned, or nodes this process may not use):
  // the nodes and the total are both true, and neither alone is the machine's memory. A node
  // without CPUs (a GPU's memory onlined by its driver) may or may not be in the total: the
  // total is compared with the nodes both with and without such nodes.
  if (cpu.numa_memory_bytes && s.memory && s.memory->total_bytes > 0) {
    std::uint64_t all = 0, with_cpus = 0;
    for (std::uint32_t i = 0; i < cpu.numa_memory_bytes->size(); ++i) {
      auto node = (*cpu.numa_memory_bytes)[i];
      all += node;
      if (std::find(cpu.memory_only_numa_nodes.begin(), cpu.memory_only_numa_nodes.end(), i) ==
          cpu.memory_only_numa_nodes.end())
        with_cpus += node;
    }
    auto total = static_cast<double>(s.memory->total_bytes);
    auto off = [&](std::uint64_t nodes) {
      double share = static_cast<double>(nodes) / total;
      return share < 0.9 || share > 1.1;
    };
    if (off(all) && off(with_cpus))
      b.more(style.warn(fmt::format("the NUMA nodes seen hold {} of the {} the kernel counts "
                                    "({:.0f} %)",
                                    bytes(with_cpus), bytes(s.memory->total_bytes),
                                    100.0 * static_cast<double>(with_cpus) / total)) +
             style.dim(with_cpus < s.memory->total_bytes
                           ? ": memory in no node (hot-plugged or ballooned) or in nodes this "
                             "process may not use"
                           : ": the kernel counts less than its nodes hold"));
  }
  std::vector<std::string> live;
  for (const auto& c : s.cpu.clocks) {
    std::string text = c.domain + " ";
    if (c.current_mhz) text += mhz(*c.current_mhz);
    if (c.max_mhz) text += " (max " + mhz(*c.max_mhz) + ")";
    live.push_back(text);
  }
  if (s.cpu.load_1m)
    live.push_back(fmt::format("load {:.2f} {:.2f} {:.2f}", *s.cpu.load_1m,
                               s.cpu.load_5m.value_or(0), s.cpu.load_15m.value_or(0)));
  else
    live.push_back("load unknown");  // not "no load": the JSON has null
  if (!live.empty()) b.more(join(live, " · "));
  if (!cpu.isa_extensions.empty())
    b.more("isa " + join(cpu.isa_extensions, " ") +
           (cpu.sve_vector_bits ? fmt::format(" · SVE {}-bit", *cpu.sve_vector_bits) : ""));

  if (const auto& m = s.memory; m && m->used_bytes) {
    b.line("Memory", fmt::format("{} used ({})", capacity_pair(*m->used_bytes, m->total_bytes),
                                 percent(m->percent_used())));
  } else if (m) {
    b.line("Memory", bytes(m->total_bytes) + " · used unknown");
  } else {
    b.line("Memory", unsupported(style, m.reason()));
  }
  const auto& hw = s.memory_hardware;
  if (const auto* d = s.diagnostic("swap"); d && d->status != ProbeStatus::ok)
    b.more("swap unknown: " + d->reason);  // not "none": it could not be read
  else
    b.more(hw.swap_total_bytes ? "swap " + capacity_pair(hw.swap_used_bytes, hw.swap_total_bytes)
                               : std::string("swap none"));
  if (!hw.cards.or_empty().empty()) {
    std::map<std::string, int> kinds;
    for (const auto& c : *hw.cards)
      if (c.populated())
        ++kinds[join({bytes(*c.size_bytes), c.type,
                      c.speed_mts ? std::to_string(*c.speed_mts) + " MT/s" : ""},
                     " ")];
    std::vector<std::string> parts;
    for (const auto& [k, n] : kinds)
      parts.push_back(fmt::format("{} × {}", n, k));
    b.more(fmt::format("DIMMs {} of {} slots: {}", hw.slots_used(), hw.slots_total(),
                       join(parts, ", ")));
  } else {
    b.more("DIMMs " + unsupported(style, hw.cards.reason()));
  }

  // Static huge pages reserved (pools of no pages are left out) and memory errors (EDAC).
  if (const auto& h = s.huge_pages) {
    std::vector<std::string> pools;
    for (const auto& p : h->pools) {
      if (p.numa_node || p.total == 0) continue;
      std::vector<std::string> nodes;
      for (const auto& n : h->pools)
        if (n.numa_node && n.page_bytes == p.page_bytes)
          nodes.push_back(fmt::format("node{} {}", *n.numa_node, n.total));
      auto size = p.page_bytes % (1ull << 30) == 0   ? fmt::format("{} GiB", p.page_bytes >> 30)
                  : p.page_bytes % (1ull << 20) == 0 ? fmt::format("{} MiB", p.page_bytes >> 20)
                                                     : bytes(p.page_bytes);
      pools.push_back(fmt::format("{} × {} ({} free{}{})", size, p.total, p.free,
                                  nodes.empty() ? "" : "; ", join(nodes, ", ")));
    }
    if (!pools.empty()) b.more("huge pages " + join(pools, " · "));
  }
  if (const auto& e = s.memory_errors) {
    std::uint64_t ue = 0, ce = 0;
    std::vector<std::string> ue_at, ce_at;
    for (const auto& c : e->controllers) {
      ue += c.uncorrected;
      ce += c.corrected;
      if (c.uncorrected) ue_at.push_back(c.name);
      if (c.corrected) ce_at.push_back(c.name);
    }
    auto at = [](const std::vector<std::string>& names) {
      return names.empty() ? std::string() : " (" + join(names, ", ") + ")";
    };
    std::string text =
        fmt::format("memory errors {} uncorrected{}, {} corrected{}", ue, at(ue_at), ce, at(ce_at));
    b.more(ue ? style.warn(text) : text);
  }

  if (!s.cgroup_memory) {
    b.line("cgroup", unsupported(style, s.cgroup_memory.reason()));
  } else {
    const auto& cg = *s.cgroup_memory;
    std::string cap =
        cg.limit_bytes ? style.warn("cap " + bytes(*cg.limit_bytes)) : std::string("no memory cap");
    std::string usage = cg.usage_bytes ? ", using " + bytes(*cg.usage_bytes) : "";
    b.line("cgroup", fmt::format("v{} {}: {}{}", cg.version, cg.path, cap, usage));
  }

  if (!s.pressure) {
    b.line("Pressure", unsupported(style, s.pressure.reason()));
  } else {
    const auto& psi = *s.pressure;
    // The share of the last 10 s in which some task waited, and every task at once (full).
    auto one = [&](const char* name, const std::optional<ResourcePressure>& r) {
      if (!r) return fmt::format("{} unreadable", name);
      std::string text =
          r->full ? fmt::format("{} {:.1f}/{:.1f} %", name, r->some.avg10, r->full->avg10)
                  : fmt::format("{} {:.1f} %", name, r->some.avg10);
      bool stalled = r->full && r->full->avg10 >= 10 && std::string_view(name) != "cpu";
      return stalled ? style.warn(text) : text;
    };
    b.line("Pressure", one("cpu", psi.cpu) + " · " + one("memory", psi.memory) + " · " +
                           one("io", psi.io) + style.dim(" waiting (some/full, last 10 s)"));
  }

  // The hottest sensor of each kind users watch: CPU packages (or the CPU's own sensor where
  // the driver names no package), NVMe drives, DIMMs; from hwmon, else from thermal zones
  // (which often repeat an hwmon sensor).
  if (const auto& t = s.temperatures) {
    auto hottest = [&](std::initializer_list<const char*> kinds, const char* name) {
      for (const char* source : {"hwmon", "thermal"})
        for (const char* kind : kinds) {
          const TemperatureSensor* top = nullptr;
          std::set<std::string> parts;  // an NVMe drive has several sensors: one part
          for (const auto& x : t->sensors)
            if (x.kind == kind && x.source == source) {
              parts.insert(x.device.empty() ? x.chip + "/" + x.sensor : x.device);
              if (!top || x.celsius > top->celsius) top = &x;
            }
          if (!top) continue;
          auto n = parts.size();
          auto text = fmt::format("{} {:.0f} °C{}", name, top->celsius,
                                  n > 1 ? fmt::format(" (hottest of {})", n) : "");
          bool hot = (top->critical_celsius && top->celsius >= *top->critical_celsius) ||
                     (top->high_celsius && top->celsius >= *top->high_celsius);
          return hot ? style.warn(text) : text;
        }
      return std::string();
    };
    auto line = join({hottest({"cpu_package", "cpu"}, "CPU"), hottest({"nvme"}, "NVMe"),
                      hottest({"dimm"}, "DIMM"), hottest({"gpu"}, "GPU")});
    if (!line.empty()) b.line("Sensors", line);
  }

  // RAPL: which counters there are ("RAPL package 0,1 + dram"), or why they cannot be read where
  // the zones are there (only root may); nothing where there is no RAPL at all (most VMs).
  if (const auto& rapl = s.energy_counters) {
    std::vector<std::string> packages, others;
    for (const auto& c : rapl->counters) {
      if (c.domain == "package") {
        auto n = c.package ? std::to_string(*c.package) : std::string("?");
        if (std::find(packages.begin(), packages.end(), n) == packages.end()) packages.push_back(n);
      } else if (std::find(others.begin(), others.end(), c.domain) == others.end()) {
        others.push_back(c.domain);
      }
    }
    std::vector<std::string> parts;
    if (!packages.empty()) parts.push_back("package " + join(packages, ","));
    parts.insert(parts.end(), others.begin(), others.end());
    b.line("Energy", "RAPL " + join(parts, " + ") + style.dim(" counters readable"));
  } else if (rapl.reason().rfind("no RAPL energy counters", 0) != 0) {
    b.line("Energy", unsupported(style, rapl.reason()));
  }

  if (const auto& board = s.board) {
    auto name = join({board->vendor, board->model, board->version}, " ");
    b.line("Board", name.empty() ? style.dim("not named by the firmware") : name);
    b.more("BIOS " + join({board->bios_vendor, board->bios_version, board->bios_date}, " "));
  } else {
    b.line("Board", unsupported(style, board.reason()));
  }

  const auto& env = s.environment;
  std::string who = (env.user.empty() ? std::string("unknown user") : env.user) + " (group " +
                    (env.group.empty() ? std::string("unknown") : env.group);
  if (env.groups.size() > 1)
    who += "; also " + join({env.groups.begin() + 1, env.groups.end()}, ", ");
  who += ")";
  b.line("User", who);
  std::vector<std::string> sched;
  for (const auto& sc : env.schedulers)
    sched.push_back(sc.name);
  std::string job = env.job ? fmt::format("in {} job {}{}", env.job->scheduler, env.job->id,
                                          env.job->name.empty() ? "" : " (" + env.job->name + ")")
                            : "not in a batch job";
  b.more("scheduler " + (sched.empty() ? std::string("none on PATH") : join(sched, ", ")) + " · " +
         job);

  if (s.scratch.found) {
    b.line("Scratch",
           fmt::format("{} ({}){}", s.scratch.path,
                       join({s.scratch.fs_type, to_string(s.scratch.tier)}, ", "),
                       s.scratch.free_bytes ? ", " + bytes(*s.scratch.free_bytes) + " free" : ""));
    // A tmpfs is RAM: what is written there is memory the job holds.
    if (s.scratch.tier == StorageTier::memory)
      b.more(s.cgroup_memory && s.cgroup_memory->capped()
                 ? style.warn("in RAM: files written here count against memory and the cgroup "
                              "cap of " +
                              bytes(*s.cgroup_memory->limit_bytes))
                 : std::string("in RAM: files written here count against memory"));
  } else {
    b.line("Scratch", unsupported(style, "no writable scratch directory"));
  }

  std::vector<std::string> devs;
  for (const auto& d : s.disk.devices)
    // What the kernel does not say is said to be unknown: no size, no queue/rotational.
    devs.push_back(fmt::format(
        "{} {}{}{}", d.name, d.size_bytes ? bytes(*d.size_bytes) : std::string("size unknown"),
        d.nvme ? " NVMe"
               : (d.rotational ? (*d.rotational ? " rotational" : " SSD") : " kind unknown"),
        d.model.empty() ? "" : " (" + d.model + ")"));
  b.line("Disk", devs.empty() ? unsupported(style, "no block devices") : join(devs, ", "));
  for (const auto& f : s.disk.filesystems) {
    std::string space =
        f.free_bytes && f.size_bytes
            ? fmt::format(", {} free of {}", bytes(*f.free_bytes), bytes(*f.size_bytes))
            : "";
    std::string where = f.mount_point.empty() ? std::string("an unknown filesystem")
                                              : f.mount_point + " (" + f.type + ")";
    b.more(fmt::format("{} {} on {}{}", f.role, f.path, where, space));
  }
  summary_fabric_lines(b, s, style);

  if (s.gpus.empty()) b.line("GPUs", style.dim("none found"));
  for (const auto& g : s.gpus) {
    const auto& m = g.telemetry.memory;
    std::string mem = m ? capacity_pair(m->used_bytes.value_or(0), m->total_bytes)
                        : std::string("memory unavailable");
    b.line(fmt::format("GPU {}", g.info.index), join({g.info.label, g.info.arch_key, mem}, " · "));
  }
  for (const auto& n : s.npus)
    b.line(fmt::format("NPU {}", n.info.index), join({n.info.label, n.info.driver}, " · "));
  if (s.cuda.nvml.found || s.cuda.cuda_driver.found || s.cuda.nvcc_version) {
    b.line("CUDA", cuda_stack_line(s.cuda));
    if (auto note = s.cuda.toolkit_newer_than_driver(); !note.empty()) b.more(style.warn(note));
  }

  if (s.toolchain) {
    std::vector<std::string> tools;
    for (const auto& t : s.toolchain->tools)
      tools.push_back(t.name + (t.version ? " " + *t.version : ""));
    b.line("Tools", tools.empty() ? style.dim("none found") : join(tools, ", "));
  }

  std::vector<std::string> problems;
  for (const auto& d : s.diagnostics)
    if (d.status == ProbeStatus::failed) problems.push_back(d.probe + ": " + d.reason);
  if (!problems.empty()) b.line("Failed", style.warn(join(problems, "; ")));
  return out + b.take();
}

std::string render_toolchain(const Toolchain& tc, const CompilerConfig& cfg, const Style& style,
                             const std::string& note) {
  std::string out;
  for (const auto& [category, tools] : tc.by_category()) {
    out += style.label(to_string(category)) + "\n";
    for (const auto& t : tools) {
      auto line =
          fmt::format("  {:<10} {:<12} {}", t.name, t.version.value_or("?"), t.path.value_or(""));
      line.erase(line.find_last_not_of(' ') + 1);
      out += line + "\n";
    }
  }
  if (!note.empty()) out += style.warn(note) + "\n";
  if (tc.tools.empty()) out += style.dim("no known build tool on PATH") + "\n";
  auto args = cfg.cmake_args();
  if (!args.empty()) {
    out += style.label("cmake") + "\n";
    for (const auto& a : args)
      out += "  " + a + "\n";
  }
  return out;
}

}  // namespace mainboard::view
