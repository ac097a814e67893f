#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "core/log.hpp"
#include "fake_gpus.hpp"
#include "mainboard/error.hpp"
#include "mainboard/log.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/meter.hpp"
#include "meter/process_tree.hpp"

using namespace mainboard;

TEST(Meter, PeaksAcrossSamplesWithGpuMemoryRising) {
  // The RTX 4090 scenario's memory in use rises 1 → 6 → 12 GiB over successive readings.
  FakeGpus fake("rtx4090");
  Machine m(fake.options());
  ASSERT_EQ(m.gpus().size(), 1u);
  Meter meter(m);
  EXPECT_EQ(meter.samples(), 1u);
  meter.sample();
  meter.sample();
  meter.stop();
  EXPECT_TRUE(meter.stopped());
  EXPECT_EQ(meter.samples(), 4u);
  EXPECT_EQ(meter.peak_gpu_bytes(), 12288ull << 20);
  EXPECT_DOUBLE_EQ(meter.peak_gpu_gb(), 12.0);
  EXPECT_GE(meter.elapsed_s(), 0.0);
  double frozen = meter.elapsed_s();
  meter.sample();  // after stop: nothing
  EXPECT_EQ(meter.samples(), 4u);
  EXPECT_DOUBLE_EQ(meter.elapsed_s(), frozen);
}

TEST(Meter, HostMemoryFromTheFixtureHost) {
  Machine::Options o;
  o.sysroot = fixture_host("cgroup2-capped");
  Machine m(o);
  Meter meter(m);
  meter.stop();
  EXPECT_EQ(meter.peak_host_bytes(), 16ull << 30);  // the fixture's MemTotal - MemAvailable
  EXPECT_DOUBLE_EQ(meter.host_delta_gb(), 0.0);
  EXPECT_EQ(meter.peak_gpu_bytes(), 0u);
}

TEST(Meter, ThisProcessesPeakCountsWhatWasFreedBetweenSamples) {
  Machine::Options o;
  o.sysroot = fixture_host("cgroup2-capped");  // host figures from the fixture; this process's own
  Machine m(o);
  Meter meter(m);
  constexpr std::size_t kBytes = 96u << 20;
  {
    std::vector<char> block(kBytes);
    for (std::size_t i = 0; i < kBytes; i += 4096)
      block[i] = 1;  // resident, page by page
    asm volatile("" : : "r"(block.data()) : "memory");
  }  // freed before any sample saw it: the kernel's high-water mark did
  meter.stop();
  EXPECT_GE(meter.peak_rss_bytes(), kBytes);
  EXPECT_GT(meter.peak_pss_bytes(), 0u);
  EXPECT_EQ(meter.peak_host_bytes(), 16ull << 30);  // still the fixture's, not this process's
}

TEST(Log, LinesGoToTheProgramsSinkNotStderr) {
  // A recorded host whose environment record is malformed: the library warns that it ignores it.
  auto root =
      std::filesystem::temp_directory_path() / ("mainboard-log-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / ".mainboard");
  { std::ofstream(root / ".mainboard/environment.json") << "{ not json"; }
  mainboard::core::set_log_level(spdlog::level::warn);
  std::vector<std::pair<LogLevel, std::string>> lines;
  set_log_sink([&](LogLevel level, std::string_view text) { lines.emplace_back(level, text); });
  ::testing::internal::CaptureStderr();
  {
    Machine::Options o;
    o.sysroot = root.string();
    Machine m(o);
    (void)m.snapshot();
  }
  auto err = ::testing::internal::GetCapturedStderr();
  set_log_sink({});
  std::filesystem::remove_all(root);
  auto warned = std::find_if(lines.begin(), lines.end(), [](const auto& line) {
    return line.first == LogLevel::warn &&
           line.second.find("ignoring malformed") != std::string::npos;
  });
  EXPECT_NE(warned, lines.end()) << lines.size() << " lines";
  EXPECT_EQ(err.find("ignoring malformed"), std::string::npos) << err;
}

TEST(Meter, UnifiedMemoryIsNotCountedTwice) {
  Machine::Options o;
  o.sysroot = fixture_host("apple-m3-max");
  Machine m(o);
  Meter meter(m);
  meter.stop();
  EXPECT_EQ(meter.peak_gpu_bytes(), 0u);  // the Apple GPU's pool is the host's memory
  EXPECT_GT(meter.peak_host_bytes(), 0u);
}

TEST(Meter, CoherentGpuCountsItsHbm) {
  // GH200: coherent with the Grace CPU, yet its HBM is the device's own memory in use.
  FakeGpus fake("gh200");
  Machine m(fake.options());
  ASSERT_EQ(m.gpus().size(), 1u);
  ASSERT_TRUE(m.gpus()[0]->memory()->unified);
  Meter meter(m);
  meter.stop();
  EXPECT_EQ(meter.peak_gpu_bytes(), 12ull << 30);  // the scenario's used bytes
  EXPECT_DOUBLE_EQ(meter.peak_gpu_gb(), 12.0);
}

TEST(Meter, MovedMeterKeepsMeasuring) {
  Machine::Options o;
  o.sysroot = fixture_host("cgroup2-capped");
  Machine m(o);
  Meter a(m);
  Meter b(std::move(a));
  b.sample();
  EXPECT_EQ(b.samples(), 2u);
}

TEST(ProcessTree, StatParsing) {
  auto s = proctree::parse_stat(
      "4242 (python3 (worker)) S 4200 4242 4200 0 -1 4194560 1 0 0 0 5 3 0 0 20 0 1 0 100 "
      "123456 789 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->pid, 4242);
  EXPECT_EQ(s->ppid, 4200);
  EXPECT_EQ(s->rss_pages, 789u);
  EXPECT_FALSE(proctree::parse_stat(""));
  EXPECT_FALSE(proctree::parse_stat("12 (x) S 1"));
  EXPECT_FALSE(proctree::parse_stat("garbage)("));
}

TEST(ProcessTree, ThisProcessIsItsOwnRoot) {
  MAINBOARD_NATIVE_ONLY("the real /proc/self (the emulator's has no RSS)");
  auto tree = proctree::process_tree(core::Fs("/"), ::getpid());
  ASSERT_FALSE(tree.empty());
  EXPECT_EQ(tree[0].pid, ::getpid());
  EXPECT_GT(tree[0].rss_pages, 0u);
  EXPECT_TRUE(proctree::process_tree(core::Fs("/"), 0x7ffffff0).empty());
}

TEST(MeasureCommand, PeakCoversAGrandchildsAllocation) {
  MAINBOARD_NATIVE_ONLY("to start the project's own arm64 programs");
  Machine::Options o;
  o.sysroot = fixture_host("numa-2socket");  // no GPUs; the command itself runs on this host
  Machine m(o);
  MeterOptions opts;
  opts.interval = std::chrono::milliseconds(20);
  auto r = measure_command(m, {MAINBOARD_ALLOC_TREE, "96", "3"}, opts);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.signal);
  EXPECT_GE(r.peak_rss_bytes, 96ull << 20);       // the grandchild's 96 MiB
  EXPECT_GE(r.peak_tree_rss_bytes, 96ull << 20);  // seen by sampling the tree
  EXPECT_GE(r.peak_processes, 3u);
  EXPECT_GE(r.wall_s, 0.5);
  EXPECT_GT(r.samples, 5u);
  EXPECT_FALSE(r.peak_gpu_bytes);  // no GPU to read
}

TEST(MeasureCommand, PagesSharedAfterForkCountOnceInTheProportionalPeak) {
  MAINBOARD_NATIVE_ONLY("to start the project's own arm64 programs");
  // A 48 MiB parent and 3 children that share its pages: summed RSS counts them four times,
  // PSS once (in shares), as the kernel's smaps_rollup says.
  Machine::Options o;
  o.sysroot = fixture_host("numa-2socket");
  Machine m(o);
  MeterOptions opts;
  opts.interval = std::chrono::milliseconds(20);
  opts.gpus = false;
  auto r = measure_command(m, {MAINBOARD_ALLOC_TREE, "shared", "48", "3"}, opts);
  ASSERT_EQ(r.exit_code, 0);
  if (r.peak_pss_bytes == 0) GTEST_SKIP() << "no smaps_rollup in this kernel";
  // (Ratios, not sizes: a sanitizer's runtime in the test program adds memory of its own.)
  EXPECT_GE(r.peak_tree_rss_bytes, 4 * (44ull << 20)) << "four processes' RSS";
  EXPECT_GE(r.peak_pss_bytes, 44ull << 20);
  EXPECT_LT(r.peak_pss_bytes, r.peak_tree_rss_bytes / 2) << "the shared pages counted once";
  EXPECT_GE(r.max_process_rss_bytes, 48ull << 20);  // the parent's own high-water mark
  EXPECT_LT(r.max_process_rss_bytes, r.peak_tree_rss_bytes / 2);
}

TEST(MeasureCommand, AChildInItsParentsAddressSpaceAddsNoMemory) {
  MAINBOARD_NATIVE_ONLY("to start the project's own arm64 programs");
  // A vfork child before exec (and a task cloned with CLONE_VM, as a sanitizer's leak checker
  // starts at exit) has its parent's pages, not pages of its own: a 48 MiB process and its
  // vfork child are 48 MiB, not 96.
  Machine::Options o;
  o.sysroot = fixture_host("numa-2socket");
  Machine m(o);
  MeterOptions opts;
  opts.interval = std::chrono::milliseconds(20);
  opts.gpus = false;
  auto r = measure_command(m, {MAINBOARD_ALLOC_TREE, "vfork", "48"}, opts);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_EQ(r.peak_processes, 2u) << "the vfork child was seen";
  EXPECT_GE(r.peak_tree_rss_bytes, 48ull << 20);
  EXPECT_LT(r.peak_tree_rss_bytes, 80ull << 20) << "the shared address space counted once";
  if (r.peak_pss_bytes) {
    EXPECT_LT(r.peak_pss_bytes, 80ull << 20);
  }
}

TEST(MeasureCommand, TheLargestProcessIsTheCommandsNotThisProgramsCopy) {
  MAINBOARD_NATIVE_ONLY("a forked child to be a copy of this program, not of the emulator");
  // Between fork and exec the child is a copy of this (much larger) test program: its peak
  // must not count. /bin/true's own is about a megabyte.
  Machine::Options o;
  o.sysroot = fixture_host("numa-2socket");
  Machine m(o);
  std::vector<char> ballast(64 << 20, 1);  // make this process's copy unmistakable
  auto r = measure_command(m, {"/bin/sleep", "0.2"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_LT(r.max_process_rss_bytes, 16ull << 20) << r.max_process_rss_bytes;
  EXPECT_GT(r.max_process_rss_bytes, 0u);
  EXPECT_GE(r.voluntary_switches + r.involuntary_switches, 1u);
  EXPECT_GE(r.minor_faults, 10u);  // exec and the C library's start
  EXPECT_EQ(ballast[12345], 1);
}

TEST(MeasureCommand, SignalsAndErrors) {
  Machine::Options o;
  o.sysroot = fixture_host("numa-2socket");
  Machine m(o);
  auto killed = measure_command(m, {"/bin/sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(killed.signal, SIGTERM);
  EXPECT_EQ(killed.exit_code, 128 + SIGTERM);
  try {
    measure_command(m, {"no-such-command-here"});
    FAIL();
  } catch (const CommandError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-command-here: not found on PATH"),
              std::string::npos);
    EXPECT_EQ(e.exit_code(), 127);
  }
  EXPECT_THROW(measure_command(m, {}), Error);
  EXPECT_THROW(measure_command(m, {"/nonexistent/binary"}), Error);
}

TEST(MeasureCommand, GpuMemoryOfTheTreesProcesses) {
  // The fake GPU lists pid 777 (not ours): nothing of it belongs to the measured tree.
  FakeGpus fake("rtx4090");
  Machine m(fake.options());
  auto r = measure_command(m, {"/bin/true"});
  ASSERT_TRUE(r.peak_gpu_bytes);
  EXPECT_EQ(*r.peak_gpu_bytes, 0u);
  EXPECT_EQ(r.peak_gpu_bytes_by_gpu.size(), 1u);
}
