// Stack sampling of real processes (the sample_target program, Node.js) and the analyses of
// samples. The shares are checked within a tolerance: sampling is statistical.
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/processes.hpp"
#include "core/text.hpp"
#include "mainboard/error.hpp"
#include "mainboard/json.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/meter.hpp"
#include "mainboard/profiler.hpp"
#include "mainboard/runner.hpp"
#include "mainboard/sampler.hpp"
#include "sampling/perf_sampler.hpp"
#include "symbols/code_map.hpp"
#include "symbols/perf_regs.hpp"
#include "symbols/symbolizer.hpp"
#include "test_util.hpp"

using namespace mainboard;

namespace {

double share(const Profile& p, const std::string& function) {
  for (const auto& f : p.hot_functions(1000))
    if (f.function == function) return f.total_pct;
  return 0;
}

/// A frame of a sanitizer's own runtime (LeakSanitizer's scan at exit, the interceptors).
bool sanitizer_frame(const StackFrame& f) {
  for (const char* prefix :
       {"__lsan", "__asan", "__ubsan", "__tsan", "__sanitizer", "__interceptor", "___interceptor"})
    if (f.function.rfind(prefix, 0) == 0) return true;
  for (const char* lib : {"libasan", "libubsan", "libtsan", "liblsan"})
    if (f.module.find(lib) != std::string::npos) return true;
  return false;
}

/// The share (percent) of the program's own samples whose stack holds `function`, and how many
/// samples that is of. The program's own: under main or a thread's entry, and in no sanitizer
/// frame — the dynamic loader relocating a sanitizer runtime at start and LeakSanitizer's scan
/// at exit took a fifth of a short run's samples, which no program asked for.
std::pair<double, std::size_t> program_share(const Profile& p, const std::string& function) {
  std::size_t own = 0, with = 0;
  for (const auto& s : p.samples) {
    bool runtime = false, program = false, hit = false;
    for (auto f : p.stacks[s.stack]) {
      const auto& frame = p.frames[f];
      runtime = runtime || sanitizer_frame(frame);
      program = program || frame.function == "main" || frame.function == "start_thread";
      hit = hit || frame.function == function;
    }
    if (runtime || !program) continue;
    ++own;
    with += hit;
  }
  return {own ? 100.0 * static_cast<double>(with) / static_cast<double>(own) : 0.0, own};
}

/// Four standard deviations (in points) of a share near `pct` measured over `n` samples.
double four_sigma(double pct, std::size_t n) {
  double q = pct / 100.0;
  return 400.0 * std::sqrt(q * (1 - q) / static_cast<double>(std::max<std::size_t>(n, 1)));
}

std::size_t sampled_threads(const Profile& p) {
  std::vector<bool> seen(p.threads.size());
  for (const auto& s : p.samples)
    seen[s.thread] = true;
  return static_cast<std::size_t>(std::count(seen.begin(), seen.end(), true));
}

/// Frame pointers, as these tests' expectations of each stack were written for (the kernel's
/// walk, the same under a sanitizer); the tests of CFI unwinding ask for it, and the Python and
/// PyTorch tests run the default.
SampleOptions quick(double hz = 999) {
  SampleOptions o;
  o.hz = static_cast<std::uint32_t>(hz);
  o.call_graph = CallGraph::frame_pointers;
  return o;
}

/// Waits (up to 10 s) until process `pid` has `n` threads.
void wait_for_threads(pid_t pid, std::size_t n) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (symbols::thread_ids(pid).size() < n && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

/// A sample_target running in the background, killed and reaped at the end of the test.
struct Background {
  pid_t pid = -1;
  explicit Background(std::vector<std::string> args) {
    pid = ::fork();
    if (pid == 0) {
      std::vector<char*> argv;
      std::string program = MAINBOARD_SAMPLE_TARGET;
      argv.push_back(program.data());
      for (auto& a : args)
        argv.push_back(a.data());
      argv.push_back(nullptr);
      int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::execv(program.c_str(), argv.data());
      ::_exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // its threads are running
  }
  ~Background() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

}  // namespace

TEST(Sampling, RunFindsTheHotFunctionsOnBothThreads) {
  MAINBOARD_NATIVE_ONLY("to start the project's own arm64 programs");
  TempDir dir;
  auto o = quick();
  o.stdout_path = (dir.path() / "out.txt").string();
  auto r = Sampler::run({MAINBOARD_SAMPLE_TARGET, "hot", "0.8"}, o);
  EXPECT_EQ(r.exit_code, 3);  // the target's own status
  EXPECT_EQ(r.signal, 0);
  EXPECT_FALSE(r.timed_out);
  std::ifstream out(o.stdout_path);
  std::string line;
  std::getline(out, line);
  EXPECT_EQ(line, "sample_target done");  // its stdout, untouched
  const auto& p = r.profile;
  ASSERT_GE(p.samples.size(), 100u) << p.report();
  EXPECT_EQ(p.sample_hz, 999u);
  // Two busy threads, each with a fifth of the samples or more (the main thread catches some at
  // start and exit: more under a sanitizer on a loaded machine, whose leak check runs at exit).
  std::vector<std::size_t> per_thread(p.threads.size());
  for (const auto& s : p.samples)
    ++per_thread[s.thread];
  EXPECT_EQ(std::count_if(per_thread.begin(), per_thread.end(),
                          [&](std::size_t n) { return n * 5 > p.samples.size(); }),
            2)
      << p.report();
  // The two hot functions hold most samples, split ~70/30 between them. The split is taken
  // between the two, not over all samples: under a sanitizer its runtime's start and leak check
  // take a share of a short run that varies with the machine's load (a clean run saw 21 %).
  double a = share(p, "hot_a"), b = share(p, "hot_b");
  EXPECT_GT(a + b, 50.0) << p.report();
  EXPECT_NEAR(100.0 * a / (a + b), 70.0, 15.0) << p.report();
  // Names, modules, lines, and the inlined frame inside hot_a.
  bool inlined = false, located = false;
  for (const auto& f : p.frames) {
    if (f.function == "hot_a" && f.module == "sample_target" && f.line > 0 &&
        f.file.find("sample_target.cpp") != std::string::npos)
      located = true;
    if (f.inlined && f.function.find("inner_step") != std::string::npos) inlined = true;
  }
  EXPECT_TRUE(located) << p.report();
  EXPECT_TRUE(inlined) << p.report();
  // The stacks go through the thread entry to hot_a.
  auto stacks = p.hot_stacks(1);
  ASSERT_FALSE(stacks.empty());
  EXPECT_NE(std::find(stacks[0].frames.begin(), stacks[0].frames.end(), "hot_a"),
            stacks[0].frames.end());
  EXPECT_TRUE(p.machine.has_value());
}

TEST(Sampling, ACrashStillLeavesAProfile) {
  MAINBOARD_NATIVE_ONLY("to start the project's own arm64 programs");
  auto r = Sampler::run({MAINBOARD_SAMPLE_TARGET, "crash"}, quick());
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.exit_code, 128 + SIGSEGV);
  EXPECT_GT(r.profile.samples.size(), 10u);
  EXPECT_GT(share(r.profile, "hot_a"), 50.0);
}

TEST(Sampling, TheTimeoutEndsATargetThatNeverExitsAndKeepsTheProfile) {
  MAINBOARD_NATIVE_ONLY("to start the project's own arm64 programs");
  auto o = quick();
  o.timeout_s = 0.5;
  auto start = std::chrono::steady_clock::now();
  auto r = Sampler::run({MAINBOARD_SAMPLE_TARGET, "forever"}, o);
  auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_LT(took, 5.0);
  EXPECT_GT(r.profile.samples.size(), 10u);
  EXPECT_TRUE(
      std::any_of(r.profile.unavailable.begin(), r.profile.unavailable.end(),
                  [](const std::string& u) { return u.find("timeout") != std::string::npos; }));
  EXPECT_NE(::kill(static_cast<pid_t>(r.profile.pid), 0), 0);  // gone, reaped
}

TEST(Sampling, ChildProcessesAreSampledUnlessAskedNotTo) {
  MAINBOARD_NATIVE_ONLY("to start the project's own arm64 programs");
  auto r = Sampler::run({MAINBOARD_SAMPLE_TARGET, "fork", "0.5"}, quick());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_GT(share(r.profile, "hot_c"), 20.0) << r.profile.report();
  EXPECT_GT(share(r.profile, "hot_a"), 20.0);
  auto o = quick();
  o.children = false;
  auto own = Sampler::run({MAINBOARD_SAMPLE_TARGET, "fork", "0.5"}, o);
  EXPECT_EQ(share(own.profile, "hot_c"), 0.0) << own.profile.report();
  // Nearly all of the parent's own time is hot_a (the rest: start-up, fork and exit); a
  // sanitizer's leak scan at exit is its runtime's, not the program's. The bound follows the
  // number of samples: 90 % less four standard deviations of a share drawn from that many.
  auto [hot_a, n] = program_share(own.profile, "hot_a");
  ASSERT_GT(n, 50u) << own.profile.report();
  EXPECT_GT(hot_a, 90.0 - four_sigma(90.0, n)) << n << " samples\n" << own.profile.report();
}

TEST(Sampling, SpansOfATargetThatLinksTheLibraryJoinTheProfile) {
  MAINBOARD_NATIVE_ONLY("to start the project's own arm64 programs");
  auto r = Sampler::run({MAINBOARD_SAMPLE_TARGET, "spans", "0.4"}, quick());
  EXPECT_EQ(r.exit_code, 3);
  const auto& p = r.profile;
  const SpanStat* a = nullptr;
  for (const auto& s : p.span_stats)
    if (s.path == "work/a") a = &s;
  ASSERT_NE(a, nullptr) << p.report();
  EXPECT_EQ(a->calls, 2u);  // one per thread
  EXPECT_NEAR(static_cast<double>(a->total_ns) / 2e9, 0.7 * 0.4, 0.1);
  EXPECT_GT(p.samples.size(), 50u);
  // The span threads and the sampled threads are the same threads, joined by tid.
  EXPECT_EQ(p.threads.size(), sampled_threads(p)) << p.report();
}

TEST(Sampling, ProgramsThatCannotStartAreErrors) {
  // An argument with a NUL byte would reach the program cut short ("a\0b" as "a").
  for (auto run : {+[](const std::vector<std::string>& argv) { (void)Sampler::run(argv); },
                   +[](const std::vector<std::string>& argv) {
                     (void)measure_command(Machine::instance(), argv);
                   }}) {
    try {
      run({"/bin/true", std::string("a\0b", 3)});
      ADD_FAILURE() << "ran with a NUL byte in an argument";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("argument 1 of the command holds a NUL byte"),
                std::string::npos)
          << e.what();
    }
  }
  try {
    Sampler::run({"no-such-program-anywhere"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not found on PATH"), std::string::npos) << e.what();
  }
  try {
    Sampler::run({"/etc/hostname"});  // not executable
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot run /etc/hostname"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Sampler::run({}), Error);
}

namespace {
double thread_cpu_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}
}  // namespace

extern "C" __attribute__((noinline)) double self_sampled_spin(double cpu_s) {
  volatile double x = 1;
  for (double until = thread_cpu_s() + cpu_s; thread_cpu_s() < until;)
    for (int i = 0; i < 10000; ++i)
      x = x * 1.0000001 + 1e-9;
  return x;
}

// The process samples itself (profile(fn)'s sampler): the function that spent this thread's CPU
// time leads, and the sampler's own thread is not in the profile. Counted against the CPU time
// the thread had: 0.3 s at 499 Hz asks for about 150 samples; a tenth of that is required.
TEST(Sampling, ASelfSamplerFindsTheFunctionThisProcessRuns) {
  SampleOptions o;
  o.hz = 499;
  o.python = false;
  std::optional<SelfSampler> sampler;
  try {
    sampler.emplace(o);
  } catch (const Error& e) {
    GTEST_SKIP() << "no perf_event here: " << e.what();
  }
  self_sampled_spin(0.3);
  auto p = sampler->stop();
  ASSERT_GE(p.samples.size(), 15u) << p.report();
  EXPECT_EQ(p.pid, ::getpid());
  auto hot = p.hot_functions(1);
  ASSERT_FALSE(hot.empty());
  EXPECT_EQ(hot[0].function, "self_sampled_spin") << p.report();
  EXPECT_GT(hot[0].self_pct, 50.0) << p.report();
  // Stopped once; a second stop gives nothing.
  EXPECT_TRUE(sampler->stop().samples.empty());
}

// On-CPU samples follow the CPU time the target had, not the wall clock: beside other work it
// had 6 samples' worth in a 0.5 s window. The window is sized from its measured rate for about
// 300 samples (at most 15 s), and the samples are held to half of what its CPU time asks for.
TEST(Sampling, AttachSamplesARunningProcess) {
  MAINBOARD_NATIVE_ONLY("perf events on another process");
  Background target({"hot", "60"});  // in hot_a for 42 s; killed at the end
  auto o = quick(499);
  o.duration_s = attach_window(target.pid, o.hz, 300, 0.5, 15);
  double cpu_before = cpu_seconds(target.pid);
  auto p = Sampler::attach(target.pid, o);
  // The CPU reads bracket the attach's set-up and tear-down too (long under ASan), while samples
  // come only inside the window: its two busy threads bound what the window can hold. Samples
  // the kernel took and the reader could not keep are counted, and said (lost_samples).
  double cpu = std::min(cpu_seconds(target.pid) - cpu_before, 2 * o.duration_s);
  double expected = cpu * o.hz;
  auto taken = static_cast<double>(p.samples.size() + p.lost_samples);
  RecordProperty("samples", std::to_string(p.samples.size()));
  RecordProperty("lost", std::to_string(p.lost_samples));
  RecordProperty("expected", std::to_string(expected));
  RecordProperty("window_s", std::to_string(o.duration_s));
  EXPECT_GE(taken, expected / 2) << p.samples.size() << " samples and " << p.lost_samples
                                 << " lost, " << expected << " expected from its CPU time in "
                                 << o.duration_s << " s";
  ASSERT_GT(p.samples.size(), 25u) << "too few to judge which functions ran";
  EXPECT_EQ(sampled_threads(p), 2u);
  EXPECT_GT(share(p, "hot_a"), 50.0) << p.report();
  EXPECT_EQ(::kill(target.pid, 0), 0);  // still running: attach does not disturb it
  EXPECT_THROW(Sampler::attach(999999999, o), Error);
}

TEST(Sampling, DumpShowsEveryThreadAndLetsTheProcessGo) {
  MAINBOARD_NATIVE_ONLY("ptrace on another process");
  Background target({"hot", "3"});
  wait_for_threads(target.pid, 3);  // a loaded machine (ASan, two tests at once) starts them late
  auto d = Sampler::dump(target.pid);
  EXPECT_EQ(d.pid, target.pid);
  ASSERT_EQ(d.threads.size(), 3u);  // main (joining) and two workers
  int in_hot = 0;
  for (const auto& t : d.threads) {
    EXPECT_EQ(t.name, "sample_target");
    for (const auto& f : t.frames)
      if (f.function == "hot_a" || f.function == "hot_b") ++in_hot;
  }
  EXPECT_EQ(in_hot, 2) << d.text();
  EXPECT_NE(d.text().find("TID "), std::string::npos);
  // Every native frame has its address, as eu-stack shows it; hot_a's lies in the program's
  // executable mapping.
  auto maps =
      symbols::parse_maps(symbols::read_proc_file("/proc/" + std::to_string(target.pid) + "/maps"));
  for (const auto& t : d.threads) {
    ASSERT_EQ(t.addresses.size(), t.frames.size());
    for (std::size_t i = 0; i < t.frames.size(); ++i) {
      if (t.frames[i].function != "hot_a") continue;
      auto a = t.addresses[i];
      bool inside = std::any_of(maps.begin(), maps.end(), [&](const symbols::Mapping& m) {
        return a >= m.start && a < m.end && m.path.find("sample_target") != std::string::npos;
      });
      EXPECT_TRUE(inside) << std::hex << a;
      EXPECT_NE(d.text().find(fmt::format("0x{:016x} hot_a - sample_target", a)), std::string::npos)
          << d.text();
    }
  }
  nlohmann::json j = d;
  EXPECT_EQ(j.get<StackDump>().threads[0].addresses, d.threads[0].addresses);
  j["threads"][0]["addresses"].push_back(1);
  EXPECT_THROW(j.get<StackDump>(), Error);  // one address per frame, or none
  expect_let_go(target.pid);
  EXPECT_THROW(Sampler::dump(999999999), Error);
}

// Each of 400 threads is stopped, read and let go once, and each shows where it sleeps.
TEST(Sampling, ADumpOfManyThreadsShowsEachOnceAndLetsThemGo) {
  MAINBOARD_NATIVE_ONLY("ptrace on another process");
  Background target({"threads", "400"});
  wait_for_threads(target.pid, 401);
  auto d = Sampler::dump(target.pid);
  ASSERT_EQ(d.threads.size(), 401u);
  std::set<std::int64_t> tids;
  std::size_t parked = 0;
  for (const auto& t : d.threads) {
    tids.insert(t.tid);
    parked += std::any_of(t.frames.begin(), t.frames.end(), [](const StackFrame& f) {
      return f.function.find("parked()") != std::string::npos;
    });
  }
  EXPECT_EQ(tids.size(), 401u);
  EXPECT_EQ(parked, 401u) << d.text().substr(0, 600);
  expect_let_go(target.pid);
}

// A process that exits while it is sampled becomes a zombie until its parent reaps it: the
// attach ends there (it waited its whole duration, forever with an infinite one).
TEST(Sampling, AnAttachEndsWhenTheProcessHasExitedEvenUnreaped) {
  MAINBOARD_NATIVE_ONLY("perf events on another process");
  Background target({"hot", "0.5"});  // exits after 0.5 s; reaped only at the end of the test
  SampleOptions o;
  o.duration_s = std::numeric_limits<double>::infinity();
  auto start = std::chrono::steady_clock::now();
  try {
    Sampler::attach(target.pid, o);
  } catch (const Error& e) {
    GTEST_SKIP() << "perf events refused here: " << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_EQ(symbols::thread_state(target.pid, target.pid), 'Z');
  try {
    Sampler::attach(target.pid, o);
    ADD_FAILURE() << "attached to a zombie";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has exited"), std::string::npos) << e.what();
  }
  o.duration_s = std::nan("");
  EXPECT_THROW(Sampler::attach(::getpid(), o), Error);
}

TEST(Sampling, NodeJitFramesAreNamedFromThePerfMap) {
  MAINBOARD_NATIVE_ONLY("perf events on another process");
  if (::access("/usr/bin/node", X_OK) != 0) GTEST_SKIP() << "Node.js is not installed";
  TempDir dir;
  auto script = dir.write("hot.js", R"(
function hotLoop(n) { let x = 0; for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003; return x; }
const end = Date.now() + 800; let s = 0;
while (Date.now() < end) s += hotLoop(100000);
console.log(s > 0 ? "ok" : "no");
)");
  auto o = quick(499);
  o.stdout_path = (dir.path() / "out.txt").string();
  // V8 also writes a log with the perf map: into the temporary directory, not the current one.
  auto r = Sampler::run({"/usr/bin/node", "--perf-basic-prof", "--no-logfile-per-isolate",
                         "--logfile=" + (dir.path() / "v8.log").string(), script.string()},
                        o);
  ASSERT_EQ(r.exit_code, 0);
  bool jit = false;
  for (const auto& f : r.profile.hot_functions(50))
    if (f.module == "[jit]" && f.function.find("hotLoop") != std::string::npos && f.total_pct > 20)
      jit = true;
  EXPECT_TRUE(jit) << r.profile.report();
  ::unlink(("/tmp/perf-" + std::to_string(r.profile.pid) + ".map").c_str());
}

TEST(Sampling, PermissionErrorsSayWhichSettingRefused) {
  auto text = sampling::explain_perf_error(EACCES, 42);
  EXPECT_NE(text.find("kernel.perf_event_paranoid"), std::string::npos) << text;
  EXPECT_NE(text.find("sysctl kernel.perf_event_paranoid=1"), std::string::npos);
  EXPECT_NE(sampling::explain_perf_error(ESRCH, 42).find("does not exist"), std::string::npos);
  EXPECT_NE(sampling::explain_perf_error(EMFILE, 42).find("ulimit -n"), std::string::npos);
}

// --- the parsers and the symbolizer on their own ----------------------------------------------

TEST(Symbolizer, ParsesMapsAndSkipsGarbage) {
  auto maps = symbols::parse_maps(
      "55d0c0000000-55d0c0001000 r--p 00000000 08:01 131 /usr/bin/true\n"
      "55d0c0001000-55d0c0005000 r-xp 00001000 08:01 131 /usr/bin/true\n"
      "7ffd1000-7ffd3000 r-xp 00000000 00:00 0                          [vdso]\n"
      "garbage line\n"
      "ffff-0000 r-xp 00000000 00:00 0 /backwards\n"
      "1000-2000 rx 0 0 0 /bad-perms\n"
      "\n");
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(maps[1].start, 0x55d0c0001000u);
  EXPECT_EQ(maps[1].offset, 0x1000u);
  EXPECT_EQ(maps[1].path, "/usr/bin/true");
  EXPECT_EQ(maps[2].path, "[vdso]");
  EXPECT_TRUE(symbols::parse_maps("").empty());
  EXPECT_TRUE(symbols::parse_maps(std::string(100000, 'x')).empty());
}

TEST(Symbolizer, ParsesPerfMapsAndSkipsGarbage) {
  auto jit = symbols::parse_perf_map(
      "3a2b0000 40 LazyCompile:*hotLoop /tmp/hot.js:2\n"
      "1000 10 Builtin:ArgumentsAdaptorTrampoline\n"
      "zzzz 10 bad\n"
      "2000 0 empty\n"
      "3000\n");
  ASSERT_EQ(jit.size(), 2u);
  EXPECT_EQ(jit[0].start, 0x1000u);  // sorted
  EXPECT_EQ(jit[1].name, "LazyCompile:*hotLoop /tmp/hot.js:2");
  symbols::Symbolizer s;
  s.set_jit_symbols(jit);
  EXPECT_EQ(s.symbolize(0x3a2b0010, false).front().function, "LazyCompile:*hotLoop /tmp/hot.js:2");
  EXPECT_EQ(s.symbolize(0x3a2b0010, false).front().module, "[jit]");
  EXPECT_EQ(s.symbolize(0x3a2b0040, false).front().module, "[unknown]");  // just past the end
}

extern "C" __attribute__((noinline)) int symbolizer_probe_function(int x) {
  return x * 3 + 1;
}

TEST(Symbolizer, NamesAFunctionOfThisProcess) {
  std::ifstream in("/proc/self/maps");
  std::stringstream text;
  text << in.rdbuf();
  symbols::Symbolizer s;
  s.set_mappings(symbols::parse_maps(text.str()));
  auto address = reinterpret_cast<std::uint64_t>(&symbolizer_probe_function);
  const auto& frames = s.symbolize(address + 2, false);
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.back().function, "symbolizer_probe_function");
  EXPECT_EQ(frames.back().module, "mainboard_tests");
  EXPECT_NE(frames.back().file.find("sampling_test.cpp"), std::string::npos);
  // An address nothing maps.
  EXPECT_EQ(s.symbolize(0x10, false).front().module, "[unknown]");
}

// With DEBUGINFOD_URLS set (several distributions set it for every login), elfutils' standard
// search asks a debuginfod server for each module without local debug information: a server that
// did not answer held a 0.1-second profile for minutes. The profiler looks on this machine only,
// unless MAINBOARD_DEBUGINFOD=1. The server here counts connections and closes each at once:
// whether anyone connected is the evidence, not a time.
TEST(Symbolizer, NamingFramesAsksNoDebuginfodServerUnlessAllowed) {
  // Without libdebuginfod nothing could ask a server, and "no connection" would prove nothing.
  void* lib = ::dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) GTEST_SKIP() << "no libdebuginfod here: " << ::dlerror();
  int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(server, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ASSERT_EQ(::bind(server, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(server, 16), 0);
  ASSERT_EQ(::getsockname(server, reinterpret_cast<sockaddr*>(&address), &length), 0);
  std::atomic<int> connections{0};
  std::thread serve([&] {
    for (int c; (c = ::accept4(server, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) {
      ++connections;
      ::close(c);
    }
  });
  TempDir cache;
  ScopedEnv urls("DEBUGINFOD_URLS", fmt::format("http://127.0.0.1:{}", ntohs(address.sin_port)));
  ScopedEnv where("DEBUGINFOD_CACHE_PATH", cache.path().string());  // no remembered misses
  // /usr/bin/true: a build id, no .symtab, no debug file installed.
  auto name_a_frame = [] {
    symbols::Symbolizer s;
    s.set_mappings(
        symbols::parse_maps("7f0000000000-7f0000100000 r-xp 00000000 08:01 131 /usr/bin/true\n"));
    return s.symbolize(0x7f0000002100, false).front().module;
  };
  EXPECT_EQ(name_a_frame(), "true");
  EXPECT_EQ(connections.load(), 0) << "a debuginfod server was asked";
  // The control: with MAINBOARD_DEBUGINFOD=1 (elfutils' own search) the same naming does reach
  // the server.
  {
    ScopedEnv allow("MAINBOARD_DEBUGINFOD", "1");
    name_a_frame();
    EXPECT_GT(connections.load(), 0) << "MAINBOARD_DEBUGINFOD=1 did not reach the server";
  }
  ::dlclose(lib);
  ::shutdown(server, SHUT_RDWR);
  serve.join();
  ::close(server);
}

namespace {

/// A binutils program run on the test's files (nm, objcopy, strip, xz).
CommandResult run_tool(std::vector<std::string> argv) {
  Command c;
  c.argv = std::move(argv);
  c.timeout = std::chrono::seconds(60);
  return LocalRunner("/usr/bin:/bin").run(c);
}

/// Where `function` is in `binary` (nm's address; 0 when nm cannot say).
std::uint64_t address_in(const std::string& binary, const std::string& function) {
  auto symbols = run_tool({"nm", "--defined-only", binary});
  std::uint64_t address = 0;
  for (auto line : core::split_lines(symbols.out)) {
    auto f = core::split_ws(line);
    if (f.size() == 3 && f[1] == "T" && f[2] == function)
      address = std::stoull(std::string(f[0]), nullptr, 16);
  }
  return symbols.ok() ? address : 0;
}

/// The function the symbolizer names at `address` (+2) of `file`, mapped whole at 0x400000.
std::string name_at(const std::string& file, std::uint64_t address) {
  symbols::Symbolizer s;
  symbols::Mapping m;
  m.start = 0x400000;
  m.end = m.start + std::filesystem::file_size(file);
  m.offset = 0;
  m.inode = 1;
  m.path = file;
  s.set_mappings({m});
  return s.symbolize(m.start + address + 2, false).back().function;
}

}  // namespace

// A binary stripped of its .symtab can keep the names of its functions in a MiniDebugInfo
// section (.gnu_debugdata: an xz-compressed ELF with the symbols .dynsym lacks, as Fedora ships
// its binaries). The symbolizer names them from there; the same binary without the section
// shows that the name came from it.
TEST(Symbolizer, NamesFunctionsFromMiniDebugInfo) {
  TempDir dir;
  const std::string original = MAINBOARD_SAMPLE_TARGET_NOFP;
  const std::uint64_t address = address_in(original, "fixed_work");
  if (address == 0) GTEST_SKIP() << "nm cannot read this build's target";
  const auto keep = (dir.path() / "keep").string(), mini = (dir.path() / "mini").string(),
             stripped = (dir.path() / "stripped").string(),
             with = (dir.path() / "with-minidebuginfo").string();
  std::ofstream(keep) << "fixed_work\nhot_a\n";
  for (auto step : std::vector<std::vector<std::string>>{
           {"objcopy", "--strip-all", "--remove-section", ".comment", "--keep-symbols=" + keep,
            original, mini},
           {"xz", "-f", mini},
           {"strip", "--strip-all", "-o", stripped, original},
           {"objcopy", "--add-section", ".gnu_debugdata=" + mini + ".xz", stripped, with}}) {
    auto r = run_tool(step);
    if (!r.ok()) GTEST_SKIP() << step[0] << " cannot make MiniDebugInfo here: " << r.err;
  }
  EXPECT_EQ(name_at(with, address), "fixed_work");
  EXPECT_NE(name_at(stripped, address), "fixed_work");
}

// A separate debug file found by the name the binary's .gnu_debuglink gives, beside it, in .debug/
// beside it, or under /usr/lib/debug (no build-id link points at it), checked by build id: the
// search that replaced elfutils' (which would end by asking debuginfod servers).
TEST(Symbolizer, FindsADebugFileByItsDebuglinkNameAndBuildId) {
  TempDir dir;
  const std::string original = MAINBOARD_SAMPLE_TARGET_NOFP;
  const std::uint64_t address = address_in(original, "fixed_work");
  if (address == 0) GTEST_SKIP() << "nm cannot read this build's target";
  std::filesystem::create_directories(dir.path() / "bin" / ".debug");
  const auto debug = (dir.path() / "bin" / ".debug" / "target.debug").string(),
             stripped = (dir.path() / "bin" / "target").string(),
             other = (dir.path() / "other.debug").string();
  for (auto step : std::vector<std::vector<std::string>>{
           {"objcopy", "--only-keep-debug", original, debug},
           {"strip", "--strip-all", "-o", stripped, original},
           {"objcopy", "--add-gnu-debuglink=" + debug, stripped}}) {
    auto r = run_tool(step);
    if (!r.ok()) GTEST_SKIP() << step[0] << " cannot make a debug link here: " << r.err;
  }
  EXPECT_EQ(name_at(stripped, address), "fixed_work");
  // A file of that name with another build id is not it.
  auto made = run_tool({"objcopy", "--only-keep-debug", MAINBOARD_SAMPLE_TARGET, other});
  ASSERT_TRUE(made.ok()) << made.err;
  std::filesystem::rename(other, debug);
  EXPECT_NE(name_at(stripped, address), "fixed_work");
}

namespace {

/// What perf samples for DWARF unwinding, taken here by hand: this architecture's registers in
/// perf's order (the program counter, stack and frame pointers, the link register on arm64) and
/// a copy of the stack above the stack pointer. Taken and copied inside the same frame, so the
/// copy holds every caller's frame as it is at that program counter.
struct CapturedStack {
  std::vector<std::uint64_t> regs;
  std::vector<unsigned char> stack;
};

/// Byte by byte, as the kernel copies it: other frames' sanitizer redzones are part of a stack.
__attribute__((no_sanitize("address"))) void copy_stack(std::uint64_t sp, std::size_t n,
                                                        std::vector<unsigned char>& out) {
  out.resize(n);
  const volatile unsigned char* from = reinterpret_cast<const unsigned char*>(sp);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = from[i];
}

__attribute__((noinline)) CapturedStack unwind_capture_here() {
  CapturedStack c;
  const auto* layout = symbols::perf_regs();
  if (!layout) return c;
  c.regs.assign(layout->count, 0);
  std::uint64_t pc = 0, sp = 0, fp = 0;
#if defined(__x86_64__)
  asm volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(pc), "=r"(sp), "=r"(fp));
  c.regs[6] = fp;  // BP
#elif defined(__aarch64__)
  std::uint64_t lr = 0;
  asm volatile("adr %0, .\n\tmov %1, sp\n\tmov %2, x29\n\tmov %3, x30"
               : "=r"(pc), "=r"(sp), "=r"(fp), "=r"(lr));
  c.regs[29] = fp;
  c.regs[30] = lr;
#endif
  c.regs[layout->sp] = sp;
  c.regs[layout->pc] = pc;
  // As much of the stack as perf would copy, within its mapping.
  std::ifstream in("/proc/self/maps");
  std::stringstream text;
  text << in.rdbuf();
  for (const auto& m : symbols::parse_maps(text.str()))
    if (sp >= m.start && sp < m.end)
      copy_stack(sp, std::min<std::uint64_t>(16384, m.end - sp), c.stack);
  return c;
}

__attribute__((noinline)) CapturedStack unwind_level2() {
  auto c = unwind_capture_here();
  asm volatile("");  // not a tail call: this frame stays on the stack
  return c;
}

__attribute__((noinline)) CapturedStack unwind_level1() {
  auto c = unwind_level2();
  asm volatile("");
  return c;
}

}  // namespace

TEST(Symbolizer, UnwindsARegisterSetAndStackCopyWithTheModulesCfi) {
  if (!symbols::perf_regs()) GTEST_SKIP() << "no DWARF unwinding of perf samples here";
  auto c = unwind_level1();
  ASSERT_FALSE(c.stack.empty());
  std::ifstream in("/proc/self/maps");
  std::stringstream text;
  text << in.rdbuf();
  symbols::Symbolizer s;
  s.set_mappings(symbols::parse_maps(text.str()));
  auto pcs = s.unwind(static_cast<std::int32_t>(::gettid()), c.regs, c.stack);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < pcs.size(); ++i)
    names.push_back(s.symbolize(pcs[i], i > 0).back().function);
  ASSERT_GE(names.size(), 4u) << ::testing::PrintToString(names);
  EXPECT_NE(names[0].find("unwind_capture_here"), std::string::npos) << names[0];
  EXPECT_NE(names[1].find("unwind_level2"), std::string::npos) << names[1];
  EXPECT_NE(names[2].find("unwind_level1"), std::string::npos) << names[2];
  EXPECT_NE(names[3].find("UnwindsARegisterSetAndStackCopy"), std::string::npos) << names[3];
  // A register set cut short, or no stack: nothing, not a crash.
  auto cut = c.regs;
  cut.pop_back();
  EXPECT_TRUE(s.unwind(static_cast<std::int32_t>(::gettid()), cut, c.stack).empty());
  EXPECT_LE(s.unwind(static_cast<std::int32_t>(::gettid()), c.regs, {}).size(), 1u);
}

TEST(Sampling, RingBuffersFitAnOrdinaryUsersLockLimitAtAnyPageSize) {
  // 4 KiB pages: 128 data pages with dwarf, 64 without, as perf itself sizes them.
  EXPECT_EQ(sampling::ring_pages(512 << 10, 4096), 128u);
  EXPECT_EQ(sampling::ring_pages(256 << 10, 4096), 64u);
  // 64 KiB pages (Grace, Ampere kernels): 8 pages and the header would pass 516 KiB.
  EXPECT_EQ(sampling::ring_pages(512 << 10, 65536), 4u);
  EXPECT_EQ(sampling::ring_pages(256 << 10, 65536), 4u);
  EXPECT_EQ(sampling::ring_pages(1 << 30, 4096), 128u);
  EXPECT_EQ(sampling::ring_pages(0, 65536), 1u);
  EXPECT_EQ(sampling::ring_pages(100 << 10, 4096), 32u);  // rounded up to a power of two
}

// --- samples in the Profile ---------------------------------------------------------------------

namespace {

Profile sampled() {
  Profile p;
  p.pid = 7;
  p.sample_hz = 100;
  p.threads = {{0, 70, "main"}, {1, 71, "worker"}};
  p.frames = {{"main", "app", "app.c", 10, false},
              {"compute", "app", "app.c", 20, false},
              {"kernel_loop", "app", "app.c", 30, true},
              {"io_wait", "libc.so.6", "", 0, false}};
  p.stacks = {{2, 1, 0}, {3, 0}, {1, 1, 0}};  // leaf first; the last one recursive
  for (int i = 0; i < 6; ++i)
    p.samples.push_back({i * 10'000'000, 0, 0});
  for (int i = 0; i < 3; ++i)
    p.samples.push_back({i * 10'000'000, 1, 1});
  p.samples.push_back({95'000'000, 1, 2});
  std::sort(p.samples.begin(), p.samples.end(), [](auto& a, auto& b) { return a.t_ns < b.t_ns; });
  p.end_ns = 100'000'000;
  return p;
}

}  // namespace

TEST(Samples, HotFunctionsCountSelfAndTotalOnce) {
  auto p = sampled();
  auto hot = p.hot_functions();
  ASSERT_EQ(hot[0].function, "kernel_loop");
  EXPECT_EQ(hot[0].self_samples, 6u);
  EXPECT_DOUBLE_EQ(hot[0].self_pct, 60.0);
  auto compute =
      *std::find_if(hot.begin(), hot.end(), [](auto& f) { return f.function == "compute"; });
  EXPECT_EQ(compute.self_samples, 1u);   // the recursive stack's leaf
  EXPECT_EQ(compute.total_samples, 7u);  // 6 + 1: recursion counts once
  auto main = *std::find_if(hot.begin(), hot.end(), [](auto& f) { return f.function == "main"; });
  EXPECT_DOUBLE_EQ(main.total_pct, 100.0);
  auto stacks = p.hot_stacks(2);
  ASSERT_EQ(stacks.size(), 2u);
  EXPECT_EQ(stacks[0].frames,
            (std::vector<std::string>{"main", "compute", "kernel_loop"}));  // root first
  EXPECT_EQ(stacks[0].samples, 6u);
}

TEST(Samples, FoldedStacksForFlamegraph) {
  // Rooted at the command, so the lines of two runs (two pids, other thread ids) add up.
  auto p = sampled();
  p.command = "app";
  EXPECT_EQ(p.folded(),
            "app;main;compute;compute 1\n"
            "app;main;compute;kernel_loop 6\n"
            "app;main;io_wait 3\n");
  EXPECT_EQ(p.folded(true),
            "main-70;main;compute;kernel_loop 6\n"
            "worker-71;main;compute;compute 1\n"
            "worker-71;main;io_wait 3\n");
}

// A name that holds the format's separators (a frame read from a file or a process, a thread
// named by its program) cannot split a line or a stack: every line keeps its count.
// A sample taken as a thread is being made (in clone3) carries a user frame-pointer chain that
// loops: one address to the kernel's limit of 127. It became a 128-frame tower in every flame
// graph of a threaded program; the loop is cut to its first frame, while recursion that ends
// before the limit keeps every frame.
TEST(Samples, AFramePointerChainThatLoopsIsCutNotRecursion) {
  std::vector<std::uint64_t> loop{0x1000, 0x2000};
  loop.resize(127, 0x3000);
  sampling::trim_frame_pointer_loop(loop);
  EXPECT_EQ(loop, (std::vector<std::uint64_t>{0x1000, 0x2000, 0x3000}));
  std::vector<std::uint64_t> recursion(40, 0x4000);
  recursion.push_back(0x5000);
  auto kept = recursion;
  sampling::trim_frame_pointer_loop(kept);
  EXPECT_EQ(kept, recursion);
  std::vector<std::uint64_t> deep;  // a deep chain of distinct frames, to the limit
  for (std::uint64_t i = 0; i < 127; ++i)
    deep.push_back(0x6000 + i);
  kept = deep;
  sampling::trim_frame_pointer_loop(kept);
  EXPECT_EQ(kept, deep);
  std::vector<std::uint64_t> none;
  sampling::trim_frame_pointer_loop(none);
  EXPECT_TRUE(none.empty());
}

TEST(Samples, FoldedLinesSurviveNamesWithSeparatorsAndControlCharacters) {
  auto p = sampled();
  p.command = "my app;v2\n";
  p.frames[0].function = "main\nfake 99";
  p.frames[1].function = "a;b\r\x1e";
  p.threads[0].name = "main\tthread";
  EXPECT_EQ(p.folded(),
            "my_app:v2?;main?fake 99;a:b??;a:b?? 1\n"
            "my_app:v2?;main?fake 99;a:b??;kernel_loop 6\n"
            "my_app:v2?;main?fake 99;io_wait 3\n");
  auto per_thread = p.folded(true);
  for (const auto& line : core::split_lines(per_thread))
    EXPECT_NE(line.rfind(' '), std::string_view::npos) << line;
  EXPECT_EQ(per_thread.substr(0, 12), "main?thread-");
}

// Two lines of one function are two frames, so two stacks: read by name they are the same, and a
// report or flame graph that showed them twice would split the hottest path in two.
TEST(Samples, StacksThatReadTheSameAreOneRow) {
  auto p = sampled();
  p.frames.push_back({"kernel_loop", "app", "app.c", 31, true});
  p.stacks.push_back({4, 1, 0});
  p.samples.push_back({96'000'000, 0, 3});
  p.samples.push_back({97'000'000, 0, 3});
  auto top = p.hot_stacks(1);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].samples, 8u);
  EXPECT_EQ(top[0].frames, (std::vector<std::string>{"main", "compute", "kernel_loop"}));
  EXPECT_DOUBLE_EQ(top[0].pct, 100.0 * 8 / 12);
  EXPECT_EQ(p.hot_stacks(10).size(), 3u);
  EXPECT_EQ(p.folded(true),
            "main-70;main;compute;kernel_loop 8\n"
            "worker-71;main;compute;compute 1\n"
            "worker-71;main;io_wait 3\n");
}

TEST(Samples, SpeedscopeFileHasAProfilePerThreadOnOneTimeAxis) {
  auto p = sampled();
  auto j = nlohmann::json::parse(p.speedscope_json());
  EXPECT_EQ(j["$schema"], "https://www.speedscope.app/file-format-schema.json");
  ASSERT_EQ(j["shared"]["frames"].size(), 4u);
  EXPECT_EQ(j["shared"]["frames"][0]["name"], "main");
  EXPECT_EQ(j["shared"]["frames"][0]["file"], "app.c");
  EXPECT_EQ(j["shared"]["frames"][0]["line"], 10);
  ASSERT_EQ(j["profiles"].size(), 2u);
  // Both threads on the profile's own time axis, so idle time shows where it was.
  for (const auto& prof : j["profiles"]) {
    EXPECT_EQ(prof["type"], "evented");
    EXPECT_EQ(prof["unit"], "nanoseconds");
    EXPECT_EQ(prof["startValue"], j["profiles"][0]["startValue"]);
    EXPECT_EQ(prof["endValue"], j["profiles"][0]["endValue"]);
  }
  // Opens on the busiest thread: main, 6 samples against the worker's 4.
  EXPECT_EQ(j["activeProfileIndex"], 0);
  // The events nest: every frame closes in the reverse order it opened, at times that never go
  // back; the first sample opens main, compute, kernel_loop at the sample's time.
  const auto& events = j["profiles"][0]["events"];
  ASSERT_GE(events.size(), 6u);
  EXPECT_EQ(events[0]["type"], "O");
  EXPECT_EQ(events[0]["frame"], 0);
  EXPECT_EQ(events[1]["frame"], 1);
  EXPECT_EQ(events[2]["frame"], 2);
  EXPECT_EQ(events[0]["at"].get<std::int64_t>(), p.samples[0].t_ns - p.start_ns);
  for (const auto& prof : j["profiles"]) {
    std::vector<int> open;
    std::int64_t last = 0;
    for (const auto& e : prof["events"]) {
      EXPECT_GE(e["at"].get<std::int64_t>(), last);
      last = e["at"].get<std::int64_t>();
      if (e["type"] == "O") {
        open.push_back(e["frame"].get<int>());
      } else {
        ASSERT_FALSE(open.empty());
        EXPECT_EQ(open.back(), e["frame"].get<int>());
        open.pop_back();
      }
    }
    EXPECT_TRUE(open.empty());
    EXPECT_LE(last, prof["endValue"].get<std::int64_t>());
  }
}

TEST(Samples, RoundTripReportAndPerfetto) {
  auto p = sampled();
  TempDir dir;
  p.save(dir.path() / "s.json");
  EXPECT_EQ(Profile::load(dir.path() / "s.json"), p);
  auto text = p.report();
  EXPECT_NE(text.find("Stack samples (10 at 100 Hz on 2 threads)"), std::string::npos) << text;
  EXPECT_NE(text.find("kernel_loop"), std::string::npos);
  auto trace = nlohmann::json::parse(p.perfetto_json());
  int instants = 0;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "i" && e["cat"] == "sample") {
      ++instants;
      if (e["tid"] == 70) {
        EXPECT_EQ(e["name"], "kernel_loop");
      }
    }
  EXPECT_EQ(instants, 10);
  // The trace-event format's own stack frames and samples: each sample's frame chain, root
  // first, is its stack.
  ASSERT_EQ(trace["samples"].size(), 10u);
  for (std::size_t i = 0; i < p.samples.size(); ++i) {
    const auto& x = trace["samples"][i];
    EXPECT_EQ(x["tid"], p.threads[p.samples[i].thread].tid);
    std::vector<std::string> chain;
    for (auto sf = x["sf"].get<std::string>(); !sf.empty();) {
      const auto& f = trace["stackFrames"].at(sf);
      chain.insert(chain.begin(), f["name"].get<std::string>());
      sf = f.value("parent", "");
    }
    std::vector<std::string> want;
    for (auto frame : p.stacks[p.samples[i].stack])
      want.insert(want.begin(), p.frames[frame].function);
    EXPECT_EQ(chain, want) << "sample " << i;
  }
  // A CPU profile per thread (DevTools' flame chart), its samples in time order.
  int chunks = 0;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "P" && e["name"] == "ProfileChunk") {
      ++chunks;
      const auto& data = e["args"]["data"];
      EXPECT_EQ(data["cpuProfile"]["samples"].size(), data["timeDeltas"].size());
      for (const auto& d : data["timeDeltas"])
        EXPECT_GE(d.get<double>(), 0.0);
    }
  EXPECT_EQ(chunks, 2);
}

TEST(Samples, MalformedSamplesAreRefused) {
  nlohmann::json j = sampled();
  auto refuse = [](nlohmann::json doc, const std::string& what) {
    try {
      Profile::parse(doc.dump(), "s.json");
      FAIL() << "accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  auto bad = j;
  bad["samples"][0][2] = 99;
  refuse(bad, "names stack 99 of 3");
  bad = j;
  bad["samples"][0][1] = 5;
  refuse(bad, "names thread 5 of 2");
  bad = j;
  bad["stacks"][0][0] = 42;
  refuse(bad, "names frame 42 of 4");
  bad = j;
  bad["samples"][0] = "x";
  refuse(bad, "StackSample");
  // A version-2 profile (before samples) still loads, with none.
  nlohmann::json v2 = j;
  v2["schema_version"] = 2;
  for (const char* k : {"frames", "stacks", "samples", "sample_hz", "lost_samples"})
    v2.erase(k);
  auto old = Profile::parse(v2.dump());
  EXPECT_TRUE(old.samples.empty());
}

TEST(Samples, MergeJoinsThreadsByTidAndReindexes) {
  Profile spans;
  spans.pid = 7;
  spans.threads = {{0, 71, "worker"}};
  spans.paths = {"step"};
  spans.span_stats = {{"step", "step", 2, 100, 100, 40, 60}};
  spans.spans = {{0, 0, 10, 50}};
  auto p = sampled();
  p.merge(spans);
  EXPECT_EQ(p.threads.size(), 2u);   // tid 71 was there already
  EXPECT_EQ(p.spans[0].thread, 1u);  // the sampled worker's index
  EXPECT_EQ(p.span_stats[0].calls, 2u);
  auto again = spans;
  p.merge(again);  // the same region twice: statistics add up
  EXPECT_EQ(p.span_stats[0].calls, 4u);
  EXPECT_EQ(p.span_stats[0].min_ns, 40);
  EXPECT_EQ(p.spans.size(), 2u);
}

#ifdef MAINBOARD_INJECT

TEST(Sampling, GpuActivityOfALaunchedCudaProgramJoins) {
  MAINBOARD_NATIVE_ONLY("to start the project's own arm64 programs");
  // The stand-in CUDA program calls InitializeInjection itself, as the driver would.
  ::setenv("MAINBOARD_CUPTI_LIBRARY", MAINBOARD_FAKE_CUPTI, 1);
  ::setenv("MAINBOARD_INJECT_LIBRARY", MAINBOARD_INJECT, 1);
  auto o = quick();
  o.features = Feature::stacks | Feature::gpu_activity;
  TempDir dir;
  o.stdout_path = (dir.path() / "out.txt").string();
  auto r = Sampler::run({MAINBOARD_INJECT_TARGET, MAINBOARD_INJECT, MAINBOARD_FAKE_CUPTI}, o);
  ::unsetenv("MAINBOARD_CUPTI_LIBRARY");
  ::unsetenv("MAINBOARD_INJECT_LIBRARY");
  ASSERT_EQ(r.exit_code, 0);
  const auto& p = r.profile;
  ASSERT_EQ(p.activities.size(), 2u) << p.report();
  EXPECT_EQ(p.activity_names[p.activities[0].name], "stencil(float const*, float*, int)");
  EXPECT_GE(p.activities[0].start_ns, p.start_ns);
  EXPECT_LE(p.activities[1].end_ns, p.end_ns);
}

#endif  // MAINBOARD_INJECT

// --- auto-instrumentation ------------------------------------------------------------------------

#ifdef MAINBOARD_INSTRUMENTED

TEST(AutoInstrument, OwnFunctionsBecomeSpansAndOthersDoNot) {
  MAINBOARD_NATIVE_ONLY("to start the project's own arm64 programs");
  TempDir dir;
  auto out = dir.path() / "p.json";
  Command c;
  c.argv = {MAINBOARD_INSTRUMENTED, out.string()};
  c.timeout = std::chrono::seconds(30);
  auto r = LocalRunner("/usr/bin:/bin").run(c);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto p = Profile::load(out);
  auto find = [&](const std::string& path) -> const SpanStat* {
    for (const auto& s : p.span_stats)
      if (s.path == path) return &s;
    return nullptr;
  };
  std::string paths;
  for (const auto& s : p.span_stats)
    paths += s.path + " ";
  const auto* outer = find("(anonymous namespace)::outer_loop()");
  ASSERT_NE(outer, nullptr) << paths;
  EXPECT_EQ(outer->calls, 1u);  // the second call came after auto_instrument({})
  const auto* leaf =
      find("(anonymous namespace)::outer_loop()/(anonymous namespace)::leaf_step(int)");
  ASSERT_NE(leaf, nullptr) << paths;
  EXPECT_EQ(leaf->calls, 3u);
  EXPECT_GE(leaf->total_ns, 3 * 2'000'000);
  EXPECT_EQ(paths.find("dep_"), std::string::npos) << paths;  // another module: not recorded
  EXPECT_EQ(paths.find("@0x"), std::string::npos) << paths;   // every placeholder named
}

#endif  // MAINBOARD_INSTRUMENTED

TEST(Sampling, DwarfUnwindingRecoversStacksWithoutFramePointers) {
  MAINBOARD_NATIVE_ONLY("to start the project's own arm64 programs");
  auto o = quick(499);
  o.call_graph = CallGraph::dwarf;
  // Until 50 samples in hot_a: a run of 0.6 s, longer where the machine (or a sanitizer) gives
  // fewer.
  RunResult r;
  std::size_t in_hot = 0, whole = 0;
  for (double seconds = 0.6; seconds < 10; seconds *= 2) {
    r = Sampler::run({MAINBOARD_SAMPLE_TARGET_NOFP, "hot", std::to_string(seconds)}, o);
    ASSERT_EQ(r.exit_code, 3);
    // Samples in hot_a whose stack still reaches the thread's entry function.
    in_hot = whole = 0;
    for (const auto& s : r.profile.samples) {
      bool hot = false, worker = false;
      for (auto f : r.profile.stacks[s.stack]) {
        if (r.profile.frames[f].function == "hot_a") hot = true;
        if (r.profile.frames[f].function.find("worker(double, bool)") != std::string::npos)
          worker = true;
      }
      if (hot) {
        ++in_hot;
        if (worker) ++whole;
      }
    }
    if (in_hot > 50) break;
  }
  const auto& p = r.profile;
  ASSERT_GT(in_hot, 50u) << p.report();
  EXPECT_GT(static_cast<double>(whole) / static_cast<double>(in_hot), 0.9) << p.report();
#if !defined(__SANITIZE_ADDRESS__)
  // 16 KiB stack copies at this rate fill a ring buffer in about 60 ms: it must be read in time.
  // (Under ASan the sampler's own unwinding is several times slower and falls behind on a loaded
  // machine: that build checks the unwinding, not the rate.)
  EXPECT_LE(p.lost_samples * 20, p.samples.size()) << p.lost_samples << " lost";
#endif
}

// A loop that keeps a data address in rbp, in a program built without frame pointers or unwind
// tables: both walks read on through what rbp points at (small integers, or the start of hot_b,
// which follows no call). They end where they leave the code, in one "[unwind stopped]" frame,
// and the profile counts them per reason; nothing the stack held is named as a frame.
TEST(Sampling, AWalkThatLeavesTheProgramsCodeEndsThereAndSaysWhy) {
  MAINBOARD_NATIVE_ONLY("to start the project's own arm64 programs");
#if !defined(__x86_64__)
  GTEST_SKIP() << "the target's garbage chain is x86-64 code";
#endif
  for (auto graph : {CallGraph::dwarf, CallGraph::frame_pointers}) {
    auto o = quick(499);
    o.call_graph = graph;
    auto r = Sampler::run({MAINBOARD_SAMPLE_TARGET_BARE, "garbage", "0.5"}, o);
    ASSERT_EQ(r.exit_code, 0);
    const auto& p = r.profile;
    ASSERT_GT(p.samples.size(), 20u);
    std::size_t in_loop = 0, stopped = 0;
    for (const auto& s : p.samples) {
      const auto& stack = p.stacks[s.stack];
      for (auto f : stack) {
        EXPECT_NE(p.frames[f].module, "[unknown]") << p.frames[f].function;
        EXPECT_NE(p.frames[f].function, "hot_b") << "a return address after no call, named";
      }
      stopped += p.frames[stack.back()].function == "[unwind stopped]";
      if (p.frames[stack.front()].function != "garbage_fp") continue;
      ++in_loop;
      ASSERT_GE(stack.size(), 2u);
      EXPECT_EQ(p.frames[stack[1]].function, "[unwind stopped]");
      EXPECT_EQ(stack.size(), 2u);  // and nothing after it
    }
    EXPECT_GT(in_loop, p.samples.size() / 2);
    // Said once, with the count of each reason: the loop alternates the two chains.
    unsigned long cut = 0, of = 0, outside = 0, after = 0;
    for (const auto& u : p.unavailable)
      if (std::sscanf(u.c_str(),
                      "native stacks: %lu of %lu samples were cut where the walk left the "
                      "program's code (%lu at an address outside any code, %lu at a return "
                      "address that follows no call)",
                      &cut, &of, &outside, &after) == 4)
        break;
    EXPECT_EQ(cut, stopped) << ::testing::PrintToString(p.unavailable);
    EXPECT_EQ(of, p.samples.size());
    EXPECT_GT(outside, 0u);
    EXPECT_GT(after, 0u);
    EXPECT_EQ(outside + after, cut);
    auto folded = p.folded();
    EXPECT_EQ(folded.find(";0x"), std::string::npos) << folded;
  }
}

TEST(CodeMap, ACallIsRecognisedByTheBytesBeforeTheReturnAddress) {
#if defined(__x86_64__)
  auto call = [](std::vector<unsigned char> b) {
    return symbols::ends_with_call(b.data(), b.size());
  };
  EXPECT_TRUE(call({0x90, 0x90, 0x90, 0xE8, 0x10, 0x20, 0x30, 0x40}));   // call rel32
  EXPECT_TRUE(call({0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xFF, 0xD0}));   // call rax
  EXPECT_TRUE(call({0x90, 0x90, 0x90, 0x90, 0x90, 0x41, 0xFF, 0xD3}));   // call r11
  EXPECT_TRUE(call({0x90, 0x90, 0xFF, 0x15, 0x00, 0x10, 0x00, 0x00}));   // call [rip+d32]
  EXPECT_TRUE(call({0x90, 0x90, 0x90, 0x90, 0xFF, 0x54, 0x24, 0x08}));   // call [rsp+8]
  EXPECT_TRUE(call({0x90, 0x90, 0x90, 0x90, 0x90, 0xFF, 0x50, 0x18}));   // call [rax+0x18]
  EXPECT_TRUE(call({0x90, 0xFF, 0x94, 0xC8, 0x00, 0x01, 0x00, 0x00}));   // call [rax+rcx*8+d32]
  EXPECT_FALSE(call({0x66, 0x0F, 0x1F, 0x44, 0x00, 0x00, 0x90, 0xC3}));  // ret, then nops
  EXPECT_FALSE(call({0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05}));  // data
  EXPECT_FALSE(call({0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xFF, 0xE0}));  // jmp rax
  EXPECT_FALSE(call({0x90, 0x90, 0x90, 0x90, 0x90, 0xFF, 0x54, 0x24}));  // call cut short
  EXPECT_FALSE(call({}));
#elif defined(__aarch64__)
  auto call = [](std::uint32_t insn) {
    unsigned char b[8] = {};
    std::memcpy(b + 4, &insn, 4);
    return symbols::ends_with_call(b, sizeof b);
  };
  EXPECT_TRUE(call(0x94000010));   // bl
  EXPECT_TRUE(call(0xD63F0100));   // blr x8
  EXPECT_TRUE(call(0xD63F091F));   // blraaz x8
  EXPECT_TRUE(call(0xD73F0901));   // blraa x8, x1
  EXPECT_FALSE(call(0xD65F03C0));  // ret
  EXPECT_FALSE(call(0x14000010));  // b
  EXPECT_FALSE(call(0xD61F0100));  // br x8
  EXPECT_FALSE(call(0xD503201F));  // nop
#else
  GTEST_SKIP() << "x86-64 and arm64 encodings";
#endif
}

TEST(CodeMap, OnlyWhatIsExecutableInTheEndIsCode) {
  using symbols::Mapping;
  std::vector<Mapping> maps{
      {0x1000, 0x5000, 0, "r-xp", 1, "/lib/a.so"},
      {0x9000, 0xa000, 0, "r-xp", 0, "[vdso]"},
      {0x2000, 0x3000, 0, "rw-p", 0, ""},    // later mapped over part of a.so's code
      {0x20000, 0x21000, 0, "rwxp", 0, ""},  // a JIT's
  };
  symbols::CodeMap code(0, maps);
  EXPECT_TRUE(code.executable(0x1000));
  EXPECT_TRUE(code.executable(0x1fff));
  EXPECT_FALSE(code.executable(0x2000));
  EXPECT_FALSE(code.executable(0x2fff));
  EXPECT_TRUE(code.executable(0x3000));
  EXPECT_TRUE(code.executable(0x4fff));
  EXPECT_FALSE(code.executable(0x5000));
  EXPECT_TRUE(code.executable(0x9800));
  EXPECT_TRUE(code.executable(0x20010));
  EXPECT_FALSE(code.executable(0x5));
  // A walk: the leaf, two return addresses in code (their bytes cannot be read here: not held
  // against them), then one outside: cut there.
  std::vector<std::uint64_t> ips{0x1010, 0x3020, 0x9010, 0x2010, 0x1040};
  EXPECT_EQ(code.check(ips), symbols::WalkStop::outside_code);
  EXPECT_EQ(ips, (std::vector<std::uint64_t>{0x1010, 0x3020, 0x9010}));
  // A return address at the very start of a mapping follows nothing in it.
  ips = {0x1010, 0x3000};
  EXPECT_EQ(code.check(ips), symbols::WalkStop::outside_code);
  EXPECT_EQ(ips.size(), 1u);
  // A leaf is checked as itself, and a kernel leaf's user address is not a return address.
  ips = {0x1000};
  EXPECT_EQ(code.check(ips), symbols::WalkStop::none);
  ips = {sampling::kKernelAddress, 0x1000, 0x1050};
  EXPECT_EQ(code.check(ips, nullptr, sampling::kKernelAddress), symbols::WalkStop::none);
  EXPECT_EQ(ips.size(), 3u);
}

// A function after eight no-ops: its first byte follows no call, on either machine.
#if defined(__x86_64__) || defined(__aarch64__)
__asm__(
    ".text\n"
    ".p2align 4\n"
    "nop\nnop\nnop\nnop\nnop\nnop\nnop\nnop\n"
    ".globl mainboard_test_after_nops\n"
    "mainboard_test_after_nops:\n"
    "ret\n");
extern "C" void mainboard_test_after_nops();
#endif

TEST(CodeMap, AReturnAddressThatFollowsNoCallInThisProgramEndsTheWalk) {
  // This test's own code: the address right after a call it makes, and a function's first byte.
  std::vector<symbols::Mapping> maps =
      symbols::parse_maps(symbols::read_proc_file("/proc/self/maps"));
  symbols::CodeMap code(static_cast<std::int32_t>(::getpid()), maps);
  auto after = reinterpret_cast<std::uint64_t>(__builtin_return_address(0));
  EXPECT_TRUE(code.executable(after - 1));
  EXPECT_TRUE(code.after_call(after));
#if defined(__x86_64__) || defined(__aarch64__)
  auto start = reinterpret_cast<std::uint64_t>(&mainboard_test_after_nops);
  std::vector<std::uint64_t> ips{after, after, start};
  EXPECT_EQ(code.check(ips), symbols::WalkStop::not_after_call);
  EXPECT_EQ(ips.size(), 2u);
#endif
}

// Reading /dev/zero is nearly all kernel time (clearing the buffer). With kernel time sampled it
// shows as a "[kernel]" leaf above the user code that made the call; user-only, those samples are
// simply absent, and what is left is the little user time of the loop.
TEST(Sampling, KernelTimeShowsAboveTheCallerUnlessUserOnly) {
  MAINBOARD_NATIVE_ONLY("to start the project's own arm64 programs");
  // Of the samples in the kernel on behalf of main (not the loader's start-up page faults), the
  // share whose stack also holds `function`.
  auto under_kernel = [](const Profile& p, const std::string& function) {
    std::size_t kernel = 0, with = 0;
    for (const auto& s : p.samples) {
      const auto& st = p.stacks[s.stack];
      auto has = [&](const std::string& name) {
        return std::any_of(st.begin(), st.end(),
                           [&](std::uint32_t f) { return p.frames[f].function == name; });
      };
      if (st.empty() || p.frames[st[0]].function != "[kernel]" || !has("main")) continue;
      ++kernel;
      if (has(function)) ++with;
    }
    return kernel ? 100.0 * static_cast<double>(with) / static_cast<double>(kernel) : 0.0;
  };
  auto o = quick(499);
  auto p = Sampler::run({MAINBOARD_SAMPLE_TARGET, "syscalls", "0.4"}, o).profile;
  for (const auto& u : p.unavailable)
    if (u.find("kernel time: not sampled") != std::string::npos)
      GTEST_SKIP() << "kernel.perf_event_paranoid allows user time only here";
  ASSERT_GT(p.samples.size(), 50u) << p.report();
  // Nearly all of the program's own time is in the kernel (start-up and a sanitizer's runtime
  // left out): 85 % less four standard deviations of a share drawn from that many samples.
  auto [kernel_pct, n] = program_share(p, "[kernel]");
  EXPECT_GT(kernel_pct, 85.0 - four_sigma(85.0, n)) << n << " samples\n" << p.report();
  // Frame pointers: the system call's wrapper is named, its caller skipped (a leaf without a
  // frame of its own), as with any frame-pointer unwinder.
  EXPECT_GT(under_kernel(p, "read"), 90.0) << p.report();
  // CFI unwinding from the user registers at the system call recovers the caller too.
  o.call_graph = CallGraph::dwarf;
  auto dwarf = Sampler::run({MAINBOARD_SAMPLE_TARGET, "syscalls", "0.4"}, o).profile;
  EXPECT_GT(under_kernel(dwarf, "zero_reader"), 90.0) << dwarf.report();

  o.call_graph = CallGraph::frame_pointers;
  o.kernel = false;
  auto user = Sampler::run({MAINBOARD_SAMPLE_TARGET, "syscalls", "0.4"}, o).profile;
  EXPECT_EQ(share(user, "[kernel]"), 0.0) << user.report();
  EXPECT_LT(program_share(user, "main").second * 2, n) << user.report();
}

// Without stacks there is no sampler: the launcher still waits for the target and reports it.
TEST(Sampling, RunWithoutStacksStillWaitsForTheTarget) {
  MAINBOARD_NATIVE_ONLY("to start the project's own arm64 programs");
  auto o = quick();
  o.features = Feature::spans;
  auto r = Sampler::run({MAINBOARD_SAMPLE_TARGET, "spans", "0.2"}, o);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(r.profile.samples.empty());
  EXPECT_FALSE(r.profile.span_stats.empty()) << r.profile.report();
}

TEST(Sampling, MeasureDispatchesOnTheReach) {
  MAINBOARD_NATIVE_ONLY("to start the project's own arm64 programs");
  auto p = Sampler::measure(Reach::command({MAINBOARD_SAMPLE_TARGET, "hot", "0.2"}), quick());
  // The command's hot code, in its proportions (70:30). A short run under a sanitizer spends a
  // third of its samples loading and checking leaks, so the share itself is not asserted here.
  EXPECT_GT(share(p, "hot_a"), 20.0) << p.report();
  EXPECT_GT(share(p, "hot_a"), share(p, "hot_b")) << p.report();
  {
    Background target({"hot", "3"});
    auto o = quick(499);
    o.duration_s = 0.3;
    auto attached = Sampler::measure(Reach::process(target.pid), o);
    EXPECT_GT(attached.samples.size(), 20u);
  }
  try {
    Sampler::measure(Reach::here());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Profiler session"), std::string::npos) << e.what();
  }
}

TEST(Launch, MeterAndProfileRunStartTheSameProgramForOneName) {
  // Two programs named "which-one": one in the current directory (an empty PATH entry) and one
  // in a directory later on PATH. Both commands start the first, as a shell would.
  TempDir dir;
  auto here = dir.write("which-one", "#!/bin/sh\necho here > \"$1\"\n");
  auto later = dir.write("later/which-one", "#!/bin/sh\necho later > \"$1\"\n");
  ::chmod(here.c_str(), 0755);
  ::chmod(later.c_str(), 0755);
  const char* old = std::getenv("PATH");
  std::string saved = old ? old : "";
  auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  ::setenv("PATH", (":" + (dir.path() / "later").string() + ":/usr/bin:/bin").c_str(), 1);
  Machine::Options mo;
  mo.sysroot = fixture_host("vm-cgroup1-nodmi");
  Machine machine(mo);
  MeterOptions meter_options;
  meter_options.gpus = false;
  auto metered =
      measure_command(machine, {"which-one", (dir.path() / "meter.txt").string()}, meter_options);
  SampleOptions o;
  o.features = Feature::spans;
  auto run = Sampler::run({"which-one", (dir.path() / "run.txt").string()}, o);
  ::setenv("PATH", saved.c_str(), 1);
  std::filesystem::current_path(cwd);
  EXPECT_EQ(metered.exit_code, 0);
  EXPECT_EQ(run.exit_code, 0);
  std::ifstream meter_out(dir.path() / "meter.txt"), run_out(dir.path() / "run.txt");
  std::string a, b;
  std::getline(meter_out, a);
  std::getline(run_out, b);
  EXPECT_EQ(a, "here");
  EXPECT_EQ(b, "here");
}
