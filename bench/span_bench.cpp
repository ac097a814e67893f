// What a span costs: dormant (no session), active (statistics, and statistics plus a stored
// event) on 1, 2 and 4 threads, with the NVTX bridge forced on, next to a pair of
// steady_clock::now() and, where the CUDA toolkit's NVTX header exists, an NVTX push/pop with no
// tool attached. Then what a profile of
// one million stored spans costs to save, load and export, and in memory.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "mainboard/machine.hpp"
#include "mainboard/profiler.hpp"

#ifdef MAINBOARD_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

using namespace mainboard;

namespace {

Machine& quiet_machine() {
  static Machine m([] {
    Machine::Options o;
    o.sysroot = MAINBOARD_FIXTURES "/hosts/numa-2socket";
    return o;
  }());
  return m;
}

Collection spans(std::uint64_t max_spans) {
  Collection c;
  c.features = Feature::spans;
  c.max_spans = max_spans;
  c.machine = &quiet_machine();
  return c;
}

std::unique_ptr<Profiler> g_profiler;

}  // namespace

static void BM_EmptyLoop(benchmark::State& state) {
  for (auto _ : state)
    benchmark::ClobberMemory();
}
BENCHMARK(BM_EmptyLoop);

static void BM_DormantSpan(benchmark::State& state) {
  for (auto _ : state) {
    MAINBOARD_SPAN("dormant");
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_DormantSpan);

static void BM_SteadyClockPair(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(std::chrono::steady_clock::now());
    benchmark::DoNotOptimize(std::chrono::steady_clock::now());
  }
}
BENCHMARK(BM_SteadyClockPair);

#ifdef MAINBOARD_HAVE_NVTX
static void BM_NvtxPushPopNoTool(benchmark::State& state) {
  for (auto _ : state) {
    nvtxRangePushA("nvtx");
    nvtxRangePop();
  }
}
BENCHMARK(BM_NvtxPushPopNoTool);
#endif

// Statistics only: the session stores no events (max_spans 0), every span updates its path.
static void BM_ActiveSpanStatistics(benchmark::State& state) {
  if (state.thread_index() == 0) g_profiler = std::make_unique<Profiler>(spans(0));
  for (auto _ : state) {
    MAINBOARD_SPAN("active");
    benchmark::ClobberMemory();
  }
  if (state.thread_index() == 0) g_profiler.reset();
}
BENCHMARK(BM_ActiveSpanStatistics)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

// The NVTX bridge switched on with no NVTX tool attached: every span also calls
// nvtxRangePushA/Pop, which return at once. Compare with BM_ActiveSpanStatistics/threads:1, where
// the bridge is off because no tool is attached (the default).
static void BM_ActiveSpanNvtxBridgeNoTool(benchmark::State& state) {
  auto c = spans(0);
  c.nvtx = NvtxBridge::always;
  g_profiler = std::make_unique<Profiler>(c);
  for (auto _ : state) {
    MAINBOARD_SPAN("active");
    benchmark::ClobberMemory();
  }
  g_profiler.reset();
}
BENCHMARK(BM_ActiveSpanNvtxBridgeNoTool);

// Statistics and a stored event for every span (a fixed count, so memory stays bounded).
static void BM_ActiveSpanStored(benchmark::State& state) {
  if (state.thread_index() == 0) g_profiler = std::make_unique<Profiler>(spans(100'000'000));
  for (auto _ : state) {
    MAINBOARD_SPAN("stored");
    benchmark::ClobberMemory();
  }
  if (state.thread_index() == 0) g_profiler.reset();
}
BENCHMARK(BM_ActiveSpanStored)
    ->Threads(1)
    ->Threads(2)
    ->Threads(4)
    ->Iterations(2'000'000)
    ->UseRealTime();

// Many distinct span names under one parent: the cost of a span should not grow with how many
// names its parent already has (it did: a scan of every sibling, 240 000 names in 10 s). The
// time per span at 1 000 and at 100 000 names, compared in one run.
static void BM_DistinctNamesUnderOneParent(benchmark::State& state) {
  auto n = static_cast<std::size_t>(state.range(0));
  std::vector<std::string> names(n);
  for (std::size_t i = 0; i < n; ++i)
    names[i] = "name-" + std::to_string(i);
  for (auto _ : state) {
    Profiler p(spans(0));
    MAINBOARD_SPAN("parent");
    for (const auto& name : names) {
      Span s(name.c_str());
      benchmark::ClobberMemory();
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
BENCHMARK(BM_DistinctNamesUnderOneParent)->Arg(1'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

// Memory and time of a recursion 10 000 spans deep, frozen into a Profile: in proportion to the
// spans (it was the square of the depth: 510 MB).
static void BM_DeepNesting(benchmark::State& state) {
  auto depth = static_cast<int>(state.range(0));
  std::size_t bytes = 0;
  for (auto _ : state) {
    Profiler p(spans(0));
    std::vector<SpanToken> open;
    for (int i = 0; i < depth; ++i)
      open.push_back(p.enter("level"));
    for (auto it = open.rbegin(); it != open.rend(); ++it)
      p.exit(*it);
    p.stop();
    bytes = 0;
    for (const auto& path : p.result().paths)
      bytes += path.size();
  }
  state.counters["path_bytes_per_span"] = static_cast<double>(bytes) / depth;
}
BENCHMARK(BM_DeepNesting)->Arg(1'000)->Arg(10'000)->Unit(benchmark::kMillisecond);

namespace {

long rss_kib() {
  std::ifstream in("/proc/self/statm");
  long pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

const Profile& million() {
  static Profile p = [] {
    Profiler profiler(spans(1'000'000));
    for (int i = 0; i < 1'000'000; ++i) {
      MAINBOARD_SPAN("step");
    }
    return profiler.result();
  }();
  return p;
}

}  // namespace

// Memory per stored span: RSS growth while a session records a million spans, and again once
// they are frozen into a Profile (both live at that point).
static void BM_MemoryPerStoredSpan(benchmark::State& state) {
  for (auto _ : state) {
    long before = rss_kib();
    Profiler profiler(spans(1'000'000));
    for (int i = 0; i < 1'000'000; ++i) {
      MAINBOARD_SPAN("step");
    }
    long recorded = rss_kib();
    const auto& profile = profiler.result();
    long frozen = rss_kib();
    benchmark::DoNotOptimize(profile.spans.size());
    state.counters["session_bytes_per_span"] =
        static_cast<double>(recorded - before) * 1024.0 / 1e6;
    state.counters["profile_bytes_per_span"] =
        static_cast<double>(frozen - recorded) * 1024.0 / 1e6;
  }
}
BENCHMARK(BM_MemoryPerStoredSpan)->Iterations(1)->Unit(benchmark::kMillisecond);

static void BM_SaveAndLoadMillionSpans(benchmark::State& state) {
  const auto& p = million();
  auto file = std::filesystem::temp_directory_path() / "mainboard-bench-profile.json";
  for (auto _ : state) {
    p.save(file);
    auto back = Profile::load(file);
    benchmark::DoNotOptimize(back.spans.size());
  }
  state.counters["spans"] = static_cast<double>(p.spans.size());
  std::filesystem::remove(file);
}
BENCHMARK(BM_SaveAndLoadMillionSpans)->Iterations(2)->Unit(benchmark::kMillisecond);

static void BM_PerfettoMillionSpans(benchmark::State& state) {
  const auto& p = million();
  auto file = std::filesystem::temp_directory_path() / "mainboard-bench-trace.json";
  for (auto _ : state)
    p.perfetto(file);
  state.counters["bytes"] = static_cast<double>(std::filesystem::file_size(file));
  std::filesystem::remove(file);
}
BENCHMARK(BM_PerfettoMillionSpans)->Iterations(2)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
