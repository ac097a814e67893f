#include "mainboard/machine.hpp"

#include <cstdlib>
#include <future>
#include <mutex>

#include "core/clock.hpp"
#include "core/fs.hpp"
#include "core/log.hpp"
#include "core/text.hpp"
#include "host/darwin.hpp"
#include "host/probes.hpp"
#include "host/run_probe.hpp"
#include "machine/record.hpp"
#include "providers/nvidia/provider.hpp"
#include "providers/provider.hpp"

namespace mainboard {

namespace {

/// A value computed once, with the diagnostic of the probe that computed it.
template <class T>
struct Cached {
  std::once_flag once;
  std::optional<T> value;
  Diagnostic diagnostic;
};

template <class T, class F>
const T& once(Cached<T>& c, const char* name, F&& make) {
  std::call_once(c.once, [&] { c.value.emplace(host::run_probe<T>(name, c.diagnostic, make)); });
  return *c.value;
}

std::filesystem::path resolve_sysroot(const std::filesystem::path& requested) {
  if (!requested.empty()) return requested;
  if (const char* env = std::getenv("MAINBOARD_SYSROOT"); env && *env) return env;
  return "/";
}

}  // namespace

struct Machine::Impl {
  Options options;
  std::shared_ptr<const core::Fs> fs;
  core::EnvMap env;
  std::shared_ptr<const Runner> runner;

  Cached<std::shared_ptr<Cpu>> cpu;
  Cached<Board> board;
  Cached<Environment> environment;
  Cached<Toolchain> toolchain;
  Cached<CompilerConfig> compilers;
  Cached<std::vector<DimmCard>> dimms;
  Cached<CudaStack> cuda;
  std::once_flag gpus_once;
  std::vector<std::shared_ptr<Gpu>> gpus;
  std::vector<std::shared_ptr<Npu>> npus;
  std::vector<Diagnostic> unit_diagnostics;

  void probe_units() {
    std::call_once(gpus_once, [&] {
      providers::Context context{fs, env, *runner};
      context.shared_runner = runner;
      gpus =
          providers::probe_all<Gpu>(providers::gpu_providers(), context, "gpu", unit_diagnostics);
      npus =
          providers::probe_all<Npu>(providers::npu_providers(), context, "npu", unit_diagnostics);
    });
  }
};

Machine& Machine::instance() {
  static Machine machine;
  return machine;
}

Machine::Machine() : Machine(Options{}) {}

Machine::Machine(Options options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->fs = std::make_shared<core::Fs>(resolve_sysroot(impl_->options.sysroot));
  const auto& fs = *impl_->fs;
  if (impl_->options.environment) {
    impl_->env =
        core::EnvMap(impl_->options.environment->begin(), impl_->options.environment->end());
  } else {
    impl_->env = fs.is_live() ? core::process_environment() : machine::recorded_environment(fs);
    // Our own variables say how to replay a recorded host (which fake driver library to load),
    // not what the host was: this process's always apply.
    if (!fs.is_live())
      for (const auto& [name, value] : core::process_environment())
        if (core::starts_with(name, "MAINBOARD_")) impl_->env[name] = value;
  }
  if (impl_->options.runner) {
    impl_->runner = impl_->options.runner;
  } else if (fs.is_live()) {
    impl_->runner = std::make_shared<LocalRunner>(core::env_value(impl_->env, "PATH").value_or(""));
  } else {
    impl_->runner = machine::recorded_runner(fs);
  }
}

Machine::~Machine() = default;

const std::filesystem::path& Machine::sysroot() const {
  return impl_->fs->root();
}
bool Machine::is_live() const {
  return impl_->fs->is_live();
}

const Cpu& Machine::cpu() const {
  return *once(impl_->cpu, "cpu", [&](host::Note& note) {
    CpuInfo info;
    try {
      const auto& fs = *impl_->fs;
      // A host without /proc is a Mac (live or recorded): sysctl tells its CPU.
      if (!fs.exists("/proc") && host::darwin::available(*impl_->runner))
        info = host::darwin::probe_cpu(*impl_->runner, note);
      else
        info = host::probe_cpu(fs, note);
    } catch (const std::exception& e) {
      note.failed(e.what());
    }
    return std::make_shared<Cpu>(std::move(info),
                                 std::make_shared<Cpu::Readers>(Cpu::Readers{impl_->fs, impl_->runner}));
  });
}

Host Machine::host() const {
  return Host{cpu().info(), memory(), disk()};
}

const std::vector<std::shared_ptr<Gpu>>& Machine::gpus() const {
  impl_->probe_units();
  return impl_->gpus;
}

const std::vector<std::shared_ptr<Npu>>& Machine::npus() const {
  impl_->probe_units();
  return impl_->npus;
}

std::vector<const Unit*> Machine::units() const {
  std::vector<const Unit*> out{&cpu()};
  for (const auto& g : gpus())
    out.push_back(g.get());
  for (const auto& n : npus())
    out.push_back(n.get());
  return out;
}

const Environment& Machine::environment() const {
  return once(impl_->environment, "environment", [&](host::Note& note) {
    return host::probe_environment(*impl_->fs, impl_->env, *impl_->runner, note);
  });
}

const Board& Machine::board() const {
  return once(impl_->board, "board",
              [&](host::Note& note) { return host::probe_board(*impl_->fs, note); });
}

const Toolchain& Machine::toolchain() const {
  return once(impl_->toolchain, "toolchain", [&](host::Note& note) {
    std::optional<ToolCache> cache;
    // Recorded hosts answer instantly from their record; a cache keyed by this machine's files
    // would be wrong for them.
    if (impl_->options.toolchain_cache && impl_->fs->is_live()) {
      auto file = impl_->options.toolchain_cache_file ? impl_->options.toolchain_cache_file
                                                      : ToolCache::default_file();
      if (file) cache.emplace(*file);
    }
    auto tc = Toolchain::probe(*impl_->runner, tool_probes(), cache ? &*cache : nullptr);
    if (tc.tools.empty())
      note.unsupported("no known build tool on PATH");
    else if (cache)
      note.reason =
          std::to_string(cache->hits()) + " cached, " + std::to_string(cache->misses()) + " probed";
    return tc;
  });
}

const CompilerConfig& Machine::compilers() const {
  return once(impl_->compilers, "compilers", [&](host::Note&) {
    CompilerConfig cfg;
    const auto& tc = toolchain();
    auto pick = [&](const char* var, ToolCategory category) -> std::optional<std::string> {
      // An explicit CC/CXX/CUDACXX wins, as it does for CMake itself.
      if (auto v = core::env_value(impl_->env, var)) {
        if (v->find('/') != std::string::npos) return *v;
        if (auto p = impl_->runner->find_executable(*v)) return *p;
      }
      for (const auto& t : tc.tools)
        if (t.category == category && t.available && t.path) return t.path;
      return std::nullopt;
    };
    cfg.c_compiler = pick("CC", ToolCategory::c);
    cfg.cxx_compiler = pick("CXX", ToolCategory::cxx);
    cfg.cuda_compiler = pick("CUDACXX", ToolCategory::cuda);
    std::vector<std::string> archs;
    for (const auto& g : gpus()) {
      const auto& cc = g->info().compute_capability;
      if (cc.empty()) continue;
      std::string arch;
      for (char c : cc)
        if (c != '.') arch += c;
      if (std::find(archs.begin(), archs.end(), arch) == archs.end()) archs.push_back(arch);
    }
    if (!archs.empty()) {
      std::string joined;
      for (const auto& a : archs)
        joined += (joined.empty() ? "" : ";") + a;
      cfg.cuda_architectures = joined;
    }
    return cfg;
  });
}

std::optional<std::string> Machine::nvcc_path() const {
  if (const auto* nvcc = toolchain().find("nvcc")) return nvcc->path;
  return std::nullopt;
}

const CudaStack& Machine::cuda_stack() const {
  return once(impl_->cuda, "cuda", [&](host::Note& note) {
    providers::Context context{impl_->fs, impl_->env, *impl_->runner};
    auto stack = nvidia::probe_cuda_stack(context);
    if (const auto* nvcc = toolchain().find("nvcc")) {
      stack.nvcc_path = nvcc->path;
      stack.nvcc_version = nvcc->version;
    }
    if (!stack.nvml.found && !stack.cuda_driver.found) note.unsupported("no NVIDIA driver libraries");
    return stack;
  });
}

std::optional<std::string> Machine::cuda_architecture() const {
  for (const auto& g : gpus()) {
    const auto& cc = g->info().compute_capability;
    if (cc.empty()) continue;
    std::string arch;
    for (char c : cc)
      if (c != '.') arch += c;
    return arch;
  }
  return std::nullopt;
}

std::string Machine::hostname() const {
  auto name = host::read_hostname(*impl_->fs);
  if (!name.empty()) return name;
  // No /proc (macOS, or a recorded Mac): the hostname command answers.
  if (auto exe = impl_->runner->find_executable("hostname")) {
    auto r = impl_->runner->run(Command{{*exe}, std::chrono::milliseconds(2000)});
    if (r.ok()) return std::string(core::trim(r.out));
  }
  return name;
}

Memory Machine::memory() const {
  return host::host_memory(*impl_->fs, impl_->runner.get());
}

const std::vector<std::shared_ptr<Gpu>>& Gpu::all() { return Machine::instance().gpus(); }

std::vector<std::shared_ptr<Gpu>> Gpu::probe(const std::string& provider) {
  return Machine::instance().probe_gpus(provider);
}

std::vector<std::shared_ptr<Gpu>> Machine::probe_gpus(const std::string& provider) const {
  for (const auto& p : providers::gpu_providers()) {
    if (provider != p.name) continue;
    std::vector<Diagnostic> ignored;
    providers::Context context{impl_->fs, impl_->env, *impl_->runner};
    context.shared_runner = impl_->runner;
    return providers::probe_all<Gpu>(std::span(&p, 1), context, "gpu", ignored);
  }
  return {};
}

Memory Memory::system(std::string scope, bool unified) {
  auto m = Machine::instance().memory();
  m.scope = std::move(scope);
  m.unified = unified;
  return m;
}

MemoryHardware Machine::memory_hardware() const {
  MemoryHardware hw;
  const auto& cards = once(impl_->dimms, "dimms", [&](host::Note& note) {
    return host::probe_dimms(*impl_->runner, note);
  });
  hw.cards = cards;
  hw.cards_supported = impl_->dimms.diagnostic.status == ProbeStatus::ok;
  hw.cards_reason = impl_->dimms.diagnostic.reason;
  if (auto swap = host::read_swap(*impl_->fs)) {
    hw.swap_total_bytes = swap->first;
    hw.swap_used_bytes = swap->second;
  }
  return hw;
}

CgroupMemory Machine::cgroup_memory() const {
  return host::probe_cgroup_memory(*impl_->fs);
}

Disk Machine::disk() const {
  host::Note note;
  return host::probe_disk(*impl_->fs, impl_->env, note);
}

Scratch Machine::scratch() const {
  host::Note note;
  return host::probe_scratch(*impl_->fs, impl_->env, note);
}

std::vector<Diagnostic> Machine::identity_diagnostics() const {
  std::vector<Diagnostic> out;
  auto add = [&](auto& cached) {
    // Only probes that have run: call_once state is not observable, so look at the value.
    if (cached.value) out.push_back(cached.diagnostic);
  };
  add(impl_->cpu);
  add(impl_->board);
  add(impl_->environment);
  add(impl_->dimms);
  add(impl_->toolchain);
  add(impl_->cuda);
  for (const auto& d : impl_->unit_diagnostics)
    out.push_back(d);
  return out;
}

MachineSnapshot Machine::snapshot(const SnapshotOptions& options) const {
  MachineSnapshot s;
  s.timestamp_ns = core::monotonic_ns();
  s.unix_time_ns = core::unix_ns();

  // The probes that start programs (version probes, dmidecode) run beside the file readers.
  std::future<void> programs;
  try {
    programs = std::async(std::launch::async, [&] {
      if (options.toolchain) toolchain();
      memory_hardware();
    });
  } catch (const std::system_error&) {
    // No thread available: they run inline below, through the same cached calls.
  }

  std::vector<Diagnostic> live;
  auto timed = [&](const char* name, auto&& fn) {
    Diagnostic d;
    auto value = host::run_probe<decltype(fn(std::declval<host::Note&>()))>(name, d, fn);
    live.push_back(std::move(d));
    return value;
  };

  s.hostname = hostname();
  const auto& cpu_unit = cpu();
  s.cpu = timed("cpu_clocks", [&](host::Note& note) {
    auto r = cpu_unit.reading();
    if (r.clocks.empty()) note.unsupported("no cpufreq policies and no cpu MHz in /proc/cpuinfo");
    return r;
  });
  s.memory = timed("memory", [&](host::Note& note) {
    auto m = host::host_memory(*impl_->fs, impl_->runner.get());
    if (!m.supported) note.unsupported(m.reason);
    return m;
  });
  s.cgroup_memory = timed("cgroup_memory", [&](host::Note& note) {
    auto c = host::probe_cgroup_memory(*impl_->fs);
    if (!c.supported) note.unsupported(c.reason);
    return c;
  });
  s.disk = timed("disk",
                 [&](host::Note& note) { return host::probe_disk(*impl_->fs, impl_->env, note); });
  s.scratch = timed("scratch", [&](host::Note& note) {
    return host::probe_scratch(*impl_->fs, impl_->env, note);
  });
  s.board = board();
  s.environment = environment();
  for (const auto& g : gpus())
    s.gpus.push_back(g->gpu_snapshot());
  for (const auto& n : npus())
    s.npus.push_back(n->npu_snapshot());

  if (programs.valid()) programs.get();
  s.memory_hardware = memory_hardware();
  if (options.toolchain) {
    s.toolchain = toolchain();
    s.compilers = compilers();
  }
  s.cuda = cuda_stack();

  s.diagnostics = identity_diagnostics();
  s.diagnostics.insert(s.diagnostics.end(), live.begin(), live.end());
  return s;
}

}  // namespace mainboard
