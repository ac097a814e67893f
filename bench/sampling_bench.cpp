// Symbolization cost: 10 000 samples of real stacks of this process (return addresses from
// backtrace() at several recursion depths through several functions) turned into a Profile:
// libdwfl set-up from the mappings, every distinct address symbolized once (with inlined frames
// and lines), then interned.
#include <benchmark/benchmark.h>
#include <execinfo.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <fstream>
#include <sstream>

#include "sampling/build_profile.hpp"
#include "sampling/python_frames.hpp"

using namespace mainboard;

namespace {

std::vector<std::vector<std::uint64_t>> g_stacks;

extern "C" __attribute__((noinline)) void capture(int depth, int variant);

extern "C" __attribute__((noinline)) void level_a(int depth, int variant) {
  capture(depth - 1, variant);
}
extern "C" __attribute__((noinline)) void level_b(int depth, int variant) {
  capture(depth - 1, variant);
}
extern "C" __attribute__((noinline)) void level_c(int depth, int variant) {
  capture(depth - 1, variant);
}

extern "C" __attribute__((noinline)) void capture(int depth, int variant) {
  if (depth <= 0) {
    void* frames[64];
    int n = ::backtrace(frames, 64);
    std::vector<std::uint64_t> ips;
    for (int i = 0; i < n; ++i)
      ips.push_back(reinterpret_cast<std::uint64_t>(frames[i]));
    g_stacks.push_back(std::move(ips));
    return;
  }
  switch ((variant >> (depth % 8)) % 3) {
    case 0: level_a(depth, variant); break;
    case 1: level_b(depth, variant); break;
    default: level_c(depth, variant); break;
  }
}

sampling::SamplerOutput samples(std::size_t n) {
  if (g_stacks.empty())
    for (int v = 0; v < 50; ++v)
      capture(8 + v % 10, v * 7919);
  sampling::SamplerOutput out;
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  auto pid = static_cast<std::int32_t>(::getpid());
  out.mappings[pid] = symbols::parse_maps(text.str());
  out.processes = {pid};
  for (std::size_t i = 0; i < n; ++i) {
    sampling::RawSample s;
    s.t_ns = static_cast<std::int64_t>(i) * 1'000'000;
    s.pid = s.tid = pid;
    s.ips = g_stacks[i % g_stacks.size()];
    out.samples.push_back(std::move(s));
  }
  return out;
}

}  // namespace

static void BM_Symbolize10kSamples(benchmark::State& state) {
  auto input = samples(10'000);
  std::size_t frames = 0;
  for (auto _ : state) {
    auto p = sampling::to_profile(input, 99, input.processes[0], true);
    frames = p.frames.size();
    benchmark::DoNotOptimize(p);
  }
  state.counters["distinct_stacks"] = static_cast<double>(g_stacks.size());
  state.counters["frames"] = static_cast<double>(frames);
}
BENCHMARK(BM_Symbolize10kSamples)->Unit(benchmark::kMillisecond);

// A Debian python3 process with two threads sleeping in a recursion `depth` frames deep.
struct SleepingPython {
  pid_t pid = -1;
  explicit SleepingPython(int depth) {
    auto d = std::to_string(depth);
    int ready[2];
    if (::pipe(ready) != 0) return;
    pid = ::fork();
    if (pid == 0) {
      ::dup2(ready[1], 1);
      ::execl("/usr/bin/python3", "python3", "-c",
              "import sys, threading, time\n"
              "def down(n):\n"
              "    if n: return down(n - 1)\n"
              "    time.sleep(3600)\n"
              "threading.Thread(target=down, args=(int(sys.argv[1]),), daemon=True).start()\n"
              "print('ready', flush=True)\n"
              "down(int(sys.argv[1]))\n",
              d.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(ready[1]);
    char c;
    while (::read(ready[0], &c, 1) == 1 && c != '\n') {
    }
    ::close(ready[0]);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ~SleepingPython() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

// One read of every Python stack of that process, from outside: what the poller does for each
// process at every tick (code objects cached after the first read). Arg 1: stopped for the read
// (ptrace seize, interrupt, wait, detach for both threads), as --pause does. Arg 2: each frame
// read twice and checked (the reader's default); 0 reads each once, as before the checks, so that
// one run says what they cost.
static void BM_PythonStackRead(benchmark::State& state) {
  SleepingPython target(static_cast<int>(state.range(0)));
  std::string why;
  auto reader = sampling::PythonReader::open(target.pid, &why);
  if (!reader) return state.SkipWithError(("no Python reader: " + why).c_str());
  std::vector<sampling::PyThreadStack> threads;
  std::size_t frames = 0;
  bool pause = state.range(1) != 0;
  reader->set_checked(state.range(2) != 0);
  for (auto _ : state) {
    if (pause) {
      sampling::ProcessPause stop(target.pid);
      if (!stop.stopped()) return state.SkipWithError("ptrace refused");
      reader->read(threads);
    } else {
      reader->read(threads);
    }
    frames = 0;
    for (const auto& t : threads)
      frames += t.frames.size();
    benchmark::DoNotOptimize(frames);
  }
  state.counters["frames"] = static_cast<double>(frames);
}
BENCHMARK(BM_PythonStackRead)
    ->ArgNames({"depth", "paused", "checked"})
    ->Args({10, 0, 1})
    ->Args({10, 1, 1})
    ->Args({100, 0, 0})
    ->Args({100, 0, 1})
    ->Args({100, 1, 1})
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
