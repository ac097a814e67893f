// Python frames read from outside real interpreters: Debian's python3 and every pyenv CPython
// 3.9–3.13 present on the machine (a version that is absent is skipped, never failed).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "common/processes.hpp"
#include "core/text.hpp"
#include "mainboard/error.hpp"
#include "mainboard/json.hpp"
#include "mainboard/runner.hpp"
#include "mainboard/sampler.hpp"
#include "sampling/python_frames.hpp"
#include "sampling/python_layout.hpp"
#include "symbols/elf_symbols.hpp"
#include "symbols/symbolizer.hpp"
#include "test_util.hpp"

using namespace mainboard;
namespace fs = std::filesystem;

namespace {

const std::string kScripts = MAINBOARD_PYTHON_SCRIPTS;

constexpr sampling::PythonLayout kTestLayouts[] = {
#include "sampling/python_layouts.inc"
};

/// Each interpreter the tests run on: a name and its program, when present.
struct Interpreter {
  std::string name, program;
};

// What ctest shows after a test's name: the interpreter's program, not the struct's bytes.
[[maybe_unused]] void PrintTo(const Interpreter& i, std::ostream* os) {
  *os << i.program;
}

std::vector<Interpreter> interpreters() {
  std::vector<Interpreter> out{{"debian", "/usr/bin/python3"}};
  std::string root;
  if (const char* env = std::getenv("PYENV_ROOT"); env && *env)
    root = env;
  else if (const char* home = std::getenv("HOME"))
    root = std::string(home) + "/.pyenv";
  for (int minor = 9; minor <= 13; ++minor) {
    std::string version = "3." + std::to_string(minor);
    std::string found;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root + "/versions", ec)) {
      auto name = e.path().filename().string();
      if (name.rfind(version + ".", 0) == 0 && fs::exists(e.path() / "bin" / ("python" + version)))
        found = (e.path() / "bin" / ("python" + version)).string();
    }
    out.push_back({"pyenv_" + std::to_string(3) + "_" + std::to_string(minor), found});
  }
  return out;
}

/// Ends a child this test started and reaps it.
void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

/// A Python script running in the background, reaped at the end; waits for its first line.
struct Script {
  pid_t pid = -1;
  Script(const std::string& python, const std::string& script,
         const std::vector<std::string>& args = {}) {
    int out[2];
    if (::pipe(out) != 0) return;
    pid = ::fork();
    if (pid == 0) {
      ::dup2(out[1], 1);
      ::close(out[0]);
      std::vector<char*> argv{const_cast<char*>(python.c_str()), const_cast<char*>(script.c_str())};
      for (const auto& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(python.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    char c;
    while (::read(out[0], &c, 1) == 1 && c != '\n') {
    }
    ::close(out[0]);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // both threads asleep
  }
  ~Script() {
    if (pid > 0) kill_and_reap(pid);
  }
};

/// Samples with split.py's three() and one() on their stack.
std::pair<int, int> samples_in_three_and_one(const Profile& p) {
  int three = 0, one = 0;
  for (const auto& s : p.samples)
    for (auto f : p.stacks[s.stack]) {
      if (p.frames[f].function == "three") ++three;
      if (p.frames[f].function == "one") ++one;
    }
  return {three, one};
}

// How far a sampled 3:1 share may stray from 75 %: four standard deviations of a share drawn from
// n samples, plus 7 points for a loaded machine giving the two phases unequal CPU. With 300
// samples that is 17 points; a 50:50 or all-in-one split is still caught.
double split_tolerance(int n) {
  return 400.0 * std::sqrt(0.75 * 0.25 / std::max(n, 1)) + 7.0;
}

std::vector<std::string> python_functions(const ThreadStack& t) {
  std::vector<std::string> out;
  for (const auto& f : t.frames)
    if (f.module == "[python]") out.push_back(f.function);
  return out;
}

class PythonSampling : public testing::TestWithParam<Interpreter> {
 protected:
  void SetUp() override {
    MAINBOARD_NATIVE_ONLY("another process's memory (process_vm_readv)");
    if (GetParam().program.empty() || !fs::exists(GetParam().program))
      GTEST_SKIP() << GetParam().name << " is not installed here";
  }
};

TEST_P(PythonSampling, DumpReadsEveryThreadsPythonStackWithoutStoppingIt) {
  Script s(GetParam().program, kScripts + "/sleeper.py");
  auto d = Sampler::dump(s.pid);
  EXPECT_NE(d.python.find("CPython 3."), std::string::npos) << d.python;
  ASSERT_EQ(d.threads.size(), 2u) << d.text();
  const auto& main = d.threads[0];
  EXPECT_EQ(main.tid, s.pid);
  EXPECT_TRUE(main.python);
  EXPECT_EQ(main.state, "waiting (sleep)");
  EXPECT_EQ(python_functions(main), (std::vector<std::string>{"nap_forever", "main", "<module>"}))
      << d.text();
  EXPECT_EQ(main.frames[0].file, kScripts + "/sleeper.py");
  EXPECT_EQ(main.frames[0].line, 9u);   // time.sleep(3600)
  EXPECT_EQ(main.frames[1].line, 19u);  // nap_forever() in main
  EXPECT_EQ(main.frames[2].line, 22u);  // main()
  // The other thread waits in threading's Event.wait ("wait" before 3.11, which has no
  // qualified names), on a lock.
  auto side = python_functions(d.threads[1]);
  auto at = std::find(side.begin(), side.end(), "side_thread");
  ASSERT_TRUE(at != side.end() && at != side.begin()) << d.text();
  EXPECT_NE(std::prev(at)->find("wait"), std::string::npos) << d.text();
  EXPECT_EQ(d.threads[1].state, "waiting (lock)");
  // Their names are threading's, not the kernel's ("python3").
  EXPECT_EQ(main.name, "MainThread");
  EXPECT_EQ(d.threads[1].name, "side");
  // Each thread sleeps with the GIL let go.
  EXPECT_FALSE(main.holds_gil);
  EXPECT_FALSE(d.threads[1].holds_gil);
  auto text = d.text();
  EXPECT_NE(text.find("nap_forever (" + kScripts + "/sleeper.py:9)"), std::string::npos) << text;
  EXPECT_NE(text.find("Thread " + std::to_string(s.pid) + " (waiting (sleep)): \"MainThread\""),
            std::string::npos)
      << text;
  // Not stopped: still running.
  EXPECT_EQ(::waitpid(s.pid, nullptr, WNOHANG), 0);

  DumpOptions main_only;
  main_only.all_threads = false;
  EXPECT_EQ(Sampler::dump(s.pid, main_only).threads.size(), 1u);
}

TEST_P(PythonSampling, NativeDumpPutsPythonFramesWhereTheInterpreterRanThem) {
  Script s(GetParam().program, kScripts + "/sleeper.py");
  DumpOptions o;
  o.native = true;
  StackDump d;
  try {
    d = Sampler::dump(s.pid, o);
  } catch (const Error& e) {
    GTEST_SKIP() << "ptrace refused here: " << e.what();
  }
  ASSERT_FALSE(d.threads.empty());
  const auto& main = d.threads[0];
  ASSERT_TRUE(main.python) << d.text();
  EXPECT_EQ(python_functions(main), (std::vector<std::string>{"nap_forever", "main", "<module>"}))
      << d.text();
  // The sleep itself is native (the C library), inner to the Python frame that called it; no
  // frame of the interpreter's evaluation loop is left.
  auto first_python = std::find_if(main.frames.begin(), main.frames.end(),
                                   [](const StackFrame& f) { return f.module == "[python]"; });
  EXPECT_NE(first_python, main.frames.begin()) << d.text();
  for (const auto& f : main.frames)
    EXPECT_FALSE(sampling::is_python_eval(f)) << d.text();
  EXPECT_EQ(main.name, "MainThread");
}

TEST_P(PythonSampling, AsyncDumpFollowsEachTasksAwaitsAndWhoAwaitsIt) {
  Script s(GetParam().program, kScripts + "/tasks.py");
  DumpOptions o;
  o.async_aware = true;
  auto d = Sampler::dump(s.pid, o);
  if (GetParam().name == "pyenv_3_9" || GetParam().name == "pyenv_3_10") {
    // Before 3.11: said so, and the threads are still dumped.
    EXPECT_TRUE(d.tasks.empty());
    ASSERT_FALSE(d.unavailable.empty());
    EXPECT_NE(d.unavailable[0].find("async: the asyncio tasks of CPython 3."), std::string::npos)
        << d.unavailable[0];
    EXPECT_FALSE(d.threads.empty());
    return;
  }
  EXPECT_TRUE(d.unavailable.empty()) << d.text();
  std::map<std::string, const AsyncTask*> by_name;
  for (const auto& t : d.tasks)
    by_name[t.name] = &t;
  ASSERT_EQ(by_name.size(), 4u) << d.text();
  for (const char* name : {"Task-1", "alpha", "beta", "leaf"})
    ASSERT_TRUE(by_name.count(name)) << name << "\n" << d.text();
  auto functions = [&](const char* name) {
    std::vector<std::string> out;
    for (const auto& f : by_name[name]->frames)
      out.push_back(f.function);
    return out;
  };
  auto awaited_by = [&](const char* name) {
    std::vector<std::string> out;
    for (auto i : by_name[name]->awaited_by)
      out.push_back(d.tasks[i].name);
    std::sort(out.begin(), out.end());
    return out;
  };
  using Names = std::vector<std::string>;
  // Innermost first: asyncio's sleep, then the program's coroutines down to the task's own.
  EXPECT_EQ(functions("leaf"), (Names{"sleep", "deepest", "middle", "leaf"})) << d.text();
  EXPECT_EQ(functions("beta"), (Names{"sleep", "deepest", "middle", "beta"})) << d.text();
  EXPECT_EQ(functions("alpha"), (Names{"alpha"})) << d.text();
  EXPECT_EQ(functions("Task-1"), (Names{"main"})) << d.text();
  EXPECT_EQ(by_name["leaf"]->frames[1].file, kScripts + "/tasks.py");
  EXPECT_EQ(by_name["leaf"]->frames[1].line, 8u);  // await asyncio.sleep(3600)
  EXPECT_EQ(by_name["alpha"]->frames[0].line, 20u);
  // Who waits for whom.
  EXPECT_EQ(awaited_by("leaf"), (Names{"alpha"}));
  EXPECT_EQ(awaited_by("alpha"), (Names{"Task-1"}));
  EXPECT_EQ(awaited_by("beta"), (Names{"Task-1"}));
  EXPECT_TRUE(awaited_by("Task-1").empty());
  EXPECT_EQ(by_name["alpha"]->waiting_for, "task leaf");
  EXPECT_EQ(by_name["Task-1"]->waiting_for, "gather");
  EXPECT_EQ(by_name["leaf"]->waiting_for, "a future");
  for (const auto& t : d.tasks)
    EXPECT_EQ(t.tid, 0) << t.name << " is suspended";
  auto text = d.text();
  EXPECT_NE(text.find("Task \"leaf\" (waiting for a future)\n  awaited by \"alpha\"\n    sleep ("),
            std::string::npos)
      << text;
  // Stopped and read the same way.
  o.native = true;
  try {
    auto n = Sampler::dump(s.pid, o);
    EXPECT_EQ(n.tasks.size(), 4u) << n.text();
  } catch (const Error& e) {
    std::printf("ptrace refused here: %s\n", e.what());
  }
}

TEST_P(PythonSampling, AsyncDumpShowsARunningTaskWithItsThreadsFrames) {
  if (GetParam().name == "pyenv_3_9" || GetParam().name == "pyenv_3_10")
    GTEST_SKIP() << "asyncio tasks are read from 3.11 on";
  Script s(GetParam().program, kScripts + "/busy_task.py");
  DumpOptions o;
  o.async_aware = true;
  auto d = Sampler::dump(s.pid, o);
  ASSERT_EQ(d.tasks.size(), 2u) << d.text();
  const AsyncTask* spinner = nullptr;
  for (const auto& t : d.tasks)
    if (t.name == "spinner") spinner = &t;
  ASSERT_NE(spinner, nullptr) << d.text();
  EXPECT_EQ(spinner->tid, s.pid) << d.text();
  std::vector<std::string> functions;
  for (const auto& f : spinner->frames)
    functions.push_back(f.function);
  // From the thread's stack: the innermost frame (work(), or inner() between two calls of it)
  // up to the task's own coroutine, no further.
  if (!functions.empty() && functions[0] == "work") functions.erase(functions.begin());
  EXPECT_EQ(functions, (std::vector<std::string>{"inner", "spinner"})) << d.text();
  EXPECT_NE(d.text().find("Task \"spinner\" (running on thread " + std::to_string(s.pid) + ")"),
            std::string::npos)
      << d.text();
}

TEST_P(PythonSampling, ThreadsAndTasksTablesHoldingTheWrongThingsAreLeftOut) {
  for (const char* variant : {"wrong", "huge"}) {
    StackDump d;
    {
      Script script(GetParam().program, kScripts + "/garbage.py", {variant});
      DumpOptions o;
      o.async_aware = true;
      EXPECT_NO_THROW(d = Sampler::dump(script.pid, o)) << variant;
    }
    ASSERT_EQ(d.threads.size(), 1u) << variant << "\n" << d.text();
    // No name from threading's table: the kernel's; no task from sets of other things.
    EXPECT_NE(d.threads[0].name, "MainThread") << variant;
    EXPECT_FALSE(d.threads[0].name.empty()) << variant;
    EXPECT_TRUE(d.tasks.empty()) << variant << "\n" << d.text();
    EXPECT_EQ(python_functions(d.threads[0]), (std::vector<std::string>{"<module>"})) << variant;
  }
}

TEST_P(PythonSampling, RunSplitsTimeAsTheProgramDoesOnBothThreads) {
  SampleOptions o;
  o.hz = 499;
  o.stdout_path = "/dev/null";
  // split.py runs for 2.5 s of its CPU time however loaded the machine is: ~1250 samples, of
  // which a loaded machine let the Python reads match as few as a fifth.
  double cpu = children_cpu_seconds();
  auto r = Sampler::run({GetParam().program, kScripts + "/split.py", "2.5"}, o);
  cpu = children_cpu_seconds() - cpu;
  ASSERT_EQ(r.exit_code, 0);
  const auto& p = r.profile;
  RecordProperty("samples", std::to_string(p.samples.size()));
  RecordProperty("expected", std::to_string(cpu * o.hz));
  EXPECT_GE(static_cast<double>(p.samples.size()), cpu * o.hz / 2)
      << p.samples.size() << " samples of " << cpu << " s of CPU time";
  // Per thread, the samples in three() and one(): three quarters and one quarter.
  std::map<std::uint32_t, std::pair<int, int>> per_thread;
  for (const auto& s : p.samples) {
    for (auto frame : p.stacks[s.stack]) {
      const auto& f = p.frames[frame];
      if (f.module != "[python]") continue;
      if (f.function == "three") ++per_thread[s.thread].first;
      if (f.function == "one") ++per_thread[s.thread].second;
      if (f.function == "three" || f.function == "one") break;
    }
  }
  ASSERT_EQ(per_thread.size(), 2u) << "both threads' Python frames";
  // The threads carry threading's names.
  std::set<std::string> names;
  for (auto [thread, counts] : per_thread)
    names.insert(p.threads[thread].name);
  EXPECT_EQ(names, (std::set<std::string>{"MainThread", "worker-1"}));
  int three = 0, one = 0;
  for (auto [thread, counts] : per_thread) {
    three += counts.first;
    one += counts.second;
  }
  ASSERT_GT(three + one, 200);
  double share = 100.0 * three / (three + one);
  RecordProperty("three_pct", std::to_string(share));
  EXPECT_NEAR(share, 75.0, split_tolerance(three + one))
      << three << " in three(), " << one << " in one()";
  // Nothing of the interpreter's loop is left in a stack that has Python frames.
  for (const auto& stack : p.stacks) {
    bool python = std::any_of(stack.begin(), stack.end(),
                              [&](std::uint32_t f) { return p.frames[f].module == "[python]"; });
    if (!python) continue;
    for (auto f : stack)
      EXPECT_FALSE(sampling::is_python_eval(p.frames[f]));
  }
}

TEST_P(PythonSampling, CProfileSeesTheSameSplit) {
  // cProfile's self time of the same functions, as a second opinion on the split the sampled
  // profile is held to: on one thread (cProfile follows one thread before 3.12 and mixes the
  // clocks of all of them after), in CPU time (wall time would count waits for the GIL).
  LocalRunner runner(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
  Command c;
  c.argv = {GetParam().program, "-c",
            "import cProfile, pstats, runpy, sys\n"
            "sys.argv = [sys.argv[1], '1', '1']\n"
            "import time\n"
            "p = cProfile.Profile(time.thread_time)\n"
            "p.enable()\n"
            "runpy.run_path(sys.argv[0], run_name='__main__')\n"
            "p.disable()\n"
            "s = {k[2]: v[2] for k, v in pstats.Stats(p).stats.items()}\n"
            "print(round(100 * s['three'] / (s['three'] + s['one']), 1))\n",
            kScripts + "/split.py"};
  c.timeout = std::chrono::seconds(60);
  // The median of three runs: on a loaded VM one second of a thread's CPU time can take in time
  // the hypervisor gave another guest, and one run came out at 67% under a full `make test`.
  std::vector<double> shares;
  for (int run = 0; run < 3; ++run) {
    auto out = runner.run(c);
    ASSERT_TRUE(out.ok()) << out.err;
    shares.push_back(std::stod(out.out));
  }
  std::sort(shares.begin(), shares.end());
  EXPECT_NEAR(shares[1], 75.0, 5.0) << shares[0] << " " << shares[1] << " " << shares[2];
}

TEST_P(PythonSampling, APythonChildOfAShellScriptIsReadToo) {
  SampleOptions o;
  o.hz = 299;
  o.stdout_path = "/dev/null";
  // The shell stays the parent (`&& true` keeps it from exec'ing python in its place).
  auto r = Sampler::run(
      {"/bin/sh", "-c", "\"$0\" \"$1\" 0.8 1 && true", GetParam().program, kScripts + "/split.py"},
      o);
  ASSERT_EQ(r.exit_code, 0);
  const auto& p = r.profile;
  std::size_t python = 0;
  for (const auto& s : p.samples)
    for (auto f : p.stacks[s.stack])
      if (p.frames[f].function == "three" || p.frames[f].function == "one") {
        ++python;
        break;
      }
  EXPECT_GT(python, p.samples.size() / 2) << python << " of " << p.samples.size();
}

TEST_P(PythonSampling, AttachReadsARunningProgramsPythonFrames) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    std::string script = kScripts + "/split.py";
    ::execl(GetParam().program.c_str(), GetParam().program.c_str(), script.c_str(), "600", "1",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // On-CPU samples follow the CPU time the program got, and a loaded machine gives it less (72
  // samples in 1.5 s beside two builds): the window is sized from its measured rate for about
  // 300 samples (at most 15 s), and the samples are held to half of what its CPU time asks for.
  SampleOptions o;
  o.hz = 499;
  o.duration_s = attach_window(pid, o.hz, 300, 0.6, 15);
  double cpu = cpu_seconds(pid);
  Profile p;
  try {
    p = Sampler::attach(pid, o);
  } catch (const Error& e) {
    kill_and_reap(pid);
    GTEST_SKIP() << "perf events refused here: " << e.what();
  }
  cpu = cpu_seconds(pid) - cpu;
  kill_and_reap(pid);
  // The CPU reads bracket the attach's set-up and tear-down too (half a second under ASan), while
  // samples come only inside the window: the program is one thread, so the window bounds it.
  cpu = std::min(cpu, o.duration_s);
  auto [three, one] = samples_in_three_and_one(p);
  RecordProperty("samples", std::to_string(p.samples.size()));
  RecordProperty("expected", std::to_string(cpu * o.hz));
  RecordProperty("window_s", std::to_string(o.duration_s));
  EXPECT_GE(static_cast<double>(p.samples.size()), cpu * o.hz / 2)
      << p.samples.size() << " samples of " << cpu << " s of CPU time in " << o.duration_s << " s";
  ASSERT_GE(p.samples.size(), 100u) << "too few samples to judge the split";
  ASSERT_GT(three + one, p.samples.size() / 2) << three + one << " of " << p.samples.size();
  RecordProperty("three_pct", std::to_string(100.0 * three / (three + one)));
  EXPECT_NEAR(100.0 * three / (three + one), 75.0, split_tolerance(three + one));
}

TEST_P(PythonSampling, WallClockSeesTheWaitsThatOnCpuSamplingDoesNot) {
  auto shares = [&](bool wall) {
    SampleOptions o;
    o.hz = 199;
    o.wall = wall;
    auto r = Sampler::run({GetParam().program, kScripts + "/waits.py", "3.0", "0.3"}, o);
    EXPECT_EQ(r.exit_code, 0);
    const auto& p = r.profile;
    double compute = 0, wait = 0;
    for (const auto& s : p.samples)
      for (auto f : p.stacks[s.stack]) {
        if (p.frames[f].function == "compute") ++compute;
        if (p.frames[f].function == "wait") ++wait;
      }
    EXPECT_GT(compute + wait, wall ? 50 : 20);  // enough to judge (fewer under a sanitizer)
    return 100 * compute / std::max(compute + wait, 1.0);  // of the time in run()'s steps
  };
  // On CPU, the steps are all compute(); on the wall clock, half of them wait(). Steps of 300 ms
  // keep the edges, where a sample may meet the nearest Python read from the other side of a
  // compute/wait switch (20 ms window), a small part of the whole on a loaded machine (with
  // 100 ms steps, 86 % compute() beside two builds). On the wall clock a loaded machine has
  // given compute() as little as 37.5 % (once in 57 runs at load 6): 50 ± 15 still tells a wall
  // clock that sees the waits from one that does not.
  double on_cpu = shares(false), wall = shares(true);
  RecordProperty("compute_pct_on_cpu", std::to_string(on_cpu));
  RecordProperty("compute_pct_wall", std::to_string(wall));
  EXPECT_GT(on_cpu, 90);
  EXPECT_NEAR(wall, 50, 15);
}

// py-spy's --gil: at each tick only the thread holding the GIL. Two threads computing in Python
// take turns with it: on the wall clock each tick samples both, with --gil one (about half as
// many samples, never two at one tick). A program asleep holds it at no tick.
TEST_P(PythonSampling, GilSamplesOnlyTheThreadHoldingItAtEachTick) {
  auto run = [&](bool gil) {
    SampleOptions o;
    o.hz = 199;
    o.wall = !gil;
    o.gil = gil;
    o.stdout_path = "/dev/null";
    auto r = Sampler::run({GetParam().program, kScripts + "/split.py", "1.0"}, o);
    EXPECT_EQ(r.exit_code, 0);
    return r.profile;
  };
  auto at_ticks = [](const Profile& p) {
    std::map<std::int64_t, int> per_tick;
    for (const auto& s : p.samples)
      ++per_tick[s.t_ns];
    return per_tick;
  };
  Profile wall, gil;
  try {
    wall = run(false);
    gil = run(true);
  } catch (const Error& e) {
    GTEST_SKIP() << "perf events refused here: " << e.what();
  }
  ASSERT_GT(wall.samples.size(), 100u);
  int pairs = 0;
  for (auto [t, n] : at_ticks(wall))
    pairs += n == 2;
  EXPECT_GT(pairs, 40);  // the wall clock samples both threads at one read
  for (auto [t, n] : at_ticks(gil))
    EXPECT_EQ(n, 1) << "two threads held the GIL at one tick";
  double ratio = static_cast<double>(gil.samples.size()) / static_cast<double>(wall.samples.size());
  EXPECT_GT(ratio, 0.3) << gil.samples.size() << " with --gil, " << wall.samples.size() << " wall";
  EXPECT_LT(ratio, 0.7) << gil.samples.size() << " with --gil, " << wall.samples.size() << " wall";
  EXPECT_TRUE(std::any_of(gil.unavailable.begin(), gil.unavailable.end(),
                          [](const std::string& u) { return u.rfind("gil: ", 0) == 0; }));

  Script s(GetParam().program, kScripts + "/sleeper.py");
  SampleOptions o;
  o.hz = 199;
  o.duration_s = 1.0;
  o.gil = true;
  auto asleep = Sampler::attach(s.pid, o);
  EXPECT_LE(asleep.samples.size(), 3u) << asleep.report();
  o.gil = false;
  o.wall = true;
  EXPECT_GT(Sampler::attach(s.pid, o).samples.size(), 50u);
}

/// The minor version of an interpreter (11 for 3.11), asked of it.
int minor_of(const std::string& python) {
  Command c;
  c.argv = {python, "-c", "import sys; print(sys.version_info[1])"};
  auto r = LocalRunner("/usr/bin:/bin").run(c);
  return std::atoi(r.out.c_str());
}

std::size_t count_of(const std::vector<StackFrame>& frames, const std::string& function) {
  return static_cast<std::size_t>(std::count_if(
      frames.begin(), frames.end(), [&](const StackFrame& f) { return f.function == function; }));
}

// Depth is not a sign of a cycle: a recursion 3000 deep (past the 1024 frames that used to make
// every read fail) is read in full by a dump, a native dump and a sampled attach.
/// Why a stack of recurse.py (Python frames, innermost first, as "function:line") cannot be one
/// the program had; empty when it can.
std::string torn_recursion(const std::vector<std::pair<std::string, std::uint32_t>>& frames) {
  auto text = [&] {
    std::string t;
    for (const auto& [f, l] : frames)
      t += f + ":" + std::to_string(l) + " ";
    return t;
  };
  if (frames.size() < 2) return "too short: " + text();
  if (frames.back() != std::pair<std::string, std::uint32_t>{"<module>", 22})
    return "not rooted in <module> at line 22: " + text();
  const auto& main = frames[frames.size() - 2];
  bool main_inner = frames.size() == 2;
  if (main.first != "main" ||
      (main_inner ? main.second < 16 || main.second > 18 : main.second != 18))
    return "main at the wrong place: " + text();
  std::size_t recursions = frames.size() - 2;
  if (recursions > 21) return "deeper than the program goes: " + text();
  for (std::size_t i = 0; i < recursions; ++i) {
    const auto& [f, line] = frames[i];
    if (f != "recurse") return "a frame that is not recurse: " + text();
    if (i > 0 && line != 12) return "a caller at a line that calls nothing: " + text();
    if (i == 0 && (line < 9 || line > 12)) return "the innermost outside recurse: " + text();
  }
  return "";
}

// A stack that changes under the read (a tight recursion, every frame freed and made again many
// times while one read walks it) is never kept torn: a torn read is read again, then with the
// thread stopped, and at most 2 % are left out. Never stopping it, the checks alone leave out
// most reads and keep at most 1 % torn (a loop that makes the very same frames at the very same
// addresses can fool any check made from outside; stopping is what makes it exact).
TEST_P(PythonSampling, ARecursionThatChangesUnderEveryReadIsNeverReadTorn) {
  Script s(GetParam().program, kScripts + "/recurse.py");
  std::string why;
  auto reader = sampling::PythonReader::open(s.pid, &why);
  ASSERT_TRUE(reader) << why;
  for (bool stop : {false, true}) {
    sampling::StackReads reads({3, 2, stop});
    std::vector<sampling::PyThreadStack> threads;
    int kept = 0, torn = 0;
    std::string first_torn;
    for (int i = 0; i < 1000; ++i) {
      ASSERT_TRUE(reads.read(*reader, threads));
      ASSERT_EQ(threads.size(), 1u);
      if (threads[0].torn) continue;
      ++kept;
      std::vector<std::pair<std::string, std::uint32_t>> frames;
      for (const auto& f : threads[0].frames)
        frames.emplace_back(reader->frame(f).function, f.line);
      if (auto what = torn_recursion(frames); !what.empty()) {
        ++torn;
        if (first_torn.empty()) first_torn = what;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    const auto& counts = reads.counts();
    EXPECT_EQ(counts.stack_reads, 1000u);
    EXPECT_EQ(static_cast<std::uint64_t>(kept), 1000 - counts.stacks_dropped);
    EXPECT_TRUE(reads.refused().empty()) << reads.refused();
    if (stop) {
      EXPECT_EQ(torn, 0) << first_torn;
      EXPECT_LE(counts.stacks_dropped, 20u)
          << counts.stacks_torn << " torn at first, " << counts.stacks_stopped << " read stopped";
    } else {
      EXPECT_LE(torn * 100, kept) << torn << " of " << kept << " kept: " << first_torn;
      EXPECT_EQ(counts.stacks_stopped, 0u);
    }
  }
}

// The same under `profile run` for ten seconds: every sample's Python frames are a stack the
// program had, and the profile says how many reads it left out (at most 2 %).
TEST_P(PythonSampling, ARunOfARecursionKeepsNoTornStack) {
  SampleOptions o;
  o.hz = 199;
  o.stdout_path = "/dev/null";
  RunResult r;
  try {
    r = Sampler::run({GetParam().program, kScripts + "/recurse.py", "10"}, o);
  } catch (const Error& e) {
    GTEST_SKIP() << "perf events refused here: " << e.what();
  }
  ASSERT_EQ(r.exit_code, 0);
  const auto& p = r.profile;
  int with_python = 0, torn = 0;
  std::string first_torn;
  for (const auto& sample : p.samples) {
    std::vector<std::pair<std::string, std::uint32_t>> frames;
    bool recursing =
        false;  // (not the interpreter starting: its imports, the script's first lines)
    for (auto f : p.stacks[sample.stack])
      if (p.frames[f].module == "[python]") {
        frames.emplace_back(p.frames[f].function, p.frames[f].line);
        recursing |= p.frames[f].file == kScripts + "/recurse.py" &&
                     (p.frames[f].function == "recurse" || p.frames[f].function == "main");
      }
    if (!recursing) continue;
    ++with_python;
    if (auto what = torn_recursion(frames); !what.empty()) {
      ++torn;
      if (first_torn.empty()) first_torn = what;
    }
  }
  EXPECT_GT(with_python, 100);
  EXPECT_EQ(torn, 0) << torn << " of " << with_python << " samples: " << first_torn;
  // What was left out is said, and is at most 2 % of the reads.
  for (const auto& u : p.unavailable) {
    unsigned long left = 0, of = 0;
    if (u.find("changed under every read") != std::string::npos &&
        std::sscanf(u.c_str(), "python: %lu of %lu thread stacks", &left, &of) == 2) {
      EXPECT_LE(left * 50, of) << u;
    }
  }
}

/// The one child of process `pid` (unshare's), or -1.
pid_t only_child(pid_t pid) {
  auto text = symbols::read_proc_file("/proc/" + std::to_string(pid) + "/task/" +
                                      std::to_string(pid) + "/children");
  auto v = core::parse_u64(core::trim(text));
  return v ? static_cast<pid_t>(*v) : -1;
}

/// Whether this machine lets us make a PID namespace (unshare needs CAP_SYS_ADMIN).
bool can_unshare_pid() {
  static const bool can = [] {
    Command c;
    c.argv = {"unshare", "-fp", "--mount-proc", "true"};
    return LocalRunner("/usr/bin:/bin").run(c).ok();
  }();
  return can;
}

// A program in a PID namespace of its own (as under Docker, Kubernetes, enroot, Singularity):
// its interpreter knows its threads by that namespace's ids (1, 2 …). Read from the host, the
// dump shows the host's thread ids with their states and threading's names, and a profile run
// through unshare has the Python frames and names of both threads.
TEST_P(PythonSampling, AProgramInItsOwnPidNamespaceIsReadAsOnTheHost) {
  if (!can_unshare_pid()) GTEST_SKIP() << "unshare --pid refused here";
  Script s("/usr/bin/unshare", "-fp",
           {"--mount-proc", GetParam().program, kScripts + "/sleeper.py"});
  pid_t python = only_child(s.pid);
  ASSERT_GT(python, 0);
  // The namespace's first process outlives unshare's end: ended first (unshare reaps it).
  struct EndFirst {
    pid_t pid;
    ~EndFirst() { ::kill(pid, SIGKILL); }
  } end_first{python};
  auto d = Sampler::dump(python);
  ASSERT_EQ(d.threads.size(), 2u) << d.text();
  const auto& main = d.threads[0];
  EXPECT_EQ(main.tid, python);  // the host's id, not 1
  EXPECT_EQ(main.name, "MainThread");
  EXPECT_EQ(main.state, "waiting (sleep)");
  EXPECT_EQ(python_functions(main), (std::vector<std::string>{"nap_forever", "main", "<module>"}));
  EXPECT_EQ(d.threads[1].name, "side");
  EXPECT_EQ(d.threads[1].state, "waiting (lock)");
  EXPECT_TRUE(
      fs::exists("/proc/" + std::to_string(python) + "/task/" + std::to_string(d.threads[1].tid)));
  EXPECT_TRUE(d.unavailable.empty()) << d.text();

  SampleOptions o;
  o.hz = 499;
  o.stdout_path = "/dev/null";
  RunResult r;
  try {
    r = Sampler::run({"/usr/bin/unshare", "-fp", "--mount-proc", GetParam().program,
                      kScripts + "/split.py", "1"},
                     o);
  } catch (const Error& e) {
    GTEST_SKIP() << "perf events refused here: " << e.what();
  }
  ASSERT_EQ(r.exit_code, 0);
  auto [three, one] = samples_in_three_and_one(r.profile);
  EXPECT_GT(three + one, 100) << ::testing::PrintToString(r.profile.unavailable);
  std::set<std::string> names;
  for (const auto& t : r.profile.threads)
    names.insert(t.name.substr(0, t.name.find(" (pid")));
  EXPECT_TRUE(names.count("MainThread") && names.count("worker-1"))
      << ::testing::PrintToString(names);
}

// A pool whose workers do all the work while the parent waits: attach follows the process tree
// as it is when it starts (py-spy's --subprocesses), and `--no-children` keeps to the parent.
// `dump --subprocesses` dumps each process of the tree after the parent's, each header once.
TEST_P(PythonSampling, AttachAndDumpFollowTheWorkersAParentStartedBefore) {
  Script s(GetParam().program, kScripts + "/pool.py");
  SampleOptions o;
  o.hz = 199;
  o.duration_s = 1.0;
  Profile p;
  try {
    p = Sampler::attach(s.pid, o);
  } catch (const Error& e) {
    GTEST_SKIP() << "perf events refused here: " << e.what();
  }
  std::set<std::int64_t> spinning;  // threads with worker_spin on their stack
  for (const auto& sample : p.samples)
    for (auto f : p.stacks[sample.stack])
      if (p.frames[f].function == "worker_spin" && p.frames[f].module == "[python]")
        spinning.insert(p.threads[sample.thread].tid);
  EXPECT_EQ(spinning.size(), 2u) << p.report();
  EXPECT_EQ(spinning.count(s.pid), 0u);
  for (const auto& t : p.threads)
    if (t.tid != s.pid) {
      EXPECT_NE(t.name.find(" (pid "), std::string::npos) << t.name;
    }

  o.children = false;
  auto parent_only = Sampler::attach(s.pid, o);
  for (const auto& sample : parent_only.samples)
    EXPECT_EQ(parent_only.threads[sample.thread].tid, s.pid);

  auto dumps = Sampler::dump_tree(s.pid);
  ASSERT_EQ(dumps.size(), 3u);
  EXPECT_EQ(dumps[0].pid, s.pid);
  for (std::size_t i = 1; i < dumps.size(); ++i) {
    ASSERT_FALSE(dumps[i].threads.empty());
    EXPECT_EQ(python_functions(dumps[i].threads[0]).front(), "worker_spin") << dumps[i].text();
  }
  EXPECT_TRUE(dumps[0].unavailable.empty()) << ::testing::PrintToString(dumps[0].unavailable);
}

// py-spy's --locals: each frame's arguments and locals with a short repr of their values, read
// from memory (the program runs no code for it), with --native too, and kept in the JSON.
TEST_P(PythonSampling, DumpLocalsShowsEachValueAsItsReprWouldBeCut) {
  Script s(GetParam().program, kScripts + "/locals.py");
  for (bool native : {false, true}) {
    DumpOptions o;
    o.locals = true;
    o.native = native;
    StackDump d;
    try {
      d = Sampler::dump(s.pid, o);
    } catch (const Error& e) {
      if (native) GTEST_SKIP() << "ptrace refused here: " << e.what();
      throw;
    }
    ASSERT_FALSE(d.threads.empty());
    const auto& t = d.threads[0];
    ASSERT_EQ(t.locals.size(), t.frames.size()) << d.text();
    std::map<std::string, LocalVariable> vars;
    for (std::size_t i = 0; i < t.frames.size(); ++i)
      if (t.frames[i].function == "inner")
        for (const auto& v : t.locals[i])
          vars[v.name] = v;
    std::map<std::string, std::string> want{
        {"n", "7"},
        {"flag", "True"},
        {"none", "None"},
        {"big", "1267650600228229401496703205376"},
        {"neg", "-12345678901234567890"},
        {"ratio", "0.1"},
        {"text", "'h\u00e9llo\\n'"},
        {"data", "b'\\x00ab\\''"},
        {"pair", "(1, 'two')"},
        {"items", "[1.5, None]"},
        {"table", "{'k': 1}"},
        {"rest", "('extra',)"},
        {"options", "{'key': 'v'}"},
        {"long_text", "'" + std::string(60, 'x') + "'\u2026 (len 5000)"},
        {"nested", "[(1, 2), {'a': [1, [\u2026] (len 2)]}]"},
        {"many", "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, \u2026] (len 25)"},
        {"counter", "0"},  // a cell (the closure uses it): its value
    };
    for (const auto& [name, repr] : want) {
      ASSERT_TRUE(vars.count(name)) << name << "\n" << d.text();
      EXPECT_EQ(vars[name].repr, repr) << name;
    }
    EXPECT_EQ(vars["thing"].repr.rfind("Thing at 0x", 0), 0u) << vars["thing"].repr;
    EXPECT_EQ(vars["closure"].repr.rfind("function at 0x", 0), 0u) << vars["closure"].repr;
    for (const char* argument : {"n", "big", "thing", "rest", "options"})
      EXPECT_TRUE(vars[argument].argument) << argument;
    for (const char* local : {"long_text", "many", "counter"})
      EXPECT_FALSE(vars[local].argument) << local;
    auto text = d.text();
    EXPECT_NE(text.find("        Arguments:\n            n: 7\n"), std::string::npos) << text;
    EXPECT_NE(text.find("        Locals:\n"), std::string::npos) << text;
    nlohmann::json j = d;
    EXPECT_EQ(j.get<StackDump>().threads[0].locals.size(), t.frames.size());
  }
  // Not asked: none read.
  EXPECT_TRUE(Sampler::dump(s.pid).threads[0].locals.empty());
}

TEST_P(PythonSampling, ADeepStackIsReadInFull) {
  Script s(GetParam().program, kScripts + "/deep.py", {"deep", "3000"});
  auto d = Sampler::dump(s.pid);
  ASSERT_FALSE(d.threads.empty());
  EXPECT_EQ(count_of(d.threads[0].frames, "recurse"), 3001u) << d.text().substr(0, 400);
  EXPECT_EQ(d.threads[0].frames.front().function, "nap");
  EXPECT_EQ(d.threads[0].frames.back().function, "<module>");
  DumpOptions native;
  native.native = true;
  try {
    auto n = Sampler::dump(s.pid, native);
    ASSERT_FALSE(n.threads.empty());
    EXPECT_TRUE(n.threads[0].python);
    EXPECT_EQ(count_of(n.threads[0].frames, "recurse"), 3001u);
  } catch (const Error& e) {
    ADD_FAILURE() << "native dump: " << e.what();
  }
  SampleOptions o;
  o.hz = 99;
  o.wall = true;
  o.duration_s = 0.3;
  Profile p;
  try {
    p = Sampler::attach(s.pid, o);
  } catch (const Error& e) {
    GTEST_SKIP() << "perf events refused here: " << e.what();
  }
  std::size_t deepest = 0;
  for (const auto& sample : p.samples) {
    std::size_t n = 0;
    for (auto f : p.stacks[sample.stack])
      n += p.frames[f].function == "recurse";
    deepest = std::max(deepest, n);
  }
  EXPECT_EQ(deepest, 3001u) << p.samples.size() << " samples";
}

// A name longer than any the reader keeps is cut and says so; the stack around it is kept.
TEST_P(PythonSampling, AVeryLongNameIsCutAndTheStackKept) {
  Script s(GetParam().program, kScripts + "/deep.py", {"longname", "5000"});
  auto d = Sampler::dump(s.pid);
  ASSERT_FALSE(d.threads.empty());
  auto f = python_functions(d.threads[0]);
  ASSERT_GE(f.size(), 4u) << d.text().substr(0, 300);
  EXPECT_EQ(f[0], "nap");
  EXPECT_EQ(f[1], std::string(4096, 'f') + "\u2026");
  EXPECT_NE(f[2].find("caller"), std::string::npos);
}

// A thread-state list that comes back onto itself lists each thread once (it printed the same
// thread 4096 times).
TEST_P(PythonSampling, AThreadListThatLoopsShowsEachThreadOnce) {
  int minor = minor_of(GetParam().program);
  long offset = -1;
  for (const auto& l : kTestLayouts)
    if (l.version == 0x0300 + minor) offset = l.tstate_next;
  if (offset < 0) GTEST_SKIP() << "no layout for 3." << minor;
  Script s(GetParam().program, kScripts + "/deep.py", {"loop", std::to_string(offset)});
  auto d = Sampler::dump(s.pid);
  ASSERT_EQ(d.threads.size(), 1u) << d.text().substr(0, 300);
  EXPECT_EQ(python_functions(d.threads[0]).front(), "nap");
}

// Deeper than the reader keeps (2^17 frames): the innermost are kept and the last frame says how
// many more there are. 3.11 on only: earlier interpreters recurse on the C stack.
TEST_P(PythonSampling, AStackDeeperThanTheReaderKeepsSaysHowManyAreCut) {
  if (minor_of(GetParam().program) < 11) GTEST_SKIP() << "recursion this deep needs 3.11";
  Script s(GetParam().program, kScripts + "/deep.py", {"deep", "140000"});
  auto d = Sampler::dump(s.pid);
  ASSERT_FALSE(d.threads.empty());
  const auto& frames = d.threads[0].frames;
  ASSERT_EQ(frames.size(), (1u << 17) + 1);
  // 140 004 frames (nap, recurse × 140 001, main, <module>) less the 131 072 kept; beyond the
  // kept ones the interpreter's entry frames (3.12 on) are counted too.
  const auto& last = frames.back().function;
  unsigned long cut = 0;
  ASSERT_EQ(std::sscanf(last.c_str(), "[%lu outer Python frames not read]", &cut), 1) << last;
  EXPECT_GE(cut, 8932u);
  EXPECT_LE(cut, 8934u);
  EXPECT_NE(d.text().find("    " + last + "\n"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Interpreters, PythonSampling, testing::ValuesIn(interpreters()),
                         [](const testing::TestParamInfo<Interpreter>& i) { return i.param.name; });

#ifdef MAINBOARD_PYTHON_EXTENSIONS
TEST(PythonFrames, ACExtensionsNativeLoopSitsUnderThePythonFunctionThatCalledIt) {
  SampleOptions o;
  o.hz = 499;
  auto r = Sampler::run(
      {MAINBOARD_PYTHON_FOR_EXTENSIONS, kScripts + "/mixed.py", "1", MAINBOARD_PYTHON_EXTENSIONS},
      o);
  ASSERT_EQ(r.exit_code, 0);
  const auto& p = r.profile;
  std::size_t in_kernel = 0, ordered = 0;
  for (const auto& s : p.samples) {
    const auto& stack = p.stacks[s.stack];
    if (stack.empty() || p.frames[stack[0]].function != "hotloop_kernel") continue;
    ++in_kernel;
    // Innermost first: the extension's frames, then step, train, <module>; nothing between.
    std::vector<std::string> python;
    bool native_after_python = false;
    for (auto f : stack) {
      const auto& frame = p.frames[f];
      if (frame.module == "[python]")
        python.push_back(frame.function);
      else if (!python.empty())
        native_after_python = true;
    }
    if (python == std::vector<std::string>{"step", "train", "<module>"} && !native_after_python)
      ++ordered;
  }
  EXPECT_GT(in_kernel, p.samples.size() * 8 / 10) << in_kernel << " of " << p.samples.size();
  EXPECT_GT(ordered, in_kernel * 9 / 10) << ordered << " of " << in_kernel;
}
#endif

#ifdef MAINBOARD_PYTHON_EXTENSIONS
TEST(PythonFrames, APausedReadDoesNotWaitForAThreadInUninterruptibleSleep) {
  // The program spends most of its time in vfork's wait ('D'), which ptrace cannot interrupt: a
  // reader waiting for the stop would get one read per wait; it reads without stopping instead.
  SampleOptions o;
  o.hz = 199;
  o.pause = true;
  o.wall = true;
  auto r = Sampler::run({MAINBOARD_PYTHON_FOR_EXTENSIONS, kScripts + "/vfork_wait.py", "1.2",
                         MAINBOARD_PYTHON_EXTENSIONS},
                        o);
  ASSERT_EQ(r.exit_code, 0);
  const auto& p = r.profile;
  int waiting = 0;
  for (const auto& s : p.samples)
    for (auto f : p.stacks[s.stack])
      if (p.frames[f].function == "waits") {
        ++waiting;
        break;
      }
  EXPECT_GT(waiting, 60) << "samples while the thread waited in vfork";
  bool noted = std::any_of(p.unavailable.begin(), p.unavailable.end(), [](const std::string& u) {
    return u.find("uninterruptible sleep (D)") != std::string::npos;
  });
  EXPECT_TRUE(noted);
}
#endif

TEST(PythonFrames, PausedReadsSplitTimeAlikeAndLetTheProgramGo) {
  MAINBOARD_NATIVE_ONLY("another process's memory (process_vm_readv)");
  SampleOptions o;
  o.hz = 199;  // each read stops the program: fewer stops, so a slow (sanitized) reader keeps up
  o.pause = true;
  o.stdout_path = "/dev/null";
  // 2.4 s: under ThreadSanitizer on a loaded machine 1.6 s gave 117 reads, too few to judge.
  auto r = Sampler::run({"/usr/bin/python3", kScripts + "/split.py", "2.4"}, o);
  ASSERT_EQ(r.exit_code, 0);
  const auto& p = r.profile;
  auto [three, one] = samples_in_three_and_one(p);
  ASSERT_GT(three + one, 150);
  EXPECT_NEAR(100.0 * three / (three + one), 75.0, split_tolerance(three + one));
  // Paused, a read can still catch a thread halfway through pushing or popping a frame: rare.
  for (const auto& u : p.unavailable) {
    unsigned dropped = 0, reads = 0;
    if (std::sscanf(u.c_str(), "python: %u of %u stack reads", &dropped, &reads) == 2) {
      EXPECT_LT(dropped * 100, reads) << u;
    }
  }

  // The program's own exit status survives a read that finds it ended.
  auto exits = Sampler::run({"/usr/bin/python3", "-c",
                             "import sys, time\n"
                             "end = time.monotonic() + 0.3\n"
                             "while time.monotonic() < end: pass\n"
                             "sys.exit(3)\n"},
                            o);
  EXPECT_EQ(exits.exit_code, 3);
}

TEST(PythonFrames, SignalsSentWhileTheProgramIsPausedStillArrive) {
  // The program counts SIGUSR1 while busy and ends after 40, each sent once the one before was
  // counted (two sent at once may merge into one pending signal on a loaded machine, which is
  // the kernel's rule, not a loss), while it is stopped and read 999 times a second: none may be
  // lost or turned into a stop (a lost one is never counted and the program waits until the
  // timeout). A signal sent while a thread is stopped stays pending and comes after it is let
  // go; one that a thread takes between the seize and the stop is handed back.
  TempDir dir;
  auto ready = dir.path() / "ready";
  auto counted = dir.path() / "ready.count";
  SampleOptions o;
  o.hz = 999;
  o.pause = true;
  o.timeout_s = 20;
  int sent = 0;
  std::thread sender([&] {
    for (int i = 0; i < 800 && !fs::exists(ready); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    std::string pid_text;
    std::ifstream(ready) >> pid_text;
    if (pid_text.empty()) return;
    for (; sent < 40; ++sent) {
      ::kill(std::stoi(pid_text), SIGUSR1);
      std::error_code ec;
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (fs::file_size(counted, ec) < static_cast<std::uintmax_t>(sent + 1) &&
             std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (fs::file_size(counted, ec) < static_cast<std::uintmax_t>(sent + 1)) break;  // lost
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  auto r = Sampler::run({"/usr/bin/python3", "-c",
                         "import os, signal, sys\n"
                         "got = []\n"
                         "fd = os.open(sys.argv[1] + '.count', os.O_WRONLY | os.O_CREAT | "
                         "os.O_APPEND)\n"
                         "def on(*a):\n"
                         "    got.append(1)\n"
                         "    os.write(fd, b'x')\n"
                         "signal.signal(signal.SIGUSR1, on)\n"
                         "open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid()))\n"
                         "os.rename(sys.argv[1] + '.tmp', sys.argv[1])\n"
                         "while len(got) < 40: sum(range(1000))\n"
                         "sys.exit(7)\n",
                         ready.string()},
                        o);
  sender.join();
  EXPECT_EQ(sent, 40) << "a signal was lost";
  EXPECT_FALSE(r.timed_out) << "a signal was lost";
  EXPECT_EQ(r.exit_code, 7);
}

TEST(PythonFrames, AVenvsMultiprocessingChildrenAreReadToo) {
  MAINBOARD_NATIVE_ONLY("another process's memory (process_vm_readv)");
  TempDir dir;
  LocalRunner runner("/usr/bin:/bin");
  Command venv;
  venv.argv = {"/usr/bin/python3", "-m", "venv", "--without-pip", (dir.path() / "env").string()};
  venv.timeout = std::chrono::seconds(60);
  auto made = runner.run(venv);
  if (!made.ok()) GTEST_SKIP() << "no venv here: " << made.err;
  SampleOptions o;
  o.hz = 199;
  auto r = Sampler::run({(dir.path() / "env/bin/python").string(), kScripts + "/children.py"}, o);
  ASSERT_EQ(r.exit_code, 0);
  const auto& p = r.profile;
  std::size_t in_children = 0;
  for (const auto& s : p.samples)
    if (p.threads[s.thread].name.find("(pid ") != std::string::npos)
      for (auto f : p.stacks[s.stack])
        if (p.frames[f].function == "child_work") {
          ++in_children;
          break;
        }
  EXPECT_GT(in_children, p.samples.size() * 7 / 10) << in_children << " of " << p.samples.size();
}

TEST(PythonFrames, SpliceReplacesEvaluationFramesAndDropsTheInterpreterGlue) {
  auto native = [](std::string f, std::string m) { return StackFrame{f, m, "", 0, false}; };
  auto py = [](std::string f) { return StackFrame{f, "[python]", "t.py", 1, false}; };
  std::vector<StackFrame> stack{native("kernel", "ext.so"),
                                native("_PyObject_Call", "libpython3.12.so"),
                                native("_PyEval_EvalFrameDefault", "libpython3.12.so"),
                                native("PyObject_Vectorcall", "libpython3.12.so"),
                                native("_PyEval_EvalFrameDefault", "libpython3.12.so"),
                                native("Py_RunMain", "libpython3.12.so"),
                                native("__libc_start_call_main", "libc.so.6")};
  // Two runs of the loop: step+train in the inner one, <module> in the outer.
  std::vector<StackFrame> python{py("step"), py("train"), py("<module>")};
  std::vector<std::size_t> origin;
  auto out =
      sampling::splice_python(stack, python, {false, true, true}, "libpython3.12.so", &origin);
  std::vector<std::string> names;
  for (const auto& f : out)
    names.push_back(f.function);
  EXPECT_EQ(names, (std::vector<std::string>{"kernel", "step", "train", "<module>"}));
  // Where each frame came from (a dump's addresses follow it).
  constexpr auto kPy = sampling::kPythonFrame;
  EXPECT_EQ(origin, (std::vector<std::size_t>{0, kPy, kPy, kPy}));

  // A chain cut short inside the interpreter: the Python frames go under the extension's.
  std::vector<StackFrame> cut{native("kernel", "ext.so"), native("0x95001f", "[unknown]"),
                              native("_PyObject_Call", "python3.11"), native("main", "ext.so")};
  out = sampling::splice_python(cut, python, {false, true, true}, "python3.11");
  names.clear();
  for (const auto& f : out)
    names.push_back(f.function);
  EXPECT_EQ(names, (std::vector<std::string>{"kernel", "step", "train", "<module>"}));
  // No Python frames: the native stack as it was.
  EXPECT_EQ(sampling::splice_python(stack, {}, {}, "libpython3.12.so", &origin), stack);
  EXPECT_EQ(origin, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6}));

  // The interpreter's main returned and the C library runs the exit handlers: the Python
  // stack read a moment before (step, train, <module>) is not this sample's; it stays native.
  std::vector<StackFrame> exiting{native("[kernel]", "[kernel]"),
                                  native("_exit", "libc.so.6"),
                                  native("exit", "libc.so.6"),
                                  native("__libc_start_call_main", "libc.so.6"),
                                  native("__libc_start_main", "libc.so.6"),
                                  native("_start", "python3.11")};
  EXPECT_EQ(sampling::splice_python(exiting, python, {false, true, true}, "python3.11", &origin),
            exiting);
  EXPECT_EQ(origin, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
  // A thread of the C library's own (no interpreter frame down to its start) likewise.
  std::vector<StackFrame> worker{native("futex_wait", "libc.so.6"),
                                 native("worker_loop", "libgomp.so.1"),
                                 native("start_thread", "libc.so.6")};
  EXPECT_EQ(sampling::splice_python(worker, python, {false, true, true}, "python3.11"), worker);
  // But an interpreter whose evaluation frames have no names (stripped, no MiniDebugInfo) still
  // gets its Python frames: its own frames lie between the top and the thread's start.
  std::vector<StackFrame> unnamed{native("sqrt", "libm.so.6"),
                                  native("python3.11+0x1f2a3", "python3.11"),
                                  native("__libc_start_call_main", "libc.so.6")};
  out = sampling::splice_python(unnamed, python, {false, true, true}, "python3.11");
  names.clear();
  for (const auto& f : out)
    names.push_back(f.function);
  EXPECT_EQ(names, (std::vector<std::string>{"sqrt", "step", "train", "<module>"}));
}

// The Python stack read beside a sample may have more runs of the evaluation loop than the
// sample's native stack shows (read a moment apart, at start-up's nested imports): the extra,
// outer ones go above the thread's base, never under `_start` and `__libc_start_main`. Where the
// native walk was cut ("[unwind stopped]"), the Python frames say what it could not.
TEST(PythonFrames, ASpliceNeverPutsTheThreadsBaseInsideThePythonStack) {
  auto native = [](std::string f, std::string m) { return StackFrame{f, m, "", 0, false}; };
  auto py = [](std::string f) { return StackFrame{f, "[python]", "t.py", 1, false}; };
  auto names_of = [](const std::vector<StackFrame>& frames) {
    std::vector<std::string> names;
    for (const auto& f : frames)
      names.push_back(f.function);
    return names;
  };
  // One evaluation frame on the native stack, three runs of the loop in the Python stack.
  std::vector<StackFrame> stack{native("stat", "libc.so.6"),
                                native("_PyEval_EvalFrameDefault", "libpython3.12.so"),
                                native("Py_RunMain", "libpython3.12.so"),
                                native("__libc_start_call_main", "libc.so.6"),
                                native("__libc_start_main", "libc.so.6"),
                                native("_start", "python3.12")};
  std::vector<StackFrame> python{py("_fill_cache"), py("_find_and_load_unlocked"),
                                 py("_find_and_load"), py("<module>")};
  auto out = sampling::splice_python(stack, python, {true, false, true, true}, "libpython3.12.so");
  EXPECT_EQ(names_of(out),
            (std::vector<std::string>{"stat", "_fill_cache", "_find_and_load_unlocked",
                                      "_find_and_load", "<module>"}));
  // A cut walk: the marker gives way to the Python frames still to place.
  std::vector<StackFrame> cut{native("sgemm_", "libblas.so.3"),
                              native("_PyEval_EvalFrameDefault", "libpython3.12.so"),
                              native("[unwind stopped]", "[unwind]")};
  out = sampling::splice_python(cut, python, {true, false, true, true}, "libpython3.12.so");
  EXPECT_EQ(names_of(out),
            (std::vector<std::string>{"sgemm_", "_fill_cache", "_find_and_load_unlocked",
                                      "_find_and_load", "<module>"}));
  // Without Python frames, a cut walk keeps its marker.
  EXPECT_EQ(sampling::splice_python(cut, {}, {}, "libpython3.12.so"), cut);
}

TEST(PythonFrames, HotFunctionsTellPythonFunctionsOfOneNameInTwoFilesApart) {
  Profile p;
  p.frames = {{"<module>", "[python]", "/w/a.py", 1, false},
              {"<module>", "[python]", "/w/b.py", 1, false},
              {"<module>", "[python]", "/w/a.py", 7, false},  // another line of a.py's
              {"memcpy", "libc.so.6", "", 0, false}};
  p.stacks = {{0}, {1}, {2}, {3, 0}};
  p.threads = {ThreadInfo{}};
  p.samples = {{1, 0, 0}, {2, 0, 1}, {3, 0, 2}, {4, 0, 3}};
  auto hot = p.hot_functions(10);
  ASSERT_EQ(hot.size(), 3u);
  EXPECT_EQ(hot[0].function, "<module>");
  EXPECT_EQ(hot[0].file, "/w/a.py");
  EXPECT_EQ(hot[0].self_samples, 2u);
  EXPECT_EQ(hot[0].total_samples, 3u);
  EXPECT_EQ(hot[1].file, "/w/b.py");
  EXPECT_EQ(hot[2].file, "");  // native: no file in the key
  auto text = p.report();
  EXPECT_NE(text.find("a.py"), std::string::npos) << text;
  EXPECT_NE(text.find("b.py"), std::string::npos) << text;
}

TEST(PythonFrames, AProgramThatOnlyLooksLikePythonIsSaidSoAndDumpedNatively) {
  MAINBOARD_NATIVE_ONLY("another process's memory (process_vm_readv)");
  // `sleep` under the name python3.11: the name says CPython 3.11, the file has no _PyRuntime.
  TempDir dir;
  auto fake = dir.path() / "python3.11";
  fs::copy_file("/bin/sleep", fake);
  fs::permissions(fake, fs::perms::owner_all);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execl(fake.c_str(), "python3.11", "30", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::string why;
  EXPECT_EQ(sampling::PythonReader::open(pid, &why), nullptr);
  EXPECT_NE(why.find("no _PyRuntime symbol"), std::string::npos) << why;
  StackDump d;
  try {
    d = Sampler::dump(pid);
  } catch (const Error& e) {
    kill_and_reap(pid);
    GTEST_SKIP() << "ptrace refused here: " << e.what();
  }
  kill_and_reap(pid);
  EXPECT_TRUE(d.python.empty());
  ASSERT_EQ(d.unavailable.size(), 1u);
  EXPECT_NE(d.unavailable[0].find("_PyRuntime"), std::string::npos);
  ASSERT_FALSE(d.threads.empty());
  EXPECT_FALSE(d.threads[0].frames.empty());  // the native stack instead
}

TEST(PythonFrames, AnInterpreterCaughtBeforeItsLibpythonIsMappedIsLookedAtAgain) {
  MAINBOARD_NATIVE_ONLY("another process's memory (process_vm_readv) and ptrace");
  // A CPython whose runtime is in libpython3.X.so (pyenv builds them so), stopped at exec, before
  // the loader maps the library: it is not Python yet, and saying "no _PyRuntime symbol" then
  // would give up on it for good (a short program then had no Python frames at all).
  std::string program;
  for (const auto& i : interpreters()) {
    if (i.program.empty()) continue;
    auto elf = symbols::elf_symbols(i.program, {"_PyRuntime"});
    if (elf.ok && !elf.values.count("_PyRuntime") &&
        std::any_of(elf.needed.begin(), elf.needed.end(),
                    [](const std::string& n) { return n.rfind("libpython3.", 0) == 0; }))
      program = i.program;
  }
  if (program.empty()) GTEST_SKIP() << "no interpreter here keeps its runtime in libpython3.X.so";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    ::execl(program.c_str(), program.c_str(), "-c", "import time; time.sleep(30)",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  if (!WIFSTOPPED(status)) GTEST_SKIP() << "not stopped at exec: ptrace refused here";
  // Stopped where the case is: the interpreter's executable mapped, its library not yet.
  auto maps = symbols::read_proc_file("/proc/" + std::to_string(pid) + "/maps");
  EXPECT_NE(maps.find(fs::path(program).filename().string()), std::string::npos) << maps;
  EXPECT_EQ(maps.find("libpython3."), std::string::npos) << maps;
  std::string why = "x";
  EXPECT_EQ(sampling::PythonReader::open(pid, &why), nullptr);
  EXPECT_EQ(why, "") << program;
  ::ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
  std::unique_ptr<sampling::PythonReader> reader;
  for (int i = 0; i < 500 && !reader; ++i) {
    reader = sampling::PythonReader::open(pid, &why);
    if (!reader) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill_and_reap(pid);
  ASSERT_NE(reader, nullptr) << why;
  EXPECT_EQ(reader->interpreter_module().rfind("libpython3.", 0), 0u)
      << reader->interpreter_module();
}

TEST(PythonFrames, NotAPythonProcessIsNoReaderAndNoComplaint) {
  std::string why = "x";
  EXPECT_EQ(sampling::PythonReader::open(::getpid(), &why), nullptr);
  EXPECT_EQ(why, "");
}

}  // namespace
