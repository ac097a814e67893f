// The live view: the counters it reads, the rates it takes from them over a host whose files
// change between two readings, its JSON, and the frame it draws.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/proc_stat.hpp"
#include "host/live.hpp"
#include "mainboard/live.hpp"
#include "mainboard/machine.hpp"
#include "test_util.hpp"
#include "view/format.hpp"

using namespace mainboard;

namespace {

std::string stat_line(std::uint32_t pid, const std::string& name, std::uint32_t ppid,
                      std::uint64_t utime, std::uint64_t stime, std::uint64_t start,
                      std::uint64_t rss_pages, int threads = 1) {
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
  // stime cutime cstime priority nice num_threads itrealvalue starttime vsize rss …
  return std::to_string(pid) + " (" + name + ") S " + std::to_string(ppid) +
         " 1 1 0 -1 4194304 10 0 0 0 " + std::to_string(utime) + " " + std::to_string(stime) +
         " 0 0 20 0 " + std::to_string(threads) + " 0 " + std::to_string(start) + " 1000000 " +
         std::to_string(rss_pages) + " 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0\n";
}

}  // namespace

TEST(LiveCounters, CpuTimesAreReadPerCpuAndMalformedLinesAreLeftOut) {
  auto t = host::parse_cpu_times(
      "cpu  100 5 50 800 10 2 3 1 0 0\n"
      "cpu0 60 5 30 400 5 1 2 1 0 0\n"
      "cpu1 40 0 20 400 5 1 1 0 0 0\n"
      "cpu2 garbage here 1 2 3 4 5\n"
      "cpu3 1 2\n"
      "intr 12345 1 2\n"
      "ctxt 999\n");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].cpu, -1);
  EXPECT_EQ(t[0].total(), 100u + 5 + 50 + 800 + 10 + 2 + 3 + 1);
  EXPECT_EQ(t[1].cpu, 0);
  EXPECT_EQ(t[1].idle, 400u);
  EXPECT_EQ(t[2].cpu, 1);
  // Old kernels stop after softirq: steal reads 0.
  auto old = host::parse_cpu_times("cpu0 1 2 3 4 5 6 7\n");
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].steal, 0u);
  EXPECT_EQ(old[0].softirq, 7u);
  EXPECT_TRUE(host::parse_cpu_times("").empty());
  EXPECT_TRUE(host::parse_cpu_times(std::string(1 << 20, 'x')).empty());
  EXPECT_TRUE(host::parse_cpu_times("cpu99999999999 1 2 3 4 5 6 7 8").empty());
}

TEST(LiveCounters, AProcessStatWithParenthesesAndSpacesInItsNameIsRead) {
  auto s = core::parse_proc_stat(stat_line(4242, "py (worker) 1", 1, 300, 45, 12345, 2560, 7));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->pid, 4242u);
  EXPECT_EQ(s->ppid, 1u);
  EXPECT_EQ(s->name, "py (worker) 1");
  EXPECT_EQ(s->cpu_ticks, 345u);
  EXPECT_EQ(s->start_ticks, 12345u);
  EXPECT_EQ(s->rss_pages, 2560u);
  EXPECT_EQ(s->threads, 7u);
  EXPECT_FALSE(core::parse_proc_stat(""));
  EXPECT_FALSE(core::parse_proc_stat("12 (x) S 1 2 3"));
  EXPECT_FALSE(core::parse_proc_stat(")( garbage"));
  EXPECT_FALSE(core::parse_proc_stat(std::string(100000, '(')));
}

TEST(LiveCounters, CommandLinesUsersAndUids) {
  using namespace std::string_literals;
  const std::string words =
      "python3\0train.py\0--lr\0"
      "0.1\0"s;
  EXPECT_EQ(host::command_line(words), "python3 train.py --lr 0.1");
  EXPECT_EQ(host::command_line(""), "");
  EXPECT_EQ(host::command_line("python3\0-c\0\nimport x\n\tx.run()\0"s),
            "python3 -c  import x  x.run()");
  // A terminal escape in an argument is not passed to the screen.
  const std::string hostile = "echo\0\x1b]52;c;AAAA\x07"s;
  EXPECT_EQ(host::command_line(hostile).find('\x1b'), std::string::npos);
  EXPECT_EQ(host::status_uid("Name:\tx\nUid:\t1000\t1000\t1000\t1000\nGid:\t5\n"), 1000u);
  EXPECT_FALSE(host::status_uid("Name:\tx\n"));
  EXPECT_FALSE(host::status_uid("Uid:\tnope\n"));
  auto users = host::user_names(
      "root:x:0:0::/root:/bin/sh\nalice:x:1000:1000::/h:/bin/sh\n"
      "broken\n:x:5:5\nbob:x:notanumber:1\n");
  EXPECT_EQ(users.size(), 2u);
  EXPECT_EQ(users[1000], "alice");
}

namespace {

/// A host of two CPUs and two processes whose counters the test moves between readings.
struct LiveHost {
  TempDir dir;
  LiveHost() {
    dir.write("proc/meminfo",
              "MemTotal: 16384000 kB\nMemFree: 8000000 kB\n"
              "MemAvailable: 12288000 kB\nSwapTotal: 2097152 kB\n"
              "SwapFree: 1048576 kB\n");
    dir.write("proc/loadavg", "1.50 1.00 0.50 2/300 4243\n");
    dir.write("proc/sys/kernel/hostname", "node7\n");
    dir.write("etc/passwd", "root:x:0:0::/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n");
    dir.write("proc/4242/status", "Name:\tpython3\nUid:\t1000\t1000\t1000\t1000\n");
    dir.write("proc/4242/cmdline", std::string("python3\0train.py", 17));
    dir.write("proc/4243/status", "Name:\tbash\nUid:\t0\t0\t0\t0\n");
    dir.write("proc/4243/cmdline", std::string("bash", 5));
    set(0, 0, 1000);
  }
  /// CPU ticks: from the first reading (`busy0` 0) to the next, 100 ticks pass on each CPU, of
  /// which cpu0 spends `busy0` in user time and cpu1 none; the processes' user ticks.
  void set(std::uint64_t busy0, std::uint64_t python_ticks, std::uint64_t uptime_s) {
    std::uint64_t passed = busy0 ? 100 : 0;
    std::uint64_t user0 = 500 + busy0, idle0 = 1000 + passed - busy0, user1 = 500,
                  idle1 = 1000 + passed;
    auto line = [](const std::string& name, std::uint64_t user, std::uint64_t idle) {
      return name + " " + std::to_string(user) + " 0 0 " + std::to_string(idle) + " 0 0 0 0 0 0\n";
    };
    dir.write("proc/stat", line("cpu ", user0 + user1, idle0 + idle1) + line("cpu0", user0, idle0) +
                               line("cpu1", user1, idle1) + "intr 1 2 3\n");
    dir.write("proc/uptime", std::to_string(uptime_s) + ".00 100.00\n");
    dir.write("proc/4242/stat",
              stat_line(4242, "python3", 4243, python_ticks, 0, 100 * 900, 25600, 4));
    dir.write("proc/4243/stat", stat_line(4243, "bash", 1, 5, 5, 100 * 100, 512));
  }
};

}  // namespace

TEST(MachineWatch, RatesComeFromTwoReadingsOfTheHostsCounters) {
  LiveHost host;
  Machine::Options opts;
  opts.sysroot = host.dir.path();
  opts.environment = std::map<std::string, std::string>{};
  Machine machine(opts);
  MachineWatch watch(machine, true);
  auto first = watch.next();
  EXPECT_EQ(first.sequence, 0u);
  EXPECT_FALSE(first.cpu_total) << "no rate from one reading";
  EXPECT_TRUE(first.cpus.empty());
  ASSERT_EQ(first.processes.size(), 2u);
  EXPECT_FALSE(first.processes[0].cpu_pct);

  // 75 ticks of 100 busy on cpu0, none on cpu1; python used 50 ticks.
  host.set(75, 50, 1001);
  auto second = watch.next();
  EXPECT_EQ(second.sequence, 1u);
  EXPECT_GT(second.interval_s, 0);
  ASSERT_TRUE(second.cpu_total);
  ASSERT_EQ(second.cpus.size(), 2u);
  EXPECT_NEAR(second.cpus[0].busy_pct, 75.0, 1e-9);
  EXPECT_NEAR(second.cpus[1].busy_pct, 0.0, 1e-9);
  EXPECT_NEAR(second.cpu_total->busy_pct, 37.5, 1e-9);
  EXPECT_EQ(second.hostname, "node7");
  ASSERT_TRUE(second.load_1m);
  EXPECT_DOUBLE_EQ(*second.load_1m, 1.5);
  ASSERT_TRUE(second.memory);
  EXPECT_EQ(second.memory->total_bytes, 16384000ull * 1024);
  EXPECT_EQ(second.swap_total_bytes, 2097152ull * 1024);
  EXPECT_EQ(second.swap_used_bytes, 1048576ull * 1024);

  const LiveProcess* python = nullptr;
  for (const auto& p : second.processes)
    if (p.pid == 4242) python = &p;
  ASSERT_NE(python, nullptr);
  EXPECT_EQ(python->user, "alice");
  EXPECT_EQ(python->command, "python3 train.py");
  EXPECT_EQ(python->ppid, 4243u);
  EXPECT_EQ(python->threads, 4u);
  EXPECT_EQ(python->rss_bytes, 25600ull * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)));
  EXPECT_NEAR(python->elapsed_s, 1001.0 - 900.0, 1e-6);
  ASSERT_TRUE(python->cpu_pct);
  // 50 ticks over the real interval between the two reads.
  double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  EXPECT_NEAR(*python->cpu_pct, 100.0 * 50 / ticks / second.interval_s, 1e-6);

  // A PID reused by another process (a later start) has no rate from the old one's ticks.
  host.dir.write("proc/4242/stat", stat_line(4242, "python3", 4243, 80, 0, 100 * 999, 25600));
  auto third = watch.next();
  for (const auto& p : third.processes) {
    if (p.pid == 4242) {
      EXPECT_FALSE(p.cpu_pct);
    }
  }

  // Only the GPUs' processes (this host has none).
  watch.list_all_processes(false);
  EXPECT_TRUE(watch.next().processes.empty());
}

TEST(MachineWatch, AHostWithoutItsCountersSaysSoRatherThanShowingZeros) {
  TempDir empty;
  Machine::Options opts;
  opts.sysroot = empty.path();
  opts.environment = std::map<std::string, std::string>{};
  Machine machine(opts);
  MachineWatch watch(machine, true);
  watch.next();
  auto f = watch.next();
  EXPECT_FALSE(f.cpu_total);
  EXPECT_TRUE(f.processes.empty());
  EXPECT_FALSE(f.memory);
  LiveView view;
  view.add(f);
  LiveViewOptions o;
  o.height = 0;
  std::string text;
  for (const auto& l : view.render(o))
    text += l + "\n";
  EXPECT_NE(text.find("use not readable"), std::string::npos) << text;
  EXPECT_NE(text.find("Mem not readable"), std::string::npos) << text;
}

namespace {

LiveFrame sample_frame() {
  LiveFrame f;
  f.sequence = 3;
  f.interval_s = 1;
  f.hostname = "gpu-node-01";
  f.uptime_s = 3 * 86400 + 7200;
  f.cpu_total = CpuUse{-1, 40, 30, 10, 0, 0};
  for (int i = 0; i < 64; ++i)
    f.cpus.push_back(CpuUse{i, i % 2 ? 90.0 : 10.0, 0, 0, 0, 0});
  f.load_1m = 12.5;
  f.load_5m = 10;
  f.load_15m = 8;
  f.memory = Memory{512ull << 30, 128ull << 30, 384ull << 30};
  f.cpu_power_w = 210;
  f.cpu_temperature_c = 61;
  for (std::uint32_t i = 0; i < 4; ++i) {
    LiveGpu g;
    g.reading.info.index = i;
    g.reading.info.label = "NVIDIA H100 80GB HBM3";
    g.reading.telemetry.utilization = Utilization{i == 2 ? 97.0 : 0.0, std::nullopt};
    g.reading.telemetry.memory =
        Memory{80ull << 30, i == 2 ? 40ull << 30 : 1ull << 20, std::nullopt};
    Thermal heat;
    heat.temperature_c = 40 + i;
    if (i == 2) heat.throttle_reasons = {"SwPowerCap"};
    g.reading.telemetry.thermal = heat;
    g.reading.telemetry.energy = Energy{i == 2 ? 655.0 : 70.0, 700.0, std::nullopt};
    g.xids_since_start = i == 3 ? 2 : 0;
    g.ecc_corrected_since_start = 0;
    g.ecc_uncorrected_since_start = 0;
    f.gpus.push_back(g);
  }
  auto proc = [](std::uint32_t pid, std::uint32_t ppid, const char* user, const char* cmd,
                 std::optional<std::uint64_t> gpu_mem, double cpu,
                 std::vector<std::uint32_t> gpus) {
    LiveProcess p;
    p.pid = pid;
    p.ppid = ppid;
    p.user = user;
    p.command = cmd;
    p.name = std::string(cmd).substr(0, std::string(cmd).find(' '));
    p.gpu_memory_bytes = gpu_mem;
    p.cpu_pct = cpu;
    p.gpus = std::move(gpus);
    p.rss_bytes = 1ull << 30;
    p.elapsed_s = 3600;
    return p;
  };
  f.processes.push_back(proc(100, 1, "alice", "torchrun --nproc 2 train.py", std::nullopt, 1, {}));
  f.processes.push_back(proc(101, 100, "alice", "python3 train.py --rank 0", 40ull << 30, 99, {2}));
  f.processes.push_back(proc(102, 100, "alice", "python3 train.py --rank 1", 1ull << 20, 12, {3}));
  f.processes.push_back(proc(200, 1, "bob", "python3 eval.py", 2ull << 30, 50, {2}));
  return f;
}

}  // namespace

TEST(LiveView, AFrameFitsTheScreenItIsDrawnFor) {
  LiveView view;
  auto f = sample_frame();
  view.add(f);
  view.add(f);
  for (auto [w, h] : {std::pair{80, 24}, std::pair{300, 60}, std::pair{40, 10}}) {
    LiveViewOptions o;
    o.width = w;
    o.height = h;
    for (bool color : {false, true}) {
      o.color = color;
      auto lines = view.render(o);
      EXPECT_EQ(lines.size(), static_cast<std::size_t>(h)) << w << "x" << h;
      for (const auto& l : lines)
        EXPECT_LE(view::width_of(l), static_cast<std::size_t>(w)) << l;
    }
  }
  LiveViewOptions o;
  o.width = 120;
  o.height = 0;
  std::string text;
  for (const auto& l : view.render(o))
    text += l + "\n";
  // The figures of the frame, in words.
  EXPECT_NE(text.find("gpu-node-01"), std::string::npos) << text;
  EXPECT_NE(text.find("up 3d02h"), std::string::npos) << text;
  EXPECT_NE(text.find("load 12.50 10.00 8.00"), std::string::npos) << text;
  EXPECT_NE(text.find("210 W"), std::string::npos) << text;
  EXPECT_NE(text.find("61 °C"), std::string::npos) << text;
  EXPECT_NE(text.find("655 / 700 W"), std::string::npos) << text;
  EXPECT_NE(text.find("clocks held by: power cap"), std::string::npos) << text;
  EXPECT_NE(text.find("XID +2 since start"), std::string::npos) << text;
  EXPECT_NE(text.find(" 97%"), std::string::npos) << text;
  EXPECT_NE(text.find("128 / 512 GiB"), std::string::npos) << text;
  EXPECT_NE(text.find("63 █████████░  90%"), std::string::npos) << text;
}

TEST(LiveView, RowsFollowTheSortTheFilterTheGpuAndTheTree) {
  LiveView view;
  view.add(sample_frame());
  auto pids = [&](const LiveViewOptions& o) {
    std::vector<std::uint32_t> out;
    for (auto* p : view.rows(o))
      out.push_back(p->pid);
    return out;
  };
  LiveViewOptions o;
  o.sort = "gpu_memory";
  EXPECT_EQ(pids(o), (std::vector<std::uint32_t>{101, 200, 102, 100}));
  o.sort = "cpu";
  EXPECT_EQ(pids(o), (std::vector<std::uint32_t>{101, 200, 102, 100}));
  o.ascending = true;
  EXPECT_EQ(pids(o), (std::vector<std::uint32_t>{100, 102, 200, 101}));
  o.sort = "user";
  EXPECT_EQ(pids(o), (std::vector<std::uint32_t>{100, 101, 102, 200}));
  o.filter = "EVAL";
  EXPECT_EQ(pids(o), (std::vector<std::uint32_t>{200}));
  o.filter.clear();
  o.gpu = 2;
  EXPECT_EQ(pids(o), (std::vector<std::uint32_t>{101, 200}));
  o.gpu.reset();
  o.tree = true;
  o.sort = "cpu";
  o.ascending = false;
  // Parents before their children; siblings in the sort's order.
  EXPECT_EQ(pids(o), (std::vector<std::uint32_t>{200, 100, 101, 102}));
  o.height = 0;
  o.width = 100;
  std::string text;
  for (const auto& l : view.render(o))
    text += l + "\n";
  EXPECT_NE(text.find("└ python3 train.py --rank 0"), std::string::npos) << text;
  // The selected process's whole command line under it.
  o.selected_pid = 100;
  o.expand_selected = true;
  o.tree = false;
  text.clear();
  for (const auto& l : view.render(o))
    text += l + "\n";
  EXPECT_NE(text.find("▶ "), std::string::npos) << text;
  EXPECT_NE(text.find("    torchrun --nproc 2 train.py"), std::string::npos) << text;
}

TEST(LiveView, TheSelectedRowStaysOnTheScreen) {
  LiveView view;
  auto f = sample_frame();
  for (std::uint32_t i = 0; i < 200; ++i) {
    LiveProcess p;
    p.pid = 1000 + i;
    p.command = "worker " + std::to_string(i);
    p.cpu_pct = 200 - i;
    f.processes.push_back(p);
  }
  view.add(f);
  LiveViewOptions o;
  o.sort = "cpu";
  o.width = 100;
  o.height = 30;
  o.selected_pid = 1150;
  auto lines = view.render(o);
  bool seen = false;
  for (const auto& l : lines)
    seen = seen || l.find("worker 150") != std::string::npos;
  EXPECT_TRUE(seen);
}

TEST(LiveView, AFrameWritesAndReadsBackAsJson) {
  auto f = sample_frame();
  nlohmann::json j = f;
  EXPECT_EQ(j["hostname"], "gpu-node-01");
  EXPECT_EQ(j["gpus"][2]["reading"]["telemetry"]["utilization"]["compute_pct"], 97.0);
  EXPECT_EQ(j["processes"][1]["gpu_memory_bytes"], 40ull << 30);
  auto back = j.get<LiveFrame>();
  EXPECT_EQ(back, f);
  LiveFrame first;
  nlohmann::json k = first;
  EXPECT_TRUE(k["cpu_total"].is_null());
}

TEST(MachineWatch, NpusAreInTheFrameAndOnTheScreen) {
  Machine::Options opts;
  opts.sysroot = MAINBOARD_FIXTURES "/hosts/gaudi2";
  Machine machine(opts);
  MachineWatch watch(machine);
  auto f = watch.next();
  ASSERT_EQ(f.npus.size(), 2u);
  EXPECT_EQ(f.npus[1].info.index, 1u);
  LiveView view;
  view.add(f);
  LiveViewOptions o;
  o.width = 120;
  o.height = 0;
  std::string text;
  for (const auto& l : view.render(o))
    text += l + "\n";
  EXPECT_NE(text.find("NPU1 Intel Gaudi 2"), std::string::npos) << text;
  nlohmann::json j = f;
  EXPECT_EQ(j["npus"].size(), 2u);
}
