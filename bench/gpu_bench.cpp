// What the NVIDIA provider costs on top of the driver: a full telemetry read of one GPU, and a
// machine snapshot with eight GPUs against one with none. The fake driver libraries answer
// (tests/fakes/), so this measures our side of the calls, not NVML's own latency.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "mainboard/machine.hpp"

using namespace mainboard;

namespace {

Machine::Options options(bool with_gpus) {
  ::setenv("MAINBOARD_FAKE_GPU_SCENARIO", MAINBOARD_FIXTURES "/gpus/h100x8.json", 1);
  Machine::Options o;
  o.sysroot = MAINBOARD_FIXTURES "/hosts/numa-2socket";
  o.environment = std::map<std::string, std::string>{
      {"MAINBOARD_NVML_LIBRARY", with_gpus ? MAINBOARD_FAKE_NVML : "/nonexistent.so"},
      {"MAINBOARD_CUDA_LIBRARY", with_gpus ? MAINBOARD_FAKE_CUDA : "/nonexistent.so"}};
  return o;
}

}  // namespace

// Every live reading of one GPU: memory, clocks, utilization, energy, thermal, PCIe, fan,
// processes — what `gpu_snapshot()` does.
static void BM_GpuTelemetryRead(benchmark::State& state) {
  Machine machine(options(true));
  const auto& gpu = *machine.gpus().at(3);
  for (auto _ : state) benchmark::DoNotOptimize(gpu.gpu_snapshot());
}
BENCHMARK(BM_GpuTelemetryRead)->Unit(benchmark::kMicrosecond);

// A snapshot (identity already probed) with 8 GPUs, and with none, side by side.
static void BM_SnapshotEightGpus(benchmark::State& state) {
  Machine machine(options(true));
  machine.snapshot({.toolchain = false});
  for (auto _ : state) benchmark::DoNotOptimize(machine.snapshot({.toolchain = false}));
}
BENCHMARK(BM_SnapshotEightGpus)->Unit(benchmark::kMicrosecond);

static void BM_SnapshotNoGpus(benchmark::State& state) {
  Machine machine(options(false));
  machine.snapshot({.toolchain = false});
  for (auto _ : state) benchmark::DoNotOptimize(machine.snapshot({.toolchain = false}));
}
BENCHMARK(BM_SnapshotNoGpus)->Unit(benchmark::kMicrosecond);

// The first snapshot of a new machine: loading both libraries, enumerating and identifying 8
// GPUs, then reading them.
static void BM_FirstSnapshotEightGpus(benchmark::State& state) {
  for (auto _ : state) {
    Machine machine(options(true));
    benchmark::DoNotOptimize(machine.snapshot({.toolchain = false}));
  }
}
BENCHMARK(BM_FirstSnapshotEightGpus)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
