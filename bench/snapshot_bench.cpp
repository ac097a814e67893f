// How much the machine probe costs: the live reads a snapshot repeats, and the one-time identity.
#include <benchmark/benchmark.h>
#include <map>

#include "mainboard/machine.hpp"
#include "mainboard/runner.hpp"
#include "mainboard/toolchain.hpp"

using namespace mainboard;

// One /proc/meminfo read and parse: what a meter pays per sample.
static void BM_MemorySystem(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(Memory::system());
}
BENCHMARK(BM_MemorySystem);

// A full live snapshot on a machine whose identity is already known (what a second call costs):
// memory, clocks, load, cgroup, disks, scratch, and copies of the cached parts.
static void BM_SnapshotWithoutToolchain(benchmark::State& state) {
  Machine machine;
  machine.snapshot({.toolchain = false});
  for (auto _ : state)
    benchmark::DoNotOptimize(machine.snapshot({.toolchain = false}));
}
BENCHMARK(BM_SnapshotWithoutToolchain)->Unit(benchmark::kMicrosecond);

// The first snapshot of a new Machine: hwloc topology, board, identity, then the live reads.
static void BM_FirstSnapshotWithoutToolchain(benchmark::State& state) {
  for (auto _ : state) {
    Machine machine;
    benchmark::DoNotOptimize(machine.snapshot({.toolchain = false}));
  }
}
BENCHMARK(BM_FirstSnapshotWithoutToolchain)->Unit(benchmark::kMicrosecond);

// The same on the two-socket fixture host (32 CPUs of sysfs through hwloc).
static void BM_FirstSnapshotTwoSocketFixture(benchmark::State& state) {
  Machine::Options options;
  options.sysroot = MAINBOARD_FIXTURES "/hosts/numa-2socket";
  for (auto _ : state) {
    Machine machine(options);
    benchmark::DoNotOptimize(machine.snapshot({.toolchain = false}));
  }
}
BENCHMARK(BM_FirstSnapshotTwoSocketFixture)->Unit(benchmark::kMicrosecond);

// The fabric probes alone, as a snapshot reads them: InfiniBand ports and physical NICs on this
// machine (argument 0) and on the four-HCA fixture host (argument 1, through its sysroot).
static void BM_FabricReadings(benchmark::State& state) {
  Machine::Options options;
  if (state.range(0) == 1) options.sysroot = MAINBOARD_FIXTURES "/hosts/hpc-fabric";
  Machine machine(options);
  for (auto _ : state) {
    benchmark::DoNotOptimize(machine.reading("infiniband"));
    benchmark::DoNotOptimize(machine.reading("network"));
  }
}
BENCHMARK(BM_FabricReadings)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// The toolchain probe with every version answered by the on-disk cache: PATH lookups, stat()s
// of the binaries and one small JSON file, no process started.
static void BM_ToolchainWarmCache(benchmark::State& state) {
  auto file = std::filesystem::temp_directory_path() / "mainboard-bench-tools.cache";
  LocalRunner runner(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
  {
    ToolCache cache(file);
    Toolchain::probe(runner, tool_probes(), &cache);
  }
  for (auto _ : state) {
    ToolCache cache(file);
    benchmark::DoNotOptimize(Toolchain::probe(runner, tool_probes(), &cache));
  }
  std::filesystem::remove(file);
}
BENCHMARK(BM_ToolchainWarmCache)->Unit(benchmark::kMicrosecond);

// What a snapshot's Machine does first: read the cache file, with its index of the PATH
// directories (every probe's binaries asked in each, as the machine's runner asks them), then
// find each binary through that index.
static void BM_ToolCacheWithPathIndex(benchmark::State& state) {
  auto file = std::filesystem::temp_directory_path() / "mainboard-bench-tools-index.json";
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  auto find_all = [&](ToolCache& cache) {
    std::size_t found = 0;
    for (const auto& probe : tool_probes())
      for (const auto& bin : probe.binaries)
        found += cache.find_on_path(bin, path).has_value();
    return found;
  };
  {
    ToolCache cache(file);
    find_all(cache);
    cache.save();
  }
  for (auto _ : state) {
    ToolCache cache(file);
    benchmark::DoNotOptimize(find_all(cache));
  }
  state.counters["cache_bytes"] = static_cast<double>(std::filesystem::file_size(file));
  std::filesystem::remove(file);
}
BENCHMARK(BM_ToolCacheWithPathIndex)->Unit(benchmark::kMicrosecond);

// What the fabric, sensor, memory-health and PCI probes add to a warm snapshot: their share of
// the time every probe of the snapshot took, from the snapshot's own diagnostics (one run, so
// the ratio holds on a noisy machine). On this host, and on a recorded host that has them all.
static void new_probe_share(benchmark::State& state, const Machine& machine) {
  static const char* const kNew[] = {"pci",          "infiniband",      "network",
                                     "temperatures", "energy_counters", "huge_pages",
                                     "memory_errors"};
  machine.snapshot({.toolchain = false});
  double all_ns = 0, new_ns = 0;
  std::map<std::string, double> each_ns;
  for (auto _ : state) {
    auto snap = machine.snapshot({.toolchain = false});
    for (const auto& d : snap.diagnostics) {
      // Identity probes ran once, in the first snapshot; a warm one repeats the live ones only.
      if (d.probe == "pci" || d.probe == "cpu" || d.probe == "board" || d.probe == "environment" ||
          d.probe == "dimms" || d.probe == "os" || d.probe == "toolchain" ||
          d.probe == "compilers" || d.probe == "cuda" || d.probe.rfind("gpu", 0) == 0 ||
          d.probe.rfind("npu", 0) == 0)
        continue;
      all_ns += static_cast<double>(d.duration_ns);
      for (const char* n : kNew)
        if (d.probe == n) {
          new_ns += static_cast<double>(d.duration_ns);
          each_ns[n] += static_cast<double>(d.duration_ns);
        }
    }
    benchmark::DoNotOptimize(snap);
  }
  state.counters["new_probes_pct"] = all_ns > 0 ? 100.0 * new_ns / (all_ns - new_ns) : 0;
  state.counters["new_probes_us"] =
      benchmark::Counter(new_ns / 1e3, benchmark::Counter::kAvgIterations);
  for (const auto& [name, ns] : each_ns)
    state.counters[name + "_us"] = benchmark::Counter(ns / 1e3, benchmark::Counter::kAvgIterations);
}

static void BM_WarmSnapshotNewProbesLive(benchmark::State& state) {
  Machine machine;
  new_probe_share(state, machine);
}
BENCHMARK(BM_WarmSnapshotNewProbesLive)->Unit(benchmark::kMicrosecond);

// The same on recorded hosts that have the readings: sensors, huge pages and EDAC (numa-2socket),
// four InfiniBand HCAs and their NICs (hpc-fabric).
static void BM_WarmSnapshotNewProbesFixture(benchmark::State& state) {
  Machine::Options options;
  options.sysroot = state.range(0) == 0 ? MAINBOARD_FIXTURES "/hosts/numa-2socket"
                                        : MAINBOARD_FIXTURES "/hosts/hpc-fabric";
  Machine machine(options);
  new_probe_share(state, machine);
}
BENCHMARK(BM_WarmSnapshotNewProbesFixture)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
