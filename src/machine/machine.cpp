#include "mainboard/machine.hpp"

#include <cstdlib>
#include <future>
#include <mutex>

#include "core/clock.hpp"
#include "core/fs.hpp"
#include "core/log.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "host/probes.hpp"
#include "host/run_probe.hpp"
#include "machine/probe_table.hpp"
#include "machine/record.hpp"
#include "mainboard/error.hpp"
#include "providers/provider.hpp"

namespace mainboard {

namespace {

std::filesystem::path resolve_sysroot(const std::filesystem::path& requested) {
  if (!requested.empty()) return requested;
  if (const char* env = std::getenv("MAINBOARD_SYSROOT"); env && *env) return env;
  return "/";
}

}  // namespace

namespace {

/// A live runner whose executables are found through the tool cache's index of its PATH
/// directories (ToolCache::find_on_path) instead of a stat of each name in each directory.
class IndexedRunner final : public Runner {
 public:
  IndexedRunner(std::shared_ptr<const Runner> inner, std::shared_ptr<ToolCache> cache,
                std::string path)
      : inner_(std::move(inner)), cache_(cache), path_(std::move(path)) {}
  std::optional<std::string> find_executable(std::string_view name) const override {
    if (name.find('/') != std::string_view::npos) return inner_->find_executable(name);
    return cache_->find_on_path(name, path_);
  }
  std::vector<CommandResult> run_all(const std::vector<Command>& commands) const override {
    return inner_->run_all(commands);
  }
  std::optional<std::string> launched_program(const std::string& path) const override {
    return inner_->launched_program(path);
  }
  std::optional<std::string> search_path() const override { return path_; }

 private:
  std::shared_ptr<const Runner> inner_;
  std::shared_ptr<ToolCache> cache_;
  std::string path_;
};

}  // namespace

struct Machine::Impl {
  Options options;
  machine::Sources sources;
  std::shared_ptr<ToolCache> tool_cache;  // shared with the runner, which may outlive this

  // Identity: each probe of the table fills its fields of `identity` once.
  MachineSnapshot identity;
  std::unique_ptr<std::once_flag[]> identity_once;
  std::vector<Diagnostic> identity_diagnostics;
  std::unique_ptr<std::atomic<bool>[]> identity_done;

  std::once_flag cpu_once;
  std::shared_ptr<Cpu> cpu;

  std::once_flag units_once;
  std::vector<std::shared_ptr<Gpu>> gpus;
  std::vector<std::shared_ptr<Npu>> npus;
  std::vector<Diagnostic> unit_diagnostics;

  const core::Fs& fs() const { return *sources.fs; }

  providers::Context context() const {
    providers::Context c{sources.fs, sources.env, *sources.runner};
    c.shared_runner = sources.runner;
    c.listen_for_xids = options.listen_for_xids;
    return c;
  }

  void probe_units() {
    std::call_once(units_once, [&] {
      auto c = context();
      gpus = providers::probe_all<Gpu>(providers::gpu_providers(), c, "gpu", unit_diagnostics);
      npus = providers::probe_all<Npu>(providers::npu_providers(), c, "npu", unit_diagnostics);
    });
  }

  /// Runs identity probe `p` once (after the probes it reads), thread-safely.
  void ensure(const machine::HostProbe& p) {
    auto i = static_cast<std::size_t>(&p - machine::host_probes().data());
    std::call_once(identity_once[i], [&] {
      for (const char* first : p.after)
        if (first)
          if (const auto* q = machine::find_probe(first)) ensure(*q);
      host::run_probe<bool>(p.name, identity_diagnostics[i], [&](host::Note& note) {
        p.fill(sources, identity, note);
        return true;
      });
      identity_done[i] = true;
    });
  }
  void ensure(const char* name) { ensure(*machine::find_probe(name)); }

  /// A live probe's reading, with its diagnostic.
  MachineSnapshot live(const machine::HostProbe& p, Diagnostic& diagnostic) const {
    MachineSnapshot s;
    host::run_probe<bool>(p.name, diagnostic, [&](host::Note& note) {
      p.fill(sources, s, note);
      return true;
    });
    return s;
  }
  MachineSnapshot live(const char* name) const {
    Diagnostic ignored;
    return live(*machine::find_probe(name), ignored);
  }
};

Machine& Machine::instance() {
  static Machine machine;
  return machine;
}

Machine::Machine() : Machine(Options{}) {}

Machine::Machine(Options options) : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  m.options = std::move(options);
  m.sources.fs = std::make_shared<core::Fs>(resolve_sysroot(m.options.sysroot));
  const auto& fs = m.fs();
  if (m.options.environment) {
    m.sources.env = core::EnvMap(m.options.environment->begin(), m.options.environment->end());
  } else {
    m.sources.env = machine::host_environment(fs);
  }
  if (m.options.runner) {
    m.sources.runner = m.options.runner;
  } else if (fs.is_live()) {
    m.sources.runner =
        std::make_shared<LocalRunner>(core::env_value(m.sources.env, "PATH").value_or(""));
  } else {
    m.sources.runner = machine::recorded_runner(fs);
  }
  // Recorded hosts answer instantly from their record; a cache keyed by this machine's files
  // would be wrong for them.
  if (m.options.toolchain_cache && fs.is_live()) {
    auto file =
        m.options.toolchain_cache_file ? m.options.toolchain_cache_file : ToolCache::default_file();
    if (file) m.tool_cache = std::make_shared<ToolCache>(*file);
  }
  m.sources.tool_cache = m.tool_cache.get();
  // Every probe that looks for a program (a scheduler's commands, dmidecode, the tools) looks
  // through the cache's index of PATH: about 150 names a snapshot, most of them absent.
  if (m.tool_cache && !m.options.runner)
    if (auto path = m.sources.runner->search_path())
      m.sources.runner =
          std::make_shared<IndexedRunner>(m.sources.runner, m.tool_cache, std::move(*path));
  Impl* impl = impl_.get();
  m.sources.gpus = [impl]() -> const std::vector<std::shared_ptr<Gpu>>& {
    impl->probe_units();
    return impl->gpus;
  };
  auto n = machine::host_probes().size();
  m.identity_once = std::make_unique<std::once_flag[]>(n);
  m.identity_done = std::make_unique<std::atomic<bool>[]>(n);
  m.identity_diagnostics.resize(n);
}

Machine::~Machine() = default;

const std::filesystem::path& Machine::sysroot() const {
  return impl_->fs().root();
}
bool Machine::is_live() const {
  return impl_->fs().is_live();
}

const Cpu& Machine::cpu() const {
  impl_->ensure("cpu");
  std::call_once(impl_->cpu_once, [&] {
    impl_->cpu = std::make_shared<Cpu>(
        impl_->identity.cpu.info,
        std::make_shared<Cpu::Readers>(Cpu::Readers{impl_->sources.fs, impl_->sources.runner}));
  });
  return *impl_->cpu;
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
  impl_->ensure("environment");
  return impl_->identity.environment;
}

const Reading<Board>& Machine::board() const {
  impl_->ensure("board");
  return impl_->identity.board;
}

const Toolchain& Machine::toolchain() const {
  impl_->ensure("toolchain");
  return *impl_->identity.toolchain;
}

const CompilerConfig& Machine::compilers() const {
  impl_->ensure("compilers");
  return impl_->identity.compilers;
}

std::optional<std::string> Machine::nvcc_path() const {
  if (const auto* nvcc = toolchain().find("nvcc")) return nvcc->path;
  return std::nullopt;
}

const CudaStack& Machine::cuda_stack() const {
  impl_->ensure("cuda");
  return impl_->identity.cuda;
}

std::optional<std::string> Machine::cuda_architecture() const {
  for (const auto& g : gpus()) {
    std::string arch;
    for (char c : g->info().compute_capability)
      if (c != '.') arch += c;
    if (!arch.empty()) return arch;
  }
  return std::nullopt;
}

std::string Machine::hostname() const {
  return impl_->live("hostname").hostname;
}

Reading<Memory> Machine::memory() const {
  return impl_->live("memory").memory;
}

const std::vector<std::shared_ptr<Gpu>>& Gpu::all() {
  return Machine::instance().gpus();
}

std::vector<std::shared_ptr<Gpu>> Gpu::probe(const std::string& provider) {
  return Machine::instance().probe_gpus(provider);
}

std::vector<std::shared_ptr<Gpu>> Machine::probe_gpus(const std::string& provider) const {
  for (const auto& p : providers::gpu_providers()) {
    if (provider != p.name) continue;
    std::vector<Diagnostic> ignored;
    return providers::probe_all<Gpu>(std::span(&p, 1), impl_->context(), "gpu", ignored);
  }
  return {};
}

Reading<Memory> Memory::system(std::string scope, bool unified) {
  auto m = Machine::instance().memory();
  if (m) {
    m->scope = std::move(scope);
    m->unified = unified;
  }
  return m;
}

MemoryHardware Machine::memory_hardware() const {
  MemoryHardware hw = reading("dimms").memory_hardware;
  static_cast<SwapReading&>(hw) = reading("swap").memory_hardware;
  return hw;
}

Reading<Pressure> Machine::pressure() const {
  return impl_->live("pressure").pressure;
}

Reading<CgroupMemory> Machine::cgroup_memory() const {
  return impl_->live("cgroup_memory").cgroup_memory;
}

Disk Machine::disk() const {
  return impl_->live("disk").disk;
}

Scratch Machine::scratch() const {
  return impl_->live("scratch").scratch;
}

MachineSnapshot Machine::reading(std::string_view probe) const {
  const auto* p = machine::find_probe(probe);
  if (!p) {
    std::string names;
    for (const auto& q : machine::host_probes())
      names += (names.empty() ? "" : ", ") + std::string(q.name);
    throw Error("no host probe '" + std::string(probe) + "' (probes: " + names + ")");
  }
  if (p->lifetime == machine::Lifetime::live) {
    Diagnostic diagnostic;
    auto s = impl_->live(*p, diagnostic);
    s.diagnostics.push_back(std::move(diagnostic));  // whether it read, and why not
    return s;
  }
  impl_->ensure(*p);
  MachineSnapshot s;
  p->copy(impl_->identity, s);
  return s;
}

std::vector<Diagnostic> Machine::identity_diagnostics() const {
  std::vector<Diagnostic> out;
  auto probes = machine::host_probes();
  for (std::size_t i = 0; i < probes.size(); ++i)
    if (probes[i].lifetime == machine::Lifetime::identity && impl_->identity_done[i])
      out.push_back(impl_->identity_diagnostics[i]);
  for (const auto& d : impl_->unit_diagnostics)
    out.push_back(d);
  return out;
}

MachineSnapshot Machine::snapshot(const SnapshotOptions& options) const {
  auto& m = *impl_;
  auto wanted = [&](const machine::HostProbe& p) {
    return options.toolchain ||
           (std::string_view(p.name) != "toolchain" && std::string_view(p.name) != "compilers");
  };
  // The identity probes that start programs (version probes, dmidecode, getconf) each run on a
  // thread of their own, beside the rest: a program's start-up is their cost, not their work.
  // So does the CPU's topology (hwloc loaded, then about a hundred files of /sys read): the
  // longest of them all, begun first, beside the GPU providers' loading of their libraries.
  // With a warm tool cache none of that happens (versions and topology are read from it, getconf
  // is asked only through a sysroot), and four threads cost more than they save: a warm
  // `snapshot --json` took 4.6x /bin/true with them, 3.9x without. Only dmidecode, which is never
  // cached, keeps its thread where there is an SMBIOS table for it to read.
  std::vector<const char*> spawning;
  if (!m.tool_cache || !m.tool_cache->warm() || !m.fs().is_live()) {
    spawning = {"cpu", "dimms", "os"};
    if (options.toolchain) spawning.insert(spawning.begin(), "toolchain");
  } else if (host::smbios_table_present(m.fs())) {
    spawning = {"dimms"};
  }
  std::vector<std::future<void>> programs;
  for (const char* name : spawning) {
    try {
      programs.push_back(std::async(std::launch::async, [&m, name] { m.ensure(name); }));
    } catch (const std::system_error&) {
      // No thread available: it runs inline below, through the same call.
    }
  }
  auto starts_programs = [&](const machine::HostProbe& p) {
    return std::any_of(spawning.begin(), spawning.end(),
                       [&](const char* name) { return std::string_view(p.name) == name; });
  };

  // The files more than one probe reads, read once for all of them while this reading lasts:
  // /proc/meminfo (memory, swap), /proc/cpuinfo (the CPU, its clocks), the mounts and the block
  // devices (disks, scratch).
  core::SharedReads shared(m.fs(), {core::paths::kProcMeminfo, core::paths::kProcCpuinfo,
                                    core::paths::kProcSelfMounts, core::paths::kSysBlock});
  MachineSnapshot s;
  s.timestamp_ns = core::monotonic_ns();
  s.unix_time_ns = core::unix_ns();
  std::vector<Diagnostic> live;
  for (const auto& p : machine::host_probes()) {
    if (p.lifetime != machine::Lifetime::live) continue;
    Diagnostic d;
    p.copy(m.live(p, d), s);
    live.push_back(std::move(d));
  }
  for (const auto& g : gpus())
    s.gpus.push_back(g->gpu_snapshot());
  for (const auto& n : npus())
    s.npus.push_back(n->npu_snapshot());

  // The other identity probes (the CPU's topology, the environment) meanwhile, on this thread.
  for (const auto& p : machine::host_probes())
    if (p.lifetime == machine::Lifetime::identity && wanted(p) && !starts_programs(p)) m.ensure(p);
  for (auto& f : programs)
    f.get();
  for (const auto& p : machine::host_probes())
    if (p.lifetime == machine::Lifetime::identity && wanted(p)) {
      m.ensure(p);
      p.copy(m.identity, s);
    }
  s.diagnostics = identity_diagnostics();
  s.diagnostics.insert(s.diagnostics.end(), live.begin(), live.end());
  if (m.tool_cache) m.tool_cache->save();  // what the probes learned of PATH (when anything)
  return s;
}

}  // namespace mainboard
