// GPU activity: the analyses on synthetic records (no GPU needed), and the CUPTI tracer through
// a fake libcupti that hands it the toolkit's own record structs.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "collect/gpu_trace.hpp"
#include "fake_gpus.hpp"
#include "mainboard/error.hpp"
#include "mainboard/json.hpp"
#include "mainboard/profile_report.hpp"
#include "mainboard/profiler.hpp"
#include "mainboard/runner.hpp"
#include "symbols/demangle.hpp"
#include "test_util.hpp"

using namespace mainboard;

namespace {

constexpr std::int64_t ms(double v) {
  return static_cast<std::int64_t>(v * 1'000'000);
}

/// A profile written by hand: spans on one thread, GPU records on streams.
struct Builder {
  Profile p;
  Builder() {
    p.pid = 100;
    p.start_ns = 0;
    p.end_ns = ms(100);
    p.threads = {{0, 100, "main"}};
  }
  std::uint32_t path(const std::string& s) {
    auto it = std::find(p.paths.begin(), p.paths.end(), s);
    if (it != p.paths.end()) return static_cast<std::uint32_t>(it - p.paths.begin());
    p.paths.push_back(s);
    SpanStat st;
    st.path = s;
    st.name = s.substr(s.rfind('/') + 1);
    p.span_stats.push_back(st);
    return static_cast<std::uint32_t>(p.paths.size() - 1);
  }
  Builder& span(const std::string& s, double start, double end) {
    auto i = path(s);
    p.spans.push_back({i, 0, ms(start), ms(end)});
    auto& st = p.span_stats[i];
    ++st.calls;
    st.total_ns += ms(end) - ms(start);
    return *this;
  }
  std::uint32_t name(const std::string& n) {
    auto it = std::find(p.activity_names.begin(), p.activity_names.end(), n);
    if (it != p.activity_names.end())
      return static_cast<std::uint32_t>(it - p.activity_names.begin());
    p.activity_names.push_back(n);
    return static_cast<std::uint32_t>(p.activity_names.size() - 1);
  }
  Builder& kernel(const std::string& n, double start, double end, std::uint32_t grid = 132,
                  std::uint32_t block = 256, std::uint32_t stream = 7) {
    GpuActivity a;
    a.kind = GpuActivity::Kind::kernel;
    a.name = name(n);
    a.start_ns = ms(start);
    a.end_ns = ms(end);
    a.stream = stream;
    a.grid = {grid, 1, 1};
    a.block = {block, 1, 1};
    a.registers_per_thread = 32;
    a.dynamic_shared_bytes = 1024;
    p.activities.push_back(a);
    return *this;
  }
  Builder& copy(double start, double end, std::uint64_t bytes,
                GpuActivity::Kind kind = GpuActivity::Kind::memcpy) {
    GpuActivity a;
    a.kind = kind;
    a.name = name(kind == GpuActivity::Kind::memcpy ? "memcpy HtoD (pinned → device)"
                                                    : "memset (device)");
    a.start_ns = ms(start);
    a.end_ns = ms(end);
    a.stream = 8;
    a.bytes = bytes;
    p.activities.push_back(a);
    return *this;
  }
  Profile done() {
    std::sort(p.spans.begin(), p.spans.end(),
              [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
    std::stable_sort(p.activities.begin(), p.activities.end(),
                     [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
    return p;
  }
};

const RegionGpuTime* region(const TraceReport& r, const std::string& path) {
  for (const auto& g : r.regions)
    if (g.path == path) return &g;
  return nullptr;
}

}  // namespace

TEST(GpuTrace, CopyBoundMixSplitsComputeAndCopies) {
  auto p = Builder()
               .span("step", 0, 50)
               .kernel("gemm", 1, 3)
               .copy(10, 18, 8'000'000'000ull)  // 8 GB in 8 ms: 1000 GB/s
               .copy(20, 22, 1'000'000, GpuActivity::Kind::memset)
               .done();
  auto r = p.trace_report();
  EXPECT_EQ(r.kernel_ns, ms(2));
  EXPECT_EQ(r.copy_ns, ms(10));
  EXPECT_EQ(r.kernel_count, 1u);
  EXPECT_EQ(r.copy_count, 2u);
  EXPECT_EQ(r.copy_bytes, 8'001'000'000ull);
  ASSERT_EQ(r.regions.size(), 1u);
  EXPECT_EQ(r.regions[0].path, "step");
  EXPECT_DOUBLE_EQ(r.regions[0].share_pct, 100.0);

  auto v = ProfileReport::from_profile(p, 1, 4800.0);
  EXPECT_EQ(v.bound, Bound::memory);
  EXPECT_NE(v.bound_reason.find("copies"), std::string::npos);
  EXPECT_EQ(v.total_memcpy_ns, ms(10));
  EXPECT_NEAR(v.achieved_bandwidth_gbps, 8'001'000'000.0 / ms(10), 1e-9);
  EXPECT_NE(v.report().find("MEMORY-bound"), std::string::npos);
  EXPECT_NE(v.report().find("of the 4800 GB/s peak"), std::string::npos);
}

TEST(GpuTrace, ComputeBoundMixNamesTheDominantKernel) {
  auto p = Builder()
               .span("step", 0, 60)
               .kernel("fma_loop(float*, int)", 1, 41, 264, 1024)
               .kernel("gemm", 41, 51)
               .copy(52, 53, 1'000'000)
               .done();
  auto v = ProfileReport::from_profile(p, 4, 0);
  EXPECT_EQ(v.bound, Bound::compute);
  EXPECT_EQ(v.dominant_kernel, "fma_loop(float*, int)");
  EXPECT_DOUBLE_EQ(v.dominant_share_pct, 80.0);
  ASSERT_EQ(v.kernels.size(), 2u);
  EXPECT_EQ(v.kernels[0].shape.grid[0], 264u);
  EXPECT_DOUBLE_EQ(v.kernels[0].occupancy_pct, 100.0);  // 1024 threads per block
  EXPECT_DOUBLE_EQ(v.kernels[1].occupancy_pct, 25.0);   // 256
  EXPECT_EQ(v.kernels[0].shape.shared_bytes, 1024u);
  EXPECT_EQ(v.iterations, 4u);
  EXPECT_EQ(v.report().find("of the"), std::string::npos);  // no peak: no score
}

TEST(GpuTrace, VerdictRules) {
  std::string why;
  EXPECT_EQ(classify(0, 0, std::nullopt, std::nullopt, &why), Bound::unknown);
  EXPECT_NE(why.find("no kernels, copies or utilization"), std::string::npos) << why;
  EXPECT_EQ(classify(ms(1), ms(2), std::nullopt, std::nullopt), Bound::memory);
  EXPECT_EQ(classify(ms(5), ms(2), std::nullopt, std::nullopt), Bound::compute);
  // The memory controller the busier unit (the reference's rule).
  EXPECT_EQ(classify(ms(5), 0, 80.0, 95.0, &why), Bound::memory);
  EXPECT_NE(why.find("memory controller was the busier unit: busy 95 %"), std::string::npos) << why;
  // The SMs busier, even with a busy memory controller: compute, as the reference words it.
  EXPECT_EQ(classify(ms(5), 0, 100.0, 85.0, &why), Bound::compute);
  EXPECT_NE(why.find("SMs were the busier unit: busy 100 %"), std::string::npos) << why;
  EXPECT_EQ(classify(ms(5), 0, 100.0, 3.0, &why), Bound::compute);  // an FMA loop
  EXPECT_EQ(classify(0, 0, 50.0, 10.0), Bound::compute);  // a utilization signal, no trace
  EXPECT_EQ(classify(0, 0, 10.0, 50.0), Bound::memory);
  // Copies dominate the GPU time: memory, whatever the utilization says.
  EXPECT_EQ(classify(ms(1), ms(3), 100.0, 3.0), Bound::memory);
}

TEST(GpuTrace, UtilizationWhileBusyDecidesBetweenKernels) {
  auto p = Builder().span("step", 0, 10).kernel("copy_kernel", 1, 9).done();
  DeviceSample idle, busy;
  idle.t_ns = ms(0.5);
  idle.utilization_pct = 0;
  idle.memory_utilization_pct = 0;
  idle.device_memory_used_bytes = 2ull << 30;
  busy.t_ns = ms(5);
  busy.utilization_pct = 90;
  busy.memory_utilization_pct = 98;
  busy.device_memory_used_bytes = 6ull << 30;
  p.device_samples = {idle, busy};
  auto v = ProfileReport::from_profile(p, 1, 0);
  EXPECT_EQ(v.bound, Bound::memory);
  EXPECT_EQ(v.sm_utilization_pct, 90.0);  // the idle reading does not dilute the mean
  EXPECT_EQ(v.memory_utilization_pct, 98.0);
  EXPECT_EQ(v.peak_memory_bytes, 6ull << 30);
  EXPECT_EQ(v.avg_memory_bytes, 4ull << 30);
}

TEST(GpuTrace, ActivityGoesToTheInnermostSpanHoldingItsStart) {
  auto p = Builder()
               .span("step", 0, 50)
               .span("step/forward", 5, 20)
               .span("step/backward", 25, 45)
               .span("idle_region", 60, 70)  // a span with no GPU work
               .kernel("fwd", 6, 9)
               .kernel("fwd_tail", 19, 30)  // starts in forward, ends after it: still forward
               .kernel("bwd", 26, 28)
               .kernel("between", 21, 22)  // inside step only
               .kernel("late", 80, 82)     // outside every span
               .done();
  auto r = p.trace_report();
  ASSERT_NE(region(r, "step/forward"), nullptr);
  EXPECT_EQ(region(r, "step/forward")->kernel_ns, ms(3) + ms(11));
  EXPECT_EQ(region(r, "step/forward")->activities, 2u);
  EXPECT_EQ(region(r, "step/backward")->kernel_ns, ms(2));
  EXPECT_EQ(region(r, "step")->kernel_ns, ms(1));
  ASSERT_NE(region(r, "(outside spans)"), nullptr);
  EXPECT_EQ(region(r, "(outside spans)")->kernel_ns, ms(2));
  EXPECT_EQ(region(r, "idle_region"), nullptr);
  EXPECT_EQ(r.regions.front().path, "step/forward");  // most GPU time first
  double shares = 0;
  for (const auto& g : r.regions)
    shares += g.share_pct;
  EXPECT_NEAR(shares, 100.0, 1e-9);
}

TEST(GpuTrace, ASpanEndingAsAKernelStartsDoesNotHoldIt) {
  auto p = Builder().span("a", 0, 10).span("b", 10, 20).kernel("k", 10, 11).done();
  auto r = p.trace_report();
  ASSERT_EQ(r.regions.size(), 1u);
  EXPECT_EQ(r.regions[0].path, "b");
}

TEST(GpuTrace, OverlappingStreamsCountOnceInTheTimeline) {
  auto p = Builder()
               .kernel("a", 10, 30, 132, 256, 1)
               .kernel("b", 20, 40, 132, 256, 2)  // overlaps a on another stream
               .kernel("c", 70, 80, 132, 256, 1)
               .done();
  auto t = p.timeline();
  EXPECT_EQ(t.source, "gpu activity");
  EXPECT_EQ(t.busy_ns, ms(40));  // [10,40) and [70,80)
  EXPECT_EQ(t.idle_ns, ms(60));
  ASSERT_FALSE(t.gaps.empty());
  EXPECT_EQ(t.gaps[0].start_ns, ms(40));  // the longest gap: 40 → 70
  EXPECT_EQ(t.gaps[0].end_ns, ms(70));
  EXPECT_EQ(p.trace_report().kernel_ns, ms(50));  // summed durations count both
}

TEST(GpuTrace, SynchronizationDoesNotMakeTheDeviceBusy) {
  auto b = Builder();
  b.kernel("k", 10, 20);
  GpuActivity sync;
  sync.kind = GpuActivity::Kind::synchronization;
  sync.name = b.name("sync: stream");
  sync.start_ns = ms(20);
  sync.end_ns = ms(90);
  b.p.activities.push_back(sync);
  auto p = b.done();
  EXPECT_EQ(p.timeline().busy_ns, ms(10));
  EXPECT_EQ(p.trace_report().copy_count, 0u);
}

TEST(GpuTrace, EfficiencyExposesAnUnderfilledLastWave) {
  // 133 blocks on 132 SMs: two waves, the second with one block.
  auto p =
      Builder().kernel("bad_launch", 0, 2, 133, 256).kernel("good_launch", 3, 4, 264, 256).done();
  EfficiencyOptions o;
  o.sm_count = 132;
  o.peak_bandwidth_gbs = 4800;
  o.bytes_moved = 4'000'000'000ull;  // per launch: 4 GB in 2 ms = 2000 GB/s
  auto e = p.efficiency(o);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].name, "bad_launch");
  EXPECT_EQ(e[0].shape.blocks(), 133u);
  EXPECT_NEAR(e[0].waves, 133.0 / 132.0, 1e-12);
  EXPECT_NEAR(e[0].last_wave_fill_pct, 100.0 / 132.0, 1e-9);
  ASSERT_TRUE(e[0].achieved_gbs);
  EXPECT_NEAR(*e[0].achieved_gbs, 2000.0, 1e-9);
  EXPECT_NEAR(*e[0].bandwidth_pct, 2000.0 / 48.0, 1e-9);
  EXPECT_DOUBLE_EQ(e[1].waves, 2.0);
  EXPECT_DOUBLE_EQ(e[1].last_wave_fill_pct, 100.0);  // two full waves
  EXPECT_EQ(e[1].shape.shared_bytes, 1024u);
  o.blocks_per_sm = 2;  // two resident blocks per SM: 264 blocks fill one wave exactly
  EXPECT_DOUBLE_EQ(p.efficiency(o)[1].waves, 1.0);
  o.top = 1;
  EXPECT_EQ(p.efficiency(o).size(), 1u);
  EXPECT_DOUBLE_EQ(p.efficiency({}).front().waves, 0.0);  // no SM count: no wave figures
  // Without one given, the SM count of the GPU the kernels ran on, from the machine snapshot.
  MachineSnapshot m;
  GpuSnapshot other, used;
  other.info.index = 1;
  other.info.sm_count = 108;
  used.info.index = 0;  // the Builder's kernels ran on device 0
  used.info.sm_count = 132;
  m.gpus = {other, used};
  p.machine = m;
  EXPECT_NEAR(p.efficiency({}).front().waves, 133.0 / 132.0, 1e-12);
}

TEST(GpuTrace, DiffReportsKernelChanges) {
  auto before = Builder().kernel("gemm", 0, 10).kernel("old_kernel", 10, 11).done();
  auto after =
      Builder().kernel("gemm", 0, 4).kernel("gemm", 5, 9).kernel("new_kernel", 10, 13).done();
  auto d = after.diff(before);
  ASSERT_EQ(d.kernels.size(), 3u);
  auto find = [&](const std::string& n) {
    return *std::find_if(d.kernels.begin(), d.kernels.end(),
                         [&](const KernelDiff& k) { return k.name == n; });
  };
  EXPECT_EQ(find("gemm").kind, KernelDiff::Kind::changed);
  EXPECT_EQ(find("gemm").calls, 2u);
  EXPECT_EQ(find("gemm").total_change_ns(), -ms(2));
  EXPECT_DOUBLE_EQ(*find("gemm").total_change_pct(), -20.0);
  EXPECT_EQ(find("new_kernel").kind, KernelDiff::Kind::added);
  EXPECT_EQ(find("old_kernel").kind, KernelDiff::Kind::removed);
  EXPECT_EQ(d.kernels.front().name, "new_kernel");  // largest absolute change: +3 ms
  auto text = d.report();
  EXPECT_NE(text.find("kernel"), std::string::npos);
  EXPECT_NE(text.find("gone"), std::string::npos);
  nlohmann::json j = d;
  EXPECT_EQ(j.get<ProfileDiff>(), d);
}

TEST(GpuTrace, CounterBottlenecksSortByDurationWithALimiter) {
  Profile p;
  EXPECT_TRUE(p.counter_bottlenecks().empty());  // no pass: no section
  EXPECT_EQ(p.report().find("Counter bottlenecks"), std::string::npos);
  auto counters = [](std::string name, std::uint64_t calls, std::int64_t total_ns,
                     std::optional<double> sm, std::optional<double> dram,
                     std::optional<double> occupancy) {
    KernelCounters c;
    c.name = std::move(name);
    c.calls = calls;
    c.total_ns = total_ns;
    c.sm_throughput_pct = sm;
    c.dram_throughput_pct = dram;
    c.achieved_occupancy_pct = occupancy;
    return c;
  };
  p.counters = {counters("small", 1, ms(1), 20.0, 90.0, std::nullopt),
                counters("big", 4, ms(9), 85.0, 30.0, 50.0),
                counters("stalled", 2, ms(5), 20.0, 15.0, std::nullopt)};
  auto c = p.counter_bottlenecks(2);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].name, "big");
  EXPECT_EQ(c[0].limiter(), "compute");
  EXPECT_EQ(c[1].limiter(), "latency");
  EXPECT_EQ(p.counters[0].limiter(), "memory");
  EXPECT_EQ(KernelCounters{}.limiter(), "");
  EXPECT_NE(p.report().find("Counter bottlenecks"), std::string::npos);
}

TEST(GpuTrace, ReportHasAGpuSectionOnlyWithActivity) {
  auto empty = Builder().span("step", 0, 10).done();
  EXPECT_EQ(empty.report().find("GPU activity"), std::string::npos);
  auto p = Builder().span("step", 0, 10).kernel("k", 1, 2).kernel("k", 50, 51).done();
  auto text = p.report();
  EXPECT_NE(text.find("GPU activity (2 records)"), std::string::npos) << text;
  EXPECT_NE(text.find("(outside spans)"), std::string::npos) << text;
  EXPECT_NE(text.find("Timeline (gpu activity)"), std::string::npos) << text;
}

TEST(GpuTrace, LongKernelNamesAreClippedInTables) {
  std::string name = "void cutlass::Kernel<cutlass::gemm::kernel::GemmUniversal<" +
                     std::string(300, 'x') + ">>(…)";
  auto p = Builder().kernel(name, 1, 2).done();
  auto text = p.trace_report().report();
  EXPECT_EQ(text.find(name), std::string::npos);
  EXPECT_NE(text.find("void cutlass::Kernel<"), std::string::npos);
  EXPECT_NE(text.find("..."), std::string::npos);
}

TEST(GpuTrace, ProfileWithActivityRoundTripsAndVersionOneStillLoads) {
  auto p = Builder().span("step", 0, 10).kernel("k(int)", 1, 2).copy(3, 4, 4096).done();
  p.dropped_activities = 3;
  KernelCounters counted;
  counted.name = "k(int)";
  counted.calls = 1;
  counted.total_ns = ms(1);
  counted.sm_throughput_pct = 50.0;
  p.counters = {counted};
  TempDir dir;
  auto file = dir.path() / "p.json";
  p.save(file);
  auto back = Profile::load(file);
  EXPECT_EQ(back, p);
  EXPECT_EQ(back.schema_version, kProfileSchemaVersion);

  nlohmann::json v1 =
      nlohmann::json::parse(R"({"schema_version": 1, "pid": 1, "start_ns": 0, "end_ns": 5,
      "paths": [], "span_stats": [], "spans": [], "dropped_spans": 0, "threads": [], "device_samples": [],
      "unavailable": [], "machine": null})");
  auto old = Profile::parse(v1.dump());
  EXPECT_TRUE(old.activities.empty());
  EXPECT_EQ(old.schema_version, kProfileSchemaVersion);
}

TEST(GpuTrace, MalformedActivityRecordsAreRefusedWithTheReason) {
  auto p = Builder().kernel("k", 1, 2).done();
  nlohmann::json j = p;
  auto expect_error = [](const nlohmann::json& doc, const std::string& what) {
    try {
      Profile::parse(doc.dump(), "t.json");
      FAIL() << "accepted: " << doc.dump().substr(0, 200);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  auto bad = j;
  bad["activities"][0][1] = 9;  // names an activity name that does not exist
  expect_error(bad, "activities[0] names 9 of 1");
  bad = j;
  bad["activities"][0].erase(16);  // truncated record
  expect_error(bad, "array of 17");
  bad = j;
  bad["activities"][0][0] = "teleport";
  expect_error(bad, "unknown value 'teleport'");
  bad = j;
  bad["activities"][0][3] = 0;  // ends before it starts
  expect_error(bad, "ends before it starts");
  bad = j;
  bad["activities"][0][7] = -1;  // a negative grid
  expect_error(bad, "32-bit count");
  bad = j;
  bad["activities"] = "lots";
  expect_error(bad, "activities");
}

TEST(GpuTrace, PerfettoExportHasGpuTracks) {
  auto p = Builder()
               .span("step", 0, 10)
               .kernel("gemm<float>", 1, 2, 132, 256, 7)
               .copy(3, 4, 4096)
               .done();
  auto trace = nlohmann::json::parse(p.perfetto_json());
  int kernels = 0, copies = 0, gpu_names = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "gpu_kernel") {
      ++kernels;
      EXPECT_EQ(e["name"], "gemm<float>");
      EXPECT_EQ(e["tid"], 7);
      EXPECT_EQ(e["args"]["grid"], "132x1x1");
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1000.0);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 1000.0);
    }
    if (e["ph"] == "X" && e["cat"] == "gpu_memcpy") {
      ++copies;
      EXPECT_EQ(e["args"]["bytes"], 4096);
    }
    if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "GPU 0") ++gpu_names;
  }
  EXPECT_EQ(kernels, 1);
  EXPECT_EQ(copies, 1);
  EXPECT_EQ(gpu_names, 1);
}

TEST(GpuTrace, DemanglesKernelNames) {
  EXPECT_EQ(symbols::demangle("_Z10copyKernelPfPKfm"),
            "copyKernel(float*, float const*, unsigned long)");
  EXPECT_EQ(symbols::demangle("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(symbols::demangle("_Zgarbage"), "_Zgarbage");  // not a valid mangling: kept
  EXPECT_EQ(symbols::demangle(""), "(unnamed)");
  EXPECT_EQ(symbols::demangle(nullptr), "(unnamed)");
}

TEST(GpuTrace, ActivityNamesJoin) {
  EXPECT_EQ(to_string(Activity::defaults), "kernel|memcpy|memset");
  EXPECT_EQ(to_string(Activity::counters), "counters");
  EXPECT_EQ(to_string(Activity{}), "");
}

// --- the tracer -------------------------------------------------------------------------------

namespace {

/// Sets MAINBOARD_CUPTI_LIBRARY (and fake knobs) for one test.
struct CuptiEnv {
  explicit CuptiEnv(const std::string& library) {
    ::setenv("MAINBOARD_CUPTI_LIBRARY", library.c_str(), 1);
  }
  ~CuptiEnv() {
    ::unsetenv("MAINBOARD_CUPTI_LIBRARY");
    ::unsetenv("FAKE_CUPTI_REFUSE");
    ::unsetenv("FAKE_CUPTI_DROPPED");
  }
};

Collection gpu_collection() {
  Collection c;
  c.features = Feature::spans | Feature::gpu_activity;
  return c;
}

bool mentions(const std::vector<std::string>& lines, const std::string& what) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(what) != std::string::npos; });
}

}  // namespace

TEST(GpuTracer, MissingCuptiIsUnavailableWithTheReason) {
  CuptiEnv env("/nonexistent/libcupti.so.13");
  Profiler p(gpu_collection());
  { MAINBOARD_SPAN("step"); }
  const auto& r = p.result();
  EXPECT_EQ(r.span_stats.size(), 1u);  // the session ran
  EXPECT_TRUE(r.activities.empty());
#ifdef MAINBOARD_HAVE_CUPTI
  EXPECT_TRUE(mentions(r.unavailable, "gpu_activity: CUPTI could not be loaded"))
      << testing::PrintToString(r.unavailable);
  EXPECT_TRUE(mentions(r.unavailable, "/nonexistent/libcupti.so.13"));
#else
  EXPECT_TRUE(mentions(r.unavailable, "gpu_activity: this build has no CUPTI support"));
#endif
  EXPECT_EQ(p.traced_activities(), Activity{});
}

TEST(GpuTracer, StrictSessionThrowsWhenCuptiIsMissing) {
  CuptiEnv env("/nonexistent/libcupti.so.13");
  auto c = gpu_collection();
  c.strict = true;
  try {
    Profiler p(c);
    FAIL() << "a strict session started without CUPTI";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gpu_activity"), std::string::npos) << e.what();
  }
  Profiler after(Collection{.features = Feature::spans});  // nothing left active
  EXPECT_TRUE(after.active());
}

#ifdef MAINBOARD_FAKE_CUPTI

namespace {

/// The fake's hooks, from the same library the tracer loaded.
struct FakeCupti {
  void* handle = ::dlopen(MAINBOARD_FAKE_CUPTI, RTLD_NOW);
  std::uint64_t now() const {
    return reinterpret_cast<std::uint64_t (*)()>(::dlsym(handle, "fake_cupti_now"))();
  }
  void kernel(const char* name, std::uint64_t start, std::uint64_t end, std::uint32_t grid = 264,
              std::uint32_t block = 256, std::uint16_t regs = 40, std::int32_t shared = 0,
              std::uint32_t stream = 7) const {
    using Fn = void(const char*, std::uint64_t, std::uint64_t, std::uint32_t, std::uint32_t,
                    std::uint16_t, std::int32_t, std::uint32_t);
    reinterpret_cast<Fn*>(::dlsym(handle, "fake_cupti_kernel"))(name, start, end, grid, block, regs,
                                                                shared, stream);
  }
  void memcpy(std::uint8_t kind, std::uint8_t src, std::uint8_t dst, std::uint64_t bytes,
              std::uint64_t start, std::uint64_t end) const {
    using Fn =
        void(std::uint8_t, std::uint8_t, std::uint8_t, std::uint64_t, std::uint64_t, std::uint64_t);
    reinterpret_cast<Fn*>(::dlsym(handle, "fake_cupti_memcpy"))(kind, src, dst, bytes, start, end);
  }
  void memset(std::uint64_t bytes, std::uint64_t start, std::uint64_t end) const {
    reinterpret_cast<void (*)(std::uint64_t, std::uint64_t, std::uint64_t)>(
        ::dlsym(handle, "fake_cupti_memset"))(bytes, start, end);
  }
  void sync(std::uint64_t start, std::uint64_t end) const {
    reinterpret_cast<void (*)(std::uint64_t, std::uint64_t)>(::dlsym(handle, "fake_cupti_sync"))(
        start, end);
  }
};

}  // namespace

TEST(GpuTracer, KernelsLineUpWithSpansOnTheProfileClock) {
  CuptiEnv env(MAINBOARD_FAKE_CUPTI);
  FakeCupti fake;
  ASSERT_NE(fake.handle, nullptr) << ::dlerror();
  auto c = gpu_collection();
  c.activities = Activity::defaults | Activity::synchronization;
  Profiler p(c);
  {
    MAINBOARD_SPAN("step");
    {
      MAINBOARD_SPAN("forward");
      auto start = fake.now();
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
      fake.kernel("_Z10copyKernelPfPKfm", start + 100'000, fake.now() - 100'000);
    }
    auto start = fake.now();
    fake.memcpy(1, 1, 3, 1 << 20, start, start + 200'000);  // HtoD, pageable → device; 0.2 ms
    auto t = fake.now();
    fake.memset(4096, t, t + 1000);
    fake.sync(t + 1000, t + 1500);
  }
  EXPECT_EQ(p.traced_activities(), Activity::defaults | Activity::synchronization);
  const auto& r = p.result();
  ASSERT_EQ(r.activities.size(), 4u) << r.report();
  EXPECT_TRUE(r.unavailable.empty()) << testing::PrintToString(r.unavailable);
  const auto& k = r.activities[0];
  EXPECT_EQ(k.kind, GpuActivity::Kind::kernel);
  EXPECT_EQ(r.activity_names[k.name], "copyKernel(float*, float const*, unsigned long)");
  EXPECT_EQ(k.grid[0], 264u);
  EXPECT_EQ(k.registers_per_thread, 40u);
  // The fake's clock runs an hour ahead: converted, the kernel sits inside its span.
  const SpanEvent* forward = nullptr;
  for (const auto& e : r.spans)
    if (r.paths[e.path] == "step/forward") forward = &e;
  ASSERT_NE(forward, nullptr);
  EXPECT_GE(k.start_ns, forward->start_ns);
  EXPECT_LE(k.end_ns, forward->end_ns);
  EXPECT_GE(k.duration_ns(), 2'000'000);
  auto names = r.activity_names;
  EXPECT_NE(std::find(names.begin(), names.end(), "memcpy HtoD (pageable → device)"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "memset (device)"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "sync: stream"), names.end());
  auto tr = p.trace_report();
  ASSERT_FALSE(tr.regions.empty());
  EXPECT_EQ(tr.regions.front().path, "step/forward");
  EXPECT_EQ(tr.copy_bytes, (1u << 20) + 4096u);
  EXPECT_EQ(r.timeline().source, "gpu activity");
}

// result() while the session runs: the records delivered so far, and tracing goes on.
TEST(GpuTracer, ResultSoFarAndTracingGoesOn) {
  CuptiEnv env(MAINBOARD_FAKE_CUPTI);
  FakeCupti fake;
  Profiler p(gpu_collection());
  auto t = fake.now();
  fake.kernel("first", t, t + 1000);
  auto so_far = p.result();
  EXPECT_TRUE(p.active());
  ASSERT_EQ(so_far.activities.size(), 1u);
  EXPECT_EQ(so_far.activity_names[so_far.activities[0].name], "first");
  fake.kernel("second", t + 2000, t + 3000);
  p.stop();
  auto last = p.result();
  ASSERT_EQ(last.activities.size(), 2u) << last.report();
  EXPECT_EQ(last.activity_names[last.activities[1].name], "second");
  // Both on the profile's clock (each conversion has its own end anchor: allow its jitter).
  EXPECT_NEAR(static_cast<double>(last.activities[0].start_ns),
              static_cast<double>(so_far.activities[0].start_ns), 100'000);
}

TEST(GpuTracer, RefusedKindsAreListedAndTheRestTraced) {
  CuptiEnv env(MAINBOARD_FAKE_CUPTI);
  ::setenv("FAKE_CUPTI_REFUSE", "2:35", 1);  // memset: insufficient privileges
  FakeCupti fake;
  auto c = gpu_collection();
  c.activities = Activity::defaults | Activity::counters;
  Profiler p(c);
  auto t = fake.now();
  fake.kernel("k", t, t + 10);
  fake.memset(64, t, t + 10);  // not traced: never delivered
  EXPECT_EQ(p.traced_activities(), Activity::kernel | Activity::memcpy);
  const auto& r = p.result();
  EXPECT_TRUE(mentions(r.unavailable, "gpu_activity: memset: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"))
      << testing::PrintToString(r.unavailable);
  EXPECT_TRUE(mentions(r.unavailable, "NVreg_RestrictProfilingToAdminUsers=0"));
  EXPECT_TRUE(mentions(r.unavailable, "counters: the hardware-counter pass"));
  ASSERT_EQ(r.activities.size(), 1u);
  auto v = ProfileReport::from_profile(r, 1, 0, p.traced_activities(), c.activities);
  EXPECT_TRUE(mentions(v.unavailable, "memset"));
}

TEST(GpuTracer, EveryKindRefusedMeansNoTrace) {
  CuptiEnv env(MAINBOARD_FAKE_CUPTI);
  ::setenv("FAKE_CUPTI_REFUSE", "10:39,1:39,2:39", 1);
  Profiler p(gpu_collection());
  const auto& r = p.result();
  EXPECT_TRUE(mentions(r.unavailable, "another profiler")) << testing::PrintToString(r.unavailable);
  EXPECT_TRUE(mentions(r.unavailable, "no activity kind could be traced"));
  EXPECT_EQ(p.traced_activities(), Activity{});
}

TEST(GpuTracer, LostAndIncompleteRecordsAreCounted) {
  CuptiEnv env(MAINBOARD_FAKE_CUPTI);
  ::setenv("FAKE_CUPTI_DROPPED", "5", 1);
  FakeCupti fake;
  auto c = gpu_collection();
  c.max_activities = 2;
  Profiler p(c);
  auto t = fake.now();
  for (int i = 0; i < 4; ++i)
    fake.kernel("k", t + i * 100, t + i * 100 + 10);
  fake.kernel("still_running", t + 500, 0);  // a forced flush cut it short: no end
  const auto& r = p.result();
  EXPECT_EQ(r.activities.size(), 2u);
  EXPECT_EQ(r.dropped_activities, 5u + 2u + 1u);  // CUPTI's, past max_activities, incomplete
  EXPECT_NE(r.report().find("8 lost"), std::string::npos) << r.report();
}

TEST(GpuTracer, ProfileFunctionGivesAVerdict) {
  CuptiEnv env(MAINBOARD_FAKE_CUPTI);
  FakeCupti fake;
  // Utilization 97 %, memory controller per the scenario; this process holds 3 GiB on GPU 0.
  FakeGpus gpus("h100x8", {.caller = "GPU-6b2f3c1e-0000-4a0b-9c3d-000000001000=3221225472"});
  Machine m(gpus.options());
  ProfileOptions o;
  o.iters = 3;
  o.warmup = 1;
  o.machine = &m;
  int runs = 0, syncs = 0;
  o.sync = [&] { ++syncs; };
  Profile evidence;
  auto r = profile(
      [&] {
        ++runs;
        auto start = fake.now();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        auto end = fake.now();
        fake.kernel("_Z8fma_loopPfi", start, end, 133, 1024);
        fake.memcpy(2, 3, 2, 1 << 20, end, end + 100'000);  // DtoH
      },
      o, &evidence);
  EXPECT_EQ(runs, 4);
  EXPECT_EQ(syncs, 4);
  EXPECT_EQ(r.iterations, 3u);
  EXPECT_EQ(r.dominant_kernel, "fma_loop(float*, int)");
  EXPECT_DOUBLE_EQ(r.dominant_share_pct, 100.0);
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(r.kernels[0].calls, 3u);  // the warm-up run is not traced
  EXPECT_EQ(r.kernels[0].shape.grid[0], 133u);
  EXPECT_DOUBLE_EQ(r.kernels[0].occupancy_pct, 100.0);
  EXPECT_EQ(r.memcpy_bytes, 3u << 20);
  EXPECT_GT(r.peak_bandwidth_gbps, 3000.0);    // H100 SXM from the scenario's clocks
  EXPECT_EQ(r.peak_memory_bytes, 3ull << 30);  // its own memory, not the whole GPU's
  EXPECT_EQ(r.memory_scope, "process");
  EXPECT_NE(r.report().find("device memory (this process): peak 3.00 GiB"), std::string::npos)
      << r.report();
  EXPECT_NE(r.bound, Bound::unknown);
  EXPECT_FALSE(r.bound_reason.empty());
  EXPECT_EQ(evidence.span_stats.size(), 1u);
  EXPECT_EQ(evidence.span_stats[0].path, "iteration");
  EXPECT_EQ(evidence.span_stats[0].calls, 3u);
  // Each timed run is timed, its 2 ms sleep and its sync within; the warm-up run is not.
  EXPECT_EQ(r.warmup, 1u);
  ASSERT_EQ(r.iteration_wall_ns.size(), 3u);
  for (auto ns : r.iteration_wall_ns)
    EXPECT_GE(ns, 2'000'000);
  EXPECT_EQ(r.wall.count, 3u);
  EXPECT_FALSE(r.device.empty());  // the scenario's GPU 0, named in the verdict
  EXPECT_NE(r.report().find("over 3 iterations on " + r.device), std::string::npos) << r.report();
  EXPECT_EQ(r.report().find("no GPU on this host"), std::string::npos) << r.report();
  nlohmann::json j = r;
  EXPECT_EQ(j.get<ProfileReport>(), r);
  EXPECT_EQ(j["bound"], to_string(r.bound));
}

#endif  // MAINBOARD_FAKE_CUPTI

#ifdef MAINBOARD_INJECT

TEST(GpuTracer, InjectionLibraryWritesTheTraceOfALaunchedProgramAtExit) {
  MAINBOARD_NATIVE_ONLY("to start the project's own arm64 programs");
  TempDir dir;
  auto out = dir.path() / "trace.json";
  Command c;
  c.argv = {MAINBOARD_INJECT_TARGET, MAINBOARD_INJECT, MAINBOARD_FAKE_CUPTI};
  c.environment = {{"MAINBOARD_CUPTI_LIBRARY", std::string(MAINBOARD_FAKE_CUPTI)},
                   {"MAINBOARD_INJECT_OUTPUT", out.string()},
                   {"MAINBOARD_INJECT_ACTIVITIES", std::string("kernel|memcpy")}};
  c.timeout = std::chrono::seconds(30);
  auto r = LocalRunner("/usr/bin:/bin").run(c);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "target done\n");
  auto p = Profile::load(out);
  ASSERT_EQ(p.activities.size(), 2u) << p.report();
  EXPECT_EQ(p.activity_names[p.activities[0].name], "stencil(float const*, float*, int)");
  EXPECT_EQ(p.activities[0].stream, 13u);
  EXPECT_EQ(p.activities[0].dynamic_shared_bytes, 4096u);
  EXPECT_GT(p.pid, 0);
  // On the monotonic clock, inside the program's lifetime.
  EXPECT_GE(p.activities[0].start_ns, p.start_ns);
  EXPECT_LE(p.activities[1].end_ns, p.end_ns);
  EXPECT_TRUE(p.unavailable.empty()) << testing::PrintToString(p.unavailable);
}

TEST(GpuTracer, InjectionWithoutAnOutputDoesNothing) {
  MAINBOARD_NATIVE_ONLY("to start the project's own arm64 programs");
  Command c;
  c.argv = {MAINBOARD_INJECT_TARGET, MAINBOARD_INJECT, MAINBOARD_FAKE_CUPTI};
  c.environment = {{"MAINBOARD_CUPTI_LIBRARY", std::string(MAINBOARD_FAKE_CUPTI)},
                   {"MAINBOARD_INJECT_OUTPUT", std::nullopt}};
  auto r = LocalRunner("/usr/bin:/bin").run(c);
  EXPECT_EQ(r.exit_code, 4);  // InitializeInjection declined: nothing to write to
}

#endif  // MAINBOARD_INJECT

#ifdef MAINBOARD_FAKE_NVTX_TOOL

TEST(NvtxBridge, SpansReachAnAttachedNvtxTool) {
  // What Nsight Systems does: name the tool in the environment before the first NVTX call.
  ::setenv("NVTX_INJECTION64_PATH", MAINBOARD_FAKE_NVTX_TOOL, 1);
  {
    Profiler p(Collection{.features = Feature::spans});
    {
      MAINBOARD_SPAN("outer");
      { MAINBOARD_SPAN("inner"); }
    }
    p.stop();
    { MAINBOARD_SPAN("after_the_session"); }  // dormant: no NVTX range either
  }
  {
    auto c = Collection{.features = Feature::spans};
    c.nvtx = NvtxBridge::off;
    Profiler off(c);
    { MAINBOARD_SPAN("bridge_off"); }
  }
  ::unsetenv("NVTX_INJECTION64_PATH");
  void* tool = ::dlopen(MAINBOARD_FAKE_NVTX_TOOL, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(tool, nullptr) << "the NVTX tool was never loaded";
  auto* log = reinterpret_cast<const char* (*)()>(::dlsym(tool, "fake_nvtx_log"));
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(std::string(log()), "push outer\npush inner\npop\npop\n");
}

#endif  // MAINBOARD_FAKE_NVTX_TOOL
