// The fleet's own part of `mainboard fleet`: merging N node snapshots (the document read back
// from JSON, the groups, the differences). Slurm fans out; this is what grows with the nodes.
// Each node is the two-socket fixture host's snapshot with eight GPUs, one node in a hundred on
// another driver. The counters give the resident memory the merged fleet adds.
#include <benchmark/benchmark.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "mainboard/fleet.hpp"
#include "mainboard/json.hpp"
#include "mainboard/machine.hpp"

using namespace mainboard;

namespace {

/// The process's peak resident memory so far (VmHWM), in KiB.
long peak_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}

const MachineSnapshot& node_snapshot() {
  static MachineSnapshot s = [] {
    Machine::Options o;
    o.sysroot = std::string(MAINBOARD_FIXTURES) + "/hosts/numa-2socket";
    auto snap = Machine(o).snapshot();
    GpuSnapshot g;
    g.info.label = "NVIDIA H100 80GB HBM3";
    g.info.vendor = "nvidia";
    for (std::uint32_t i = 0; i < 8; ++i) {
      g.info.index = i;
      snap.gpus.push_back(g);
    }
    snap.cuda.driver_version = "550.54.15";
    snap.cuda.cuda_driver_version = "12.4";
    return snap;
  }();
  return s;
}

/// The fleet document of `n` nodes, as `fleet --json` writes it.
std::string fleet_json(std::size_t n) {
  Fleet f;
  for (std::size_t i = 0; i < n; ++i) {
    auto s = node_snapshot();
    s.hostname = "n" + std::to_string(i);
    if (i % 100 == 7) s.cuda.driver_version = "535.104.05";
    f.nodes.push_back({s.hostname, std::move(s), ""});
  }
  return nlohmann::json(f).dump();
}

void BM_FleetMerge(benchmark::State& state) {
  auto n = static_cast<std::size_t>(state.range(0));
  auto text = fleet_json(n);
  std::size_t drift = 0;
  for (auto _ : state) {
    auto fleet = nlohmann::json::parse(text).get<Fleet>();
    auto groups = fleet.groups();
    drift = fleet.differences().size();
    benchmark::DoNotOptimize(groups);
  }
  // The process peak (the generated document and its tree included): an upper bound.
  state.counters["process_peak_MiB"] = static_cast<double>(peak_kib()) / 1024.0;
  state.counters["document_MiB"] = static_cast<double>(text.size()) / (1 << 20);
  state.counters["differences"] = static_cast<double>(drift);
}
BENCHMARK(BM_FleetMerge)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond)->Iterations(1);

/// The grouping and the differences alone, the snapshots already read.
void BM_FleetGroupAndDiffer(benchmark::State& state) {
  auto fleet =
      nlohmann::json::parse(fleet_json(static_cast<std::size_t>(state.range(0)))).get<Fleet>();
  for (auto _ : state) {
    benchmark::DoNotOptimize(fleet.groups());
    benchmark::DoNotOptimize(fleet.differences());
  }
}
BENCHMARK(BM_FleetGroupAndDiffer)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
