// The profiling session: spans on any thread, exact statistics under a span budget, device
// sampling through the fake GPU, and the rules of one session per process.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "fake_gpus.hpp"
#include "mainboard/error.hpp"
#include "mainboard/json.hpp"
#include "mainboard/profile_report.hpp"
#include "mainboard/profiler.hpp"
#include "spans/session.hpp"
#include "spans/thread_state.hpp"

using namespace mainboard;

namespace {

/// A machine without GPUs, so sessions need no driver.
Machine& quiet_machine() {
  static Machine m([] {
    Machine::Options o;
    o.sysroot = fixture_host("numa-2socket");
    return o;
  }());
  return m;
}

Collection spans_only() {
  Collection c;
  c.features = Feature::spans;
  c.machine = &quiet_machine();
  return c;
}

const SpanStat* stat(const Profile& p, const std::string& path) {
  for (const auto& s : p.span_stats)
    if (s.path == path) return &s;
  return nullptr;
}

void busy_for(std::chrono::microseconds d) {
  auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

}  // namespace

TEST(Spans, DormantSpansRecordNothing) {
  { MAINBOARD_SPAN("before"); }
  Profiler p(spans_only());
  { MAINBOARD_SPAN("during"); }
  p.stop();
  { MAINBOARD_SPAN("after"); }
  const auto& r = p.result();
  ASSERT_EQ(r.span_stats.size(), 1u);
  EXPECT_EQ(r.span_stats[0].path, "during");
}

TEST(Spans, NestedSpansBuildPathsWithSelfTime) {
  Profiler p(spans_only());
  for (int i = 0; i < 3; ++i) {
    MAINBOARD_SPAN("train");
    {
      MAINBOARD_SPAN("step");
      {
        MAINBOARD_SPAN("forward");
        busy_for(std::chrono::microseconds(300));
      }
      busy_for(std::chrono::microseconds(200));
    }
  }
  int value = spanned("compute", [] { return 41 + 1; });
  EXPECT_EQ(value, 42);
  const auto& r = p.result();
  ASSERT_NE(stat(r, "train/step/forward"), nullptr);
  const auto& forward = *stat(r, "train/step/forward");
  const auto& step = *stat(r, "train/step");
  const auto& train = *stat(r, "train");
  EXPECT_EQ(forward.calls, 3u);
  EXPECT_EQ(forward.name, "forward");
  EXPECT_GE(forward.min_ns, 300'000);
  EXPECT_GE(forward.max_ns, forward.min_ns);
  EXPECT_GE(step.total_ns, forward.total_ns);
  // Self time excludes children: step's own 200 µs per call, the forward's 300 µs not.
  EXPECT_GE(step.self_ns, 3 * 200'000);
  EXPECT_LT(step.self_ns, step.total_ns);
  // Ticks become nanoseconds per path, so the sum may round one nanosecond either way.
  EXPECT_NEAR(static_cast<double>(step.self_ns + forward.total_ns),
              static_cast<double>(step.total_ns), 1.0);
  EXPECT_LE(train.self_ns, train.total_ns - step.total_ns + 1);
  EXPECT_EQ(stat(r, "compute")->calls, 1u);
  EXPECT_EQ(r.spans.size(), 3u * 3 + 1);  // every span stored: far below max_spans
  EXPECT_EQ(r.dropped_spans, 0u);
  // The slowest total first.
  EXPECT_EQ(r.stats().front().path, "train");
  EXPECT_EQ(r.bottlenecks(2).size(), 2u);
}

TEST(Spans, StatisticsStayExactPastTheSpanBudget) {
  auto c = spans_only();
  c.max_spans = 100;
  Profiler p(c);
  for (int i = 0; i < 5000; ++i)
    MAINBOARD_SPAN("tiny");
  const auto& r = p.result();
  EXPECT_EQ(stat(r, "tiny")->calls, 5000u);
  EXPECT_LE(r.spans.size(), 100u);
  EXPECT_EQ(r.spans.size() + r.dropped_spans, 5000u);
  EXPECT_NE(r.report().find("max_spans reached"), std::string::npos);
}

TEST(Spans, ManyThreadsAndThreadsThatExitEarly) {
  Profiler p(spans_only());
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([] {
      for (int i = 0; i < 1000; ++i) {
        MAINBOARD_SPAN("worker");
        MAINBOARD_SPAN("inner");
      }
    });
  for (auto& w : workers)
    w.join();  // all gone before the session ends
  { MAINBOARD_SPAN("main"); }
  const auto& r = p.result();
  EXPECT_EQ(stat(r, "worker")->calls, 4000u);
  EXPECT_EQ(stat(r, "worker/inner")->calls, 4000u);
  EXPECT_EQ(stat(r, "main")->calls, 1u);
  EXPECT_EQ(r.threads.size(), 5u);
  for (const auto& e : r.spans) {
    EXPECT_LT(e.thread, r.threads.size());
    EXPECT_LE(e.start_ns, e.end_ns);
    EXPECT_GE(e.start_ns, r.start_ns);
    EXPECT_LE(e.end_ns, r.end_ns);
  }
}

TEST(Spans, SpansOpenAcrossTheStopAreSafe) {
  auto p = std::make_unique<Profiler>(spans_only());
  {
    MAINBOARD_SPAN("outlives");
    {
      MAINBOARD_SPAN("inner");
      p->stop();  // closes both at the stop time, keeps them and says so
    }
  }  // their scopes end after the session: they unwind and record nothing more
  const auto& r = p->result();
  ASSERT_NE(stat(r, "outlives"), nullptr);
  EXPECT_EQ(stat(r, "outlives")->calls, 1u);
  EXPECT_EQ(stat(r, "outlives/inner")->calls, 1u);
  EXPECT_TRUE(std::any_of(r.unavailable.begin(), r.unavailable.end(), [](const std::string& u) {
    return u.find("2 spans were still open at stop") != std::string::npos &&
           u.find("outlives, outlives/inner") != std::string::npos;
  })) << ::testing::PrintToString(r.unavailable);
  p.reset();
  // A new session on the same thread starts clean.
  Profiler q(spans_only());
  { MAINBOARD_SPAN("fresh"); }
  EXPECT_EQ(stat(q.result(), "fresh")->calls, 1u);
  EXPECT_EQ(q.result().span_stats.size(), 1u);
}

TEST(Spans, ExitWithTheCallersOwnDuration) {
  Profiler p(spans_only());
  auto t = p.enter("measured elsewhere");
  p.exit(t, 7'000'000);  // the caller says it took 7 ms; it closes at once
  p.stop();
  const auto& r = p.result();  // a value: kept while it is read
  const auto* s = stat(r, "measured elsewhere");
  ASSERT_NE(s, nullptr);
  EXPECT_NEAR(static_cast<double>(s->total_ns), 7e6, 7e6 * 0.02);
}

TEST(Spans, AForkedChildStartsWithoutItsParentsSession) {
  Profiler p(spans_only());
  { MAINBOARD_SPAN("before"); }
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The child: its parent's session records nothing here, and one of its own can start.
    int code = 0;
    { MAINBOARD_SPAN("child, parent's session"); }
    try {
      Profiler mine(spans_only());
      { MAINBOARD_SPAN("child"); }
      mine.stop();
      const auto& r = mine.result();
      if (r.span_stats.size() != 1 || r.span_stats[0].path != "child") code = 2;
    } catch (...) {
      code = 3;
    }
    p.stop();  // the copy of the parent's session ends without its threads
    if (!p.result().span_stats.empty()) code = 4;
    ssize_t ignored = ::write(pipe_fds[1], &code, sizeof code);
    (void)ignored;
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  int code = -1;
  ASSERT_EQ(::read(pipe_fds[0], &code, sizeof code), static_cast<ssize_t>(sizeof code));
  ::close(pipe_fds[0]);
  ::waitpid(pid, nullptr, 0);
  EXPECT_EQ(code, 0);
  { MAINBOARD_SPAN("after"); }
  p.stop();
  const auto& r = p.result();
  EXPECT_EQ(stat(r, "before")->calls, 1u);
  EXPECT_EQ(stat(r, "after")->calls, 1u);
  EXPECT_EQ(r.span_stats.size(), 2u);
}

TEST(Spans, EnterAndExitTokensForCodeWithoutScopes) {
  Profiler p(spans_only());
  std::string dynamic = "batch-" + std::to_string(7);
  auto outer = p.enter(dynamic);
  auto inner = p.enter("load");
  p.exit(inner);
  auto left_open = p.enter("left open");
  (void)left_open;
  p.exit(outer);  // closes "left open" too
  const auto& r = p.result();
  EXPECT_EQ(stat(r, "batch-7")->calls, 1u);
  EXPECT_EQ(stat(r, "batch-7/load")->calls, 1u);
  EXPECT_EQ(stat(r, "batch-7/left open")->calls, 1u);
}

// A path names every span it is inside: 10 000 nested spans spelt in full cost the square of the
// depth (510 MB, a 201 MB file). A deep path keeps its first 16 and last 15 names and counts the
// rest, so what is kept grows with the spans, not with their depth squared.
TEST(Spans, DeepNestingCostsInProportionToTheSpans) {
  constexpr int kDepth = 10'000;
  Profile r;
  {
    Profiler p(spans_only());
    std::vector<SpanToken> open;
    for (int i = 0; i < kDepth; ++i)
      open.push_back(p.enter("level"));
    for (auto it = open.rbegin(); it != open.rend(); ++it)
      p.exit(*it);
    p.stop();
    r = p.result();
  }
  ASSERT_EQ(r.span_stats.size(), static_cast<std::size_t>(kDepth));
  std::size_t bytes = 0;
  for (const auto& path : r.paths)
    bytes += path.size();
  EXPECT_LT(bytes, kDepth * 32u * 8u) << "path text grows faster than the spans";
  std::string expected;
  for (int i = 0; i < 16; ++i)
    expected += "level/";
  expected += "[" + std::to_string(kDepth - 31) + " more]";
  for (int i = 0; i < 15; ++i)
    expected += "/level";
  const auto* deepest = stat(r, expected);
  ASSERT_NE(deepest, nullptr) << r.paths.back();
  EXPECT_EQ(deepest->calls, 1u);
  // Every depth keeps its own statistics: the counts tell the depths apart.
  EXPECT_NE(stat(r, "level/level/level"), nullptr);
  auto file = std::filesystem::temp_directory_path() /
              ("mainboard-deep-" + std::to_string(::getpid()) + ".json");
  r.save(file);
  auto size = std::filesystem::file_size(file);
  std::filesystem::remove(file);
  EXPECT_LT(size, 20u << 20) << "the saved file is not in proportion";
  EXPECT_EQ(Profile::parse(nlohmann::json(r).dump()).span_stats.size(), r.span_stats.size());
}

// Run-time names (a counter or an id in each) are kept up to a bound for the process; past it a
// span is counted under "[other names]" and the profile says how many were.
TEST(Spans, DistinctNamesPastTheBoundAreCountedNotKept) {
  constexpr std::size_t kNames = detail::kMaxNames + 5'000;
  Profile r;
  {
    Profiler p(spans_only());
    auto outer = p.enter("batch");
    for (std::size_t i = 0; i < kNames; ++i)
      p.exit(p.enter("item-" + std::to_string(i)));
    p.exit(outer);
    p.stop();
    r = p.result();
  }
  const auto* other = stat(r, "batch/[other names]");
  ASSERT_NE(other, nullptr);
  EXPECT_GE(other->calls, 5'000u);
  std::size_t kept = 0;
  for (const auto& st : r.span_stats)
    kept += st.path.rfind("batch/item-", 0) == 0;
  EXPECT_EQ(kept + other->calls, kNames);
  std::string note;
  for (const auto& u : r.unavailable)
    if (u.find("distinct names kept") != std::string::npos) note = u;
  EXPECT_NE(note.find("spans: " + std::to_string(other->calls) + " spans had a name past"),
            std::string::npos)
      << note;
}

TEST(Profiler, TheSpanClockAndItsRateAreInTheProfile) {
  Profiler p(spans_only());
  auto s = p.enter("work");
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  p.exit(s);
  p.stop();
  const auto& r = p.result();
#if defined(__x86_64__)
  EXPECT_EQ(r.span_clock, "tsc");
#elif defined(__aarch64__)
  EXPECT_EQ(r.span_clock, "cntvct_el0");
#endif
  ASSERT_TRUE(r.span_clock_hz);
  EXPECT_GT(*r.span_clock_hz, 1e6);  // no counter spans are timed with is slower
  // Saved and read back.
  auto back = nlohmann::json(r).get<Profile>();
  EXPECT_EQ(back.span_clock, r.span_clock);
  EXPECT_EQ(back.span_clock_hz, r.span_clock_hz);
  // The text says so only when the clock is coarse enough to matter (qemu's counter is).
  EXPECT_EQ(r.report().find("Span clock") != std::string::npos, *r.span_clock_hz < 1e8)
      << r.report();
  Profile coarse = r;
  coarse.span_clock = "cntvct_el0";
  coarse.span_clock_hz = 25e6;
  EXPECT_NE(coarse.report().find("Span clock cntvct_el0 counts at 25.0 MHz: spans are timed to 40"),
            std::string::npos)
      << coarse.report();
}

TEST(Profiler, OnlyOneSessionAtATime) {
  Profiler p(spans_only());
  try {
    Profiler second(spans_only());
    FAIL() << "a second session started";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already active"), std::string::npos);
  }
  p.stop();
  Profiler third(spans_only());  // fine once the first stopped
  EXPECT_TRUE(third.active());
}

TEST(Profiler, UnavailableFeaturesAreListedOrThrownInStrictMode) {
  // A GPU index past the GPUs there are: listed, or thrown in strict mode.
  FakeGpus gpus("h100x8");
  Machine m(gpus.options());
  ASSERT_EQ(m.gpus().size(), 8u);
  Collection c = spans_only();
  c.machine = &m;
  c.features = Feature::spans | Feature::device;
  c.device_index = 9;
  {
    Profiler p(c);
    const auto& r = p.result();
    ASSERT_EQ(r.unavailable.size(), 1u);
    EXPECT_NE(r.unavailable[0].find("no GPU at index 9 (8 found)"), std::string::npos);
    EXPECT_TRUE(r.device_samples.empty());
  }
  c.strict = true;
  try {
    Profiler strict(c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("device"), std::string::npos);
  }
  Profiler after(spans_only());  // a refused strict session left nothing active
  EXPECT_TRUE(after.active());
  after.stop();
  // A host without GPUs: the device readings the defaults ask for are nothing to read there,
  // not a failure listed in every session; asked for strictly, they are refused.
  Collection quiet = spans_only();
  quiet.features = Feature::spans | Feature::device;
  {
    Profiler p(quiet);
    EXPECT_TRUE(p.result().unavailable.empty());
  }
  quiet.strict = true;
  EXPECT_THROW(Profiler strict(quiet), Error);
}

TEST(Profiler, UnderTakesOneCollectionPolicy) {
  auto c = spans_only();
  c.max_spans = 7;
  auto p = Profiler::under(c);
  for (int i = 0; i < 10; ++i)
    MAINBOARD_SPAN("x");
  EXPECT_EQ(p->result().spans.size(), 7u);
}

TEST(Profiler, DeviceSamplesWhileSpansAreOpen) {
  FakeGpus fake("h100x8", {.caller = "GPU-6b2f3c1e-0003-4a0b-9c3d-000000001003=2147483648"});
  Machine m(fake.options());
  ASSERT_EQ(m.gpus().size(), 8u);
  Collection c;
  c.machine = &m;
  c.device_index = 3;
  c.sample_interval_ms = 5;
  Profiler p(c);
  {
    // Open until the 5 ms sampler has read three times (a loaded or emulated machine takes
    // longer than 15 ms for that: the test waits for the readings, not for a time).
    MAINBOARD_SPAN("work");
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    do
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    while (p.result().device_samples.size() < 3 && std::chrono::steady_clock::now() < deadline);
  }
  const auto r = p.result();
  EXPECT_GE(r.device_samples.size(), 3u);  // sampled every 5 ms while a span was open
  const auto& s = r.device_samples.front();
  EXPECT_EQ(s.gpu, 3u);
  EXPECT_EQ(s.utilization_pct, 97);
  EXPECT_EQ(s.device_memory_used_bytes, 40ull << 30);
  EXPECT_EQ(s.process_memory_bytes, 2ull << 30);  // its own, not pid 4242's beside it
  EXPECT_TRUE(p.result().unavailable.empty());
  EXPECT_NE(p.report().find("Device (GPU 3)"), std::string::npos);
  EXPECT_NE(p.report().find("this process peak 2.00 GiB · device peak 40.0 GiB"), std::string::npos)
      << p.report();
}

namespace {

/// GPU 3 of the fake eight-GPU machine, read `n` times inside one span: the finished profile.
Profile sampled_on_gpu3(const FakeGpus& fake, int n) {
  Machine m(fake.options());
  Collection c;
  c.machine = &m;
  c.device_index = 3;
  Profiler p(c);
  {
    MAINBOARD_SPAN("work");
    for (int i = 0; i < n; ++i)
      p.sample();
  }
  p.stop();
  return p.result();
}

}  // namespace

// A GPU this process does not use (another process works on it) gives no readings at all.
TEST(Profiler, NoDeviceSamplesOnAGpuThisProcessDoesNotUse) {
  FakeGpus fake("h100x8");
  Machine m(fake.options());
  ASSERT_FALSE(m.gpus()[3]->processes().empty());  // pid 4242 is there
  ASSERT_TRUE(m.gpus()[3]->lists_processes());
  auto r = sampled_on_gpu3(fake, 2);
  EXPECT_TRUE(r.device_samples.empty());
  EXPECT_EQ(r.report().find("Device (GPU"), std::string::npos) << r.report();
}

// A driver that lists no processes: the readings are the whole GPU's, and say so.
TEST(Profiler, WithoutAProcessListTheReadingsAreDeviceWide) {
  FakeGpus fake("h100x8", {.no_processes = true});
  ASSERT_FALSE(Machine(fake.options()).gpus()[3]->lists_processes());
  auto r = sampled_on_gpu3(fake, 1);
  ASSERT_EQ(r.device_samples.size(), 1u);
  EXPECT_FALSE(r.device_samples[0].process_memory_bytes);
  EXPECT_EQ(r.device_samples[0].device_memory_used_bytes, 40ull << 30);
  EXPECT_NE(r.report().find("device-wide peak 40.0 GiB (no per-process figure from the driver)"),
            std::string::npos)
      << r.report();
  auto v = ProfileReport::from_profile(r, 1, 0);
  EXPECT_EQ(v.memory_scope, "device");
  EXPECT_EQ(v.peak_memory_bytes, 40ull << 30);
  EXPECT_NE(v.report().find("whole GPU"), std::string::npos) << v.report();
}

TEST(Profiler, NoDeviceSamplesWhenNoSpanIsOpen) {
  FakeGpus fake("h100x8");
  Machine m(fake.options());
  Collection c;
  c.machine = &m;
  c.sample_interval_ms = 2;
  Profiler p(c);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_TRUE(p.result().device_samples.empty());
}

TEST(Profiler, SampleOnDemandAndTheMachineSnapshot) {
  FakeGpus fake("rtx4090", {.caller = "GPU-9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4=1024"});
  Machine m(fake.options());
  Collection c;
  c.machine = &m;
  Profiler p(c);
  p.sample();
  p.sample();
  const auto& r = p.result();
  ASSERT_EQ(r.device_samples.size(), 2u);
  ASSERT_TRUE(r.machine);
  EXPECT_EQ(r.machine->gpus.size(), 1u);
  EXPECT_GT(r.pid, 0);
}

TEST(Spans, StopWhileOtherThreadsAreInsideSpans) {
  // Workers keep opening and closing spans across the stop: the session reads their buffers
  // while they write (checked for races under ThreadSanitizer in `make test`).
  std::atomic<bool> run{true};
  std::atomic<int> started{0};
  auto p = std::make_unique<Profiler>(spans_only());
  std::vector<std::thread> workers;
  for (int t = 0; t < 3; ++t)
    workers.emplace_back([&] {
      started.fetch_add(1);
      while (run.load(std::memory_order_relaxed)) {
        MAINBOARD_SPAN("spin");
        MAINBOARD_SPAN("inner");
      }
    });
  while (started.load() < 3)
    std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto& r = p->result();  // stops with the workers still running
  run = false;
  for (auto& w : workers)
    w.join();
  const SpanStat* spin = stat(r, "spin");
  ASSERT_NE(spin, nullptr);
  EXPECT_GT(spin->calls, 0u);
  for (const auto& e : r.spans)
    EXPECT_LT(e.path, r.paths.size());
  p.reset();
  Profiler next(spans_only());  // the workers' stale states do not leak into a new session
  { MAINBOARD_SPAN("only"); }
  EXPECT_EQ(next.result().span_stats.size(), 1u);
}

// Memory follows use: a log maps a small first chunk and doubles from there (a thread that stores
// one span used to map 1.5 MiB), and every element stays where it was written across chunks.
TEST(Spans, StoredSpanLogsStartSmallAndGrow) {
  detail::ChunkedLog<detail::RawEvent, 256, 1024, 8> log;
  EXPECT_EQ(log.mapped_bytes(), 0u);
  auto put = [&](std::uint64_t i) {
    auto* e = log.next();
    ASSERT_NE(e, nullptr);
    *e = {static_cast<std::uint32_t>(i), i, i + 1};
    log.publish();
  };
  put(0);
  EXPECT_EQ(log.mapped_bytes(), 256 * sizeof(detail::RawEvent));
  for (std::uint64_t i = 1; i < 257; ++i)
    put(i);
  EXPECT_EQ(log.mapped_bytes(), (256 + 512) * sizeof(detail::RawEvent));
  // Doubling stops at 1024 elements a chunk: 256 + 512 + 1024, then 1024 at a time.
  for (std::uint64_t i = 257; i < 3000; ++i)
    put(i);
  EXPECT_EQ(log.mapped_bytes(), (256 + 512 + 1024 + 1024 + 1024) * sizeof(detail::RawEvent));
  for (std::uint64_t i = 0; i < 3000; ++i)
    ASSERT_EQ(log[i].start, i) << i;
  // Full: 256 + 512 + 1024 × 6 elements, then no more.
  EXPECT_EQ(log.capacity(), 256u + 512u + 1024u * 6);
  for (std::uint64_t i = 3000; i < log.capacity(); ++i)
    put(i);
  EXPECT_EQ(log.next(), nullptr);
  EXPECT_EQ(log[log.capacity() - 1].start, log.capacity() - 1);
}

// result(): what was observed so far, the session going on (the reference's Profiler.result()).
TEST(Profiler, ResultFreezesWhatWasObservedAndTheSessionGoesOn) {
  Collection c;
  c.features = Feature::spans;
  Profiler p(c);
  std::thread([] { MAINBOARD_SPAN("early"); }).join();
  { MAINBOARD_SPAN("early"); }
  auto first = p.result();
  EXPECT_TRUE(p.active());
  EXPECT_EQ(p.stats().size(), 1u);
  EXPECT_EQ(p.bottlenecks(1).size(), 1u);
  EXPECT_TRUE(p.active());
  { MAINBOARD_SPAN("late"); }
  ASSERT_EQ(first.span_stats.size(), 1u);
  EXPECT_EQ(first.span_stats[0].path, "early");
  EXPECT_EQ(first.span_stats[0].calls, 2u);
  EXPECT_EQ(first.spans.size(), 2u);
  EXPECT_EQ(first.threads.size(), 2u);
  EXPECT_GE(first.end_ns, first.start_ns);
  EXPECT_EQ(p.result().span_stats.size(), 2u);  // still going: "late" is there
  EXPECT_TRUE(p.active());
  p.stop();
  const auto last = p.result();
  EXPECT_EQ(last.span_stats.size(), 2u);
  { MAINBOARD_SPAN("after stop"); }
  EXPECT_EQ(p.result(), last);  // once stopped, frozen
}

// Reading a session while its threads write (run under ThreadSanitizer too).
TEST(Profiler, ResultWhileThreadsWrite) {
  Collection c;
  c.features = Feature::spans;
  c.max_spans = 10000;  // stored events stop growing; statistics go on
  Profiler p(c);
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int i = 0; i < 2; ++i)
    writers.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        MAINBOARD_SPAN("w");
        MAINBOARD_SPAN("inner");
      }
    });
  std::uint64_t previous = 0;
  for (int i = 0; i < 8; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    auto seen = p.result();
    std::uint64_t calls = 0;
    for (const auto& s : seen.span_stats)
      if (s.path == "w") calls = s.calls;
    EXPECT_GE(calls, previous);  // statistics only grow
    previous = calls;
    for (const auto& e : seen.spans)
      EXPECT_LE(e.start_ns, e.end_ns);
  }
  stop = true;
  for (auto& t : writers)
    t.join();
  EXPECT_GE(p.result().span_stats.size(), 1u);
}

// Tracks: span stacks of their own (asyncio tasks), interleaving on one thread, children of the
// spans open where they began; closed tracks are handed to the next one.
TEST(Spans, TracksInterleaveOnOneThreadUnderTheirStartingPath) {
  Collection c;
  c.features = Feature::spans;
  Profiler p(c);
  auto* outer = detail::span_enter("main");
  const char* open[4] = {};
  ASSERT_EQ(detail::open_path(open, 4), 1u);
  EXPECT_STREQ(open[0], "main");
  auto* a = detail::track_open("tasks", open, 1);
  auto* b = detail::track_open("tasks", open, 1);
  ASSERT_TRUE(a && b);
  // a: fetch { parse }, b: fetch, interleaved as coroutines do at their awaits.
  auto* a1 = detail::span_enter_on(detail::track_state(a), "fetch");
  auto* b1 = detail::span_enter_on(detail::track_state(b), "fetch");
  auto* a2 = detail::span_enter_on(detail::track_state(a), "parse");
  busy_for(std::chrono::microseconds(200));
  detail::span_exit(b1);
  detail::span_exit(a2);
  detail::span_exit(a1);
  detail::span_exit(a1);  // one exit too many stops at the track's starting path
  detail::track_close(b);
  // The next track takes b's place; it starts at the root.
  auto* c3 = detail::track_open("tasks", nullptr, 0);
  detail::span_exit(detail::span_enter_on(detail::track_state(c3), "later"));
  detail::track_close(a);
  detail::span_exit(outer);
  p.stop();
  const auto r = p.result();
  ASSERT_NE(stat(r, "main/fetch"), nullptr);
  EXPECT_EQ(stat(r, "main/fetch")->calls, 2u);
  ASSERT_NE(stat(r, "main/fetch/parse"), nullptr);
  EXPECT_EQ(stat(r, "main/fetch/parse")->calls, 1u);
  EXPECT_GE(stat(r, "main/fetch")->total_ns, stat(r, "main/fetch/parse")->total_ns);
  ASSERT_NE(stat(r, "later"), nullptr);
  EXPECT_EQ(stat(r, "main")->calls, 1u);
  EXPECT_EQ(r.span_stats.size(), 4u);  // the starting paths count nothing of their own
  EXPECT_EQ(r.threads.size(), 3u);     // this thread and two tracks (the third reused one)
  EXPECT_EQ(r.threads[1].tid, 0);
  EXPECT_EQ(r.threads[1].name, "tasks");
  EXPECT_EQ(r.spans.size(), 5u);
  // In the trace, tracks are rows of their own, apart from every real thread.
  auto trace = nlohmann::json::parse(r.perfetto_json());
  std::set<std::int64_t> tids;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X") tids.insert(e["tid"].get<std::int64_t>());
  EXPECT_EQ(tids.size(), 3u);
  // A track of an ended session opens nothing.
  EXPECT_EQ(detail::span_enter_on(detail::track_state(c3), "after"), nullptr);
  detail::track_close(c3);
  EXPECT_EQ(detail::track_open("tasks", nullptr, 0), nullptr);
}

TEST(ProfileReport, IterationTimesAreTheFiguresTimeitGives) {
  auto t = IterationTimes::of({30, 10, 20, 40});
  EXPECT_EQ(t.count, 4u);
  EXPECT_EQ(t.min_ns, 10);
  EXPECT_EQ(t.max_ns, 40);
  EXPECT_EQ(t.median_ns, 25);  // between the middle two
  EXPECT_EQ(t.mean_ns, 25);
  EXPECT_EQ(t.stdev_ns, 13);  // sqrt(500 / 3) = 12.9: the sample deviation, n - 1
  auto odd = IterationTimes::of({5, 1, 9});
  EXPECT_EQ(odd.median_ns, 5);
  EXPECT_EQ(IterationTimes::of({7}).stdev_ns, 0);
  EXPECT_EQ(IterationTimes::of({}), IterationTimes{});
  // Large times do not overflow the sum.
  std::vector<std::int64_t> big(1000, std::int64_t{1} << 60);
  EXPECT_EQ(IterationTimes::of(big).mean_ns, std::int64_t{1} << 60);
}

TEST(ProfileReport, ACpuHostReportSaysNoGpuOnceAndGivesTheTimes) {
  ProfileReport r;
  r.iterations = 3;
  r.warmup = 1;
  r.iteration_wall_ns = {2'000'000, 3'000'000, 4'000'000};
  r.iteration_cpu_ns = {4'000'000, 6'000'000, 8'000'000};
  r.wall = IterationTimes::of(r.iteration_wall_ns);
  r.cpu = IterationTimes::of(r.iteration_cpu_ns);
  r.stack_samples = 40;
  r.hot_functions.push_back({"matmul", "libblas.so.3", "", 30, 40, 75.0, 100.0});
  auto text = r.report();
  EXPECT_EQ(text.rfind("3 iterations timed after 1 warm-up run (not counted)\n", 0), 0u) << text;
  EXPECT_NE(text.find("wall per iteration: min 2.00 ms · median 3.00 ms · mean 3.00 ms ± 1.00 ms"
                      " · max 4.00 ms"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(2.0 CPU-seconds per second of wall time)"), std::string::npos) << text;
  EXPECT_NE(text.find("no GPU on this host"), std::string::npos) << text;
  EXPECT_EQ(text.find("UNKNOWN"), std::string::npos) << text;
  EXPECT_EQ(text.find("kernels"), std::string::npos) << text;
  EXPECT_NE(text.find("hot functions (40 stack samples, by self time)"), std::string::npos) << text;
  EXPECT_NE(text.find("matmul"), std::string::npos) << text;
  // The JSON carries the times and functions both ways.
  nlohmann::json j = r;
  EXPECT_EQ(j.get<ProfileReport>(), r);
  EXPECT_EQ(j["wall"]["median_ns"], 3'000'000);
}
