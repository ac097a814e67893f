#include "machine/probe_table.hpp"

#include <algorithm>

#include "core/text.hpp"
#include "host/darwin.hpp"
#include "host/probes.hpp"
#include "providers/nvidia/provider.hpp"
#include "providers/provider.hpp"

namespace mainboard::host {

// The readers of the probes that compose the others' layers or need no file of their own.

CpuInfo read_cpu(const Sources& src, const MachineSnapshot&, Note& note) {
  // A host without /proc is a Mac (live or recorded): sysctl tells its CPU.
  if (!src.fs->exists("/proc") && darwin::available(*src.runner))
    return darwin::probe_cpu(*src.runner, note);
  return probe_cpu(*src.fs, note, src.tool_cache);
}

CpuReadings read_cpu_clocks(const Sources& src, const MachineSnapshot&, Note& note) {
  CpuReadings r;
  r.clocks = read_cpu_clocks(*src.fs);
  if (r.clocks.empty()) note.unsupported("no cpufreq policies and no cpu MHz in /proc/cpuinfo");
  std::string why;
  if (auto load = read_loadavg(*src.fs, &why)) {
    r.load_1m = load->one;
    r.load_5m = load->five;
    r.load_15m = load->fifteen;
  } else {
    note.unsupported(why);
  }
  return r;
}

Reading<Board> read_board(const Sources& src, const MachineSnapshot&, Note& note) {
  auto b = probe_board(*src.fs);
  if (auto* why = b.unavailable()) note.unavailable(*why);
  return b;
}

Environment read_environment(const Sources& src, const MachineSnapshot&, Note& note) {
  return probe_environment(*src.fs, src.env, *src.runner, note);
}

std::string read_hostname(const Sources& src, const MachineSnapshot&, Note&) {
  auto name = read_hostname(*src.fs);
  if (!name.empty()) return name;
  // No /proc (macOS, or a recorded Mac): the hostname command answers.
  if (auto exe = src.runner->find_executable("hostname")) {
    auto r = src.runner->run(Command{{*exe}, std::chrono::milliseconds(2000)});
    if (r.ok()) return std::string(core::trim(r.out));
  }
  return name;
}

MemorySlots read_dimms(const Sources& src, const MachineSnapshot&, Note& note) {
  MemorySlots slots;
  auto cards = probe_dimms(*src.fs, *src.runner, note);
  if (note.status == ProbeStatus::ok)
    slots.cards = std::move(cards);
  else
    slots.cards = Unavailable{note.status, note.reason};
  return slots;
}

SwapReading read_swap(const Sources& src, const MachineSnapshot&, Note& note) {
  SwapReading r;
  if (auto sw = read_swap(*src.fs)) {
    r.swap_total_bytes = sw->first;
    r.swap_used_bytes = sw->second;
  } else {
    note.unsupported("no SwapTotal in /proc/meminfo");
  }
  return r;
}

std::optional<Toolchain> read_toolchain(const Sources& src, const MachineSnapshot&, Note& note) {
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
CompilerConfig read_compilers(const Sources& src, const MachineSnapshot& s, Note&) {
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

CudaStack read_cuda(const Sources& src, const MachineSnapshot& s, Note& note) {
  providers::Context context{src.fs, src.env, *src.runner};
  auto stack = nvidia::probe_cuda_stack(context);
  if (s.toolchain)
    if (const auto* nvcc = s.toolchain->find("nvcc")) {
      stack.nvcc_path = nvcc->path;
      stack.nvcc_version = nvcc->version;
    }
  // As a recorded host says it (gather reproduces this reading): why the libraries were not
  // loaded, a kernel driver missing among the reasons, is the gpu:nvidia diagnostic's to say.
  if (!stack.nvml.found && !stack.cuda_driver.found) note.unsupported("no NVIDIA driver libraries");
  return stack;
}

Reading<Memory> read_memory(const Sources& src, const MachineSnapshot&, Note& note) {
  auto m = host_memory(*src.fs, src.runner.get());
  if (auto* why = m.unavailable()) note.unavailable(*why);
  return m;
}

std::optional<OperatingSystem> read_os(const Sources& src, const MachineSnapshot&, Note& note) {
  auto o = probe_os(*src.fs, *src.runner, note);
  if (o == OperatingSystem{}) return std::nullopt;  // nothing of it could be read
  return o;
}

std::optional<HostTuning> read_tuning(const Sources& src, const MachineSnapshot&, Note& note) {
  auto t = probe_tuning(*src.fs, note);
  if (t == HostTuning{}) return std::nullopt;
  return t;
}

Reading<CgroupMemory> read_cgroup_memory(const Sources& src, const MachineSnapshot&, Note& note) {
  auto c = probe_cgroup_memory(*src.fs);
  if (auto* why = c.unavailable()) note.unavailable(*why);
  return c;
}

Disk read_disk(const Sources& src, const MachineSnapshot&, Note& note) {
  return probe_disk(*src.fs, src.env, note);
}

Scratch read_scratch(const Sources& src, const MachineSnapshot&, Note& note) {
  return probe_scratch(*src.fs, src.env, note);
}

}  // namespace mainboard::host

namespace mainboard::machine {

namespace {

constexpr const char* after_name(std::string_view after) {
  return after == "none" ? nullptr : after.data();
}

// One row of the table: its reader fills the part, and the part alone is copied. `part` finds
// the part in a snapshot: the member, a member within it, or the member's base of that type.
#define MAINBOARD_PROBE_ROW(name, lifetime, after, Part, member, path)                            \
  HostProbe{#name,                                                                                \
            Lifetime::lifetime,                                                                   \
            {after_name(#after), nullptr},                                                        \
            [](const Sources& src, MachineSnapshot& s, host::Note& note) {                        \
              static_assert(                                                                      \
                  Lifetime::lifetime == Lifetime::identity || std::string_view(#after) == "none", \
                  "a live probe reads no other probe's part");                                    \
              static_cast<Part&>(s.member path) = host::read_##name(src, s, note);                \
            },                                                                                    \
            [](const MachineSnapshot& from, MachineSnapshot& to) {                                \
              static_cast<Part&>(to.member path) = static_cast<const Part&>(from.member path);    \
            }},

const HostProbe kProbes[] = {MAINBOARD_HOST_PROBES(MAINBOARD_PROBE_ROW)};

#undef MAINBOARD_PROBE_ROW

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
