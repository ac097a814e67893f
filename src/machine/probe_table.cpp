#include "machine/probe_table.hpp"

#include <algorithm>

#include "core/text.hpp"
#include "host/darwin.hpp"
#include "host/probes.hpp"
#include "providers/nvidia/provider.hpp"
#include "providers/provider.hpp"

namespace mainboard::machine {

namespace {

using host::Note;

// A probe that fills one field: how it reads it, and where it goes.
#define MAINBOARD_FIELD_PROBE(name, lifetime, after, field, ...)                        \
  HostProbe {                                                                           \
    name, lifetime, after,                                                              \
        [](const Sources& src, MachineSnapshot& s, [[maybe_unused]] Note& note) {       \
          s.field = __VA_ARGS__;                                                        \
        },                                                                              \
        [](const MachineSnapshot& from, MachineSnapshot& to) { to.field = from.field; } \
  }

constexpr std::array<const char*, 2> kFirst{nullptr, nullptr};
constexpr std::array<const char*, 2> kAfterToolchain{"toolchain", nullptr};

CpuInfo cpu_identity(const Sources& src, Note& note) {
  // A host without /proc is a Mac (live or recorded): sysctl tells its CPU.
  if (!src.fs->exists("/proc") && host::darwin::available(*src.runner))
    return host::darwin::probe_cpu(*src.runner, note);
  return host::probe_cpu(*src.fs, note);
}

void cpu_reading(const Sources& src, MachineSnapshot& s, Note& note) {
  s.cpu.clocks = host::read_cpu_clocks(*src.fs);
  if (s.cpu.clocks.empty()) note.unsupported("no cpufreq policies and no cpu MHz in /proc/cpuinfo");
  if (auto load = host::read_loadavg(*src.fs)) {
    s.cpu.load_1m = load->one;
    s.cpu.load_5m = load->five;
    s.cpu.load_15m = load->fifteen;
  }
}
void copy_cpu_reading(const MachineSnapshot& from, MachineSnapshot& to) {
  to.cpu.clocks = from.cpu.clocks;
  to.cpu.load_1m = from.cpu.load_1m;
  to.cpu.load_5m = from.cpu.load_5m;
  to.cpu.load_15m = from.cpu.load_15m;
}

std::string hostname(const Sources& src) {
  auto name = host::read_hostname(*src.fs);
  if (!name.empty()) return name;
  // No /proc (macOS, or a recorded Mac): the hostname command answers.
  if (auto exe = src.runner->find_executable("hostname")) {
    auto r = src.runner->run(Command{{*exe}, std::chrono::milliseconds(2000)});
    if (r.ok()) return std::string(core::trim(r.out));
  }
  return name;
}

void dimms(const Sources& src, MachineSnapshot& s, Note& note) {
  s.memory_hardware.cards = host::probe_dimms(*src.fs, *src.runner, note);
  s.memory_hardware.cards_supported = note.status == ProbeStatus::ok;
  s.memory_hardware.cards_reason = note.reason;
}
void copy_dimms(const MachineSnapshot& from, MachineSnapshot& to) {
  to.memory_hardware.cards = from.memory_hardware.cards;
  to.memory_hardware.cards_supported = from.memory_hardware.cards_supported;
  to.memory_hardware.cards_reason = from.memory_hardware.cards_reason;
}

void swap(const Sources& src, MachineSnapshot& s, Note& note) {
  if (auto sw = host::read_swap(*src.fs)) {
    s.memory_hardware.swap_total_bytes = sw->first;
    s.memory_hardware.swap_used_bytes = sw->second;
  } else {
    note.unsupported("no SwapTotal in /proc/meminfo");
  }
}
void copy_swap(const MachineSnapshot& from, MachineSnapshot& to) {
  to.memory_hardware.swap_total_bytes = from.memory_hardware.swap_total_bytes;
  to.memory_hardware.swap_used_bytes = from.memory_hardware.swap_used_bytes;
}

Toolchain toolchain(const Sources& src, Note& note) {
  auto tc = Toolchain::probe(*src.runner, tool_probes(), src.tool_cache);
  if (tc.tools.empty())
    note.unsupported("no known build tool on PATH");
  else if (src.tool_cache)
    note.reason = std::to_string(src.tool_cache->hits()) + " cached, " +
                  std::to_string(src.tool_cache->misses()) + " probed";
  return tc;
}

/// CC, CXX and CUDACXX as CMake would take them, else the first tool of each kind; the CUDA
/// architectures of the GPUs found.
CompilerConfig compilers(const Sources& src, const MachineSnapshot& s) {
  CompilerConfig cfg;
  auto pick = [&](const char* var, ToolCategory category) -> std::optional<std::string> {
    // An explicit CC/CXX/CUDACXX wins, as it does for CMake itself.
    if (auto v = core::env_value(src.env, var)) {
      if (v->find('/') != std::string::npos) return *v;
      if (auto p = src.runner->find_executable(*v)) return *p;
    }
    if (s.toolchain)
      for (const auto& t : s.toolchain->tools)
        if (t.category == category && t.available && t.path) return t.path;
    return std::nullopt;
  };
  cfg.c_compiler = pick("CC", ToolCategory::c);
  cfg.cxx_compiler = pick("CXX", ToolCategory::cxx);
  cfg.cuda_compiler = pick("CUDACXX", ToolCategory::cuda);
  std::vector<std::string> archs;
  if (src.gpus)
    for (const auto& g : src.gpus()) {
      std::string arch;
      for (char c : g->info().compute_capability)
        if (c != '.') arch += c;
      if (!arch.empty() && std::find(archs.begin(), archs.end(), arch) == archs.end())
        archs.push_back(arch);
    }
  if (!archs.empty()) {
    std::string joined;
    for (const auto& a : archs)
      joined += (joined.empty() ? "" : ";") + a;
    cfg.cuda_architectures = joined;
  }
  return cfg;
}

CudaStack cuda(const Sources& src, const MachineSnapshot& s, Note& note) {
  providers::Context context{src.fs, src.env, *src.runner};
  auto stack = nvidia::probe_cuda_stack(context);
  if (s.toolchain)
    if (const auto* nvcc = s.toolchain->find("nvcc")) {
      stack.nvcc_path = nvcc->path;
      stack.nvcc_version = nvcc->version;
    }
  if (!stack.nvml.found && !stack.cuda_driver.found) note.unsupported("no NVIDIA driver libraries");
  return stack;
}

Memory memory(const Sources& src, Note& note) {
  auto m = host::host_memory(*src.fs, src.runner.get());
  if (!m.supported) note.unsupported(m.reason);
  return m;
}

std::optional<OperatingSystem> os(const Sources& src, Note& note) {
  auto o = host::probe_os(*src.fs, *src.runner, note);
  if (o == OperatingSystem{}) return std::nullopt;  // nothing of it could be read
  return o;
}

std::optional<HostTuning> tuning(const Sources& src, Note& note) {
  auto t = host::probe_tuning(*src.fs, note);
  if (t == HostTuning{}) return std::nullopt;
  return t;
}

CgroupMemory cgroup(const Sources& src, Note& note) {
  auto c = host::probe_cgroup_memory(*src.fs);
  if (!c.supported) note.unsupported(c.reason);
  return c;
}

const HostProbe kProbes[] = {
    // Identity: read once per Machine.
    MAINBOARD_FIELD_PROBE("cpu", Lifetime::identity, kFirst, cpu.info, cpu_identity(src, note)),
    MAINBOARD_FIELD_PROBE("board", Lifetime::identity, kFirst, board,
                          host::probe_board(*src.fs, note)),
    MAINBOARD_FIELD_PROBE("environment", Lifetime::identity, kFirst, environment,
                          host::probe_environment(*src.fs, src.env, *src.runner, note)),
    HostProbe{"dimms", Lifetime::identity, kFirst, dimms, copy_dimms},
    MAINBOARD_FIELD_PROBE("os", Lifetime::identity, kFirst, os, os(src, note)),
    MAINBOARD_FIELD_PROBE("toolchain", Lifetime::identity, kFirst, toolchain, toolchain(src, note)),
    MAINBOARD_FIELD_PROBE("compilers", Lifetime::identity, kAfterToolchain, compilers,
                          compilers(src, s)),
    MAINBOARD_FIELD_PROBE("cuda", Lifetime::identity, kAfterToolchain, cuda, cuda(src, s, note)),
    // Live: read at every snapshot.
    MAINBOARD_FIELD_PROBE("hostname", Lifetime::live, kFirst, hostname, hostname(src)),
    HostProbe{"cpu_clocks", Lifetime::live, kFirst, cpu_reading, copy_cpu_reading},
    MAINBOARD_FIELD_PROBE("memory", Lifetime::live, kFirst, memory, memory(src, note)),
    MAINBOARD_FIELD_PROBE("tuning", Lifetime::live, kFirst, tuning, tuning(src, note)),
    HostProbe{"swap", Lifetime::live, kFirst, swap, copy_swap},
    MAINBOARD_FIELD_PROBE("cgroup_memory", Lifetime::live, kFirst, cgroup_memory,
                          cgroup(src, note)),
    MAINBOARD_FIELD_PROBE("pressure", Lifetime::live, kFirst, pressure,
                          host::probe_pressure(*src.fs, note)),
    MAINBOARD_FIELD_PROBE("disk", Lifetime::live, kFirst, disk,
                          host::probe_disk(*src.fs, src.env, note)),
    MAINBOARD_FIELD_PROBE("scratch", Lifetime::live, kFirst, scratch,
                          host::probe_scratch(*src.fs, src.env, note)),
};

#undef MAINBOARD_FIELD_PROBE

}  // namespace

std::span<const HostProbe> host_probes() {
  return kProbes;
}

const HostProbe* find_probe(std::string_view name) {
  for (const auto& p : kProbes)
    if (name == p.name) return &p;
  return nullptr;
}

}  // namespace mainboard::machine
