// Sampler::run and Sampler::attach: sample another process's stacks, and gather what the
// process recorded itself (its spans, its GPU activity) into one Profile.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <future>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/dynamic_library.hpp"
#include "core/interrupts.hpp"
#include "core/log.hpp"
#include "core/process.hpp"
#include "core/region_energy.hpp"
#include "core/text.hpp"
#include "mainboard/error.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/sampler.hpp"
#include "sampling/build_profile.hpp"
#include "sampling/perf_sampler.hpp"
#include "symbols/symbolizer.hpp"

extern char** environ;

namespace mainboard {

namespace {

namespace fs = std::filesystem;

/// The program file for argv[0], found as `mainboard meter` and the runner find theirs.
std::string resolve(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (auto found = core::find_program(program, path ? path : "/usr/local/bin:/usr/bin:/bin"))
    return *found;
  core::throw_not_runnable(program);
}

/// Where libmainboard_inject.so is: MAINBOARD_INJECT_LIBRARY, next to this library (the shared
/// library or the command), or in ../lib from the command.
std::string inject_library() {
  if (const char* env = std::getenv("MAINBOARD_INJECT_LIBRARY"); env && *env) return env;
  std::vector<fs::path> dirs;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&inject_library), &info) && info.dli_fname)
    dirs.push_back(fs::absolute(info.dli_fname).parent_path());
  std::error_code ec;
  auto self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    dirs.push_back(self.parent_path());
    dirs.push_back(self.parent_path() / ".." / "lib");
    dirs.push_back(self.parent_path() / ".." /
                   "..");  // the build tree: build/src/cli/mainboard → build/src
    dirs.push_back(self.parent_path() / "..");
  }
  for (const auto& d : dirs) {
    auto candidate = d / "libmainboard_inject.so";
    if (fs::exists(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
  }
  return "";
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "mainboard-run-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
      throw Error(std::string("cannot create a temporary directory: ") + std::strerror(errno));
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

/// Profiles the pieces of a run left in `dir` (the target's spans, the injected GPU trace):
/// every file whose name starts with `prefix`, for the processes in `pids`.
/// Merges what the command's processes wrote for `prefix`; true when any wrote something.
bool merge_handoff(Profile& into, const fs::path& dir, const std::string& prefix,
                   const std::vector<std::int32_t>& pids) {
  bool any = false;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    auto name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || e.path().extension() != ".json") continue;
    auto pid_text = name.substr(prefix.size(), name.size() - prefix.size() - 5);
    auto pid = core::parse_u64(pid_text);
    if (!pid || std::find(pids.begin(), pids.end(), static_cast<std::int32_t>(*pid)) == pids.end())
      continue;
    any = true;
    try {
      into.merge(Profile::load(e.path()));
    } catch (const std::exception& ex) {
      into.unavailable.push_back("the profile process " + pid_text +
                                 " wrote could not be read: " + ex.what());
    }
  }
  return any;
}

/// What the perf_event sampler takes of a run's, an attach's or a self-sampler's options.
sampling::SamplerOptions perf_options(const SampleOptions& o) {
  sampling::SamplerOptions so;
  so.hz = o.hz;
  so.max_samples = o.max_samples;
  so.dwarf = o.call_graph == CallGraph::dwarf;
  so.kernel = o.kernel;
  return so;
}

/// The process has exited: it is gone, or a zombie its parent has not reaped yet (kill(pid, 0)
/// still succeeds on a zombie, and an attach waited on one for its whole duration).
bool process_gone(std::int32_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  char state = symbols::thread_state(pid, pid);
  return state == 'Z' || state == 'X';
}

void add_machine(Profile& p) {
  try {
    p.machine = Machine::instance().snapshot({.toolchain = false});
  } catch (const std::exception& e) {
    core::log().debug("profile: no machine snapshot: {}", e.what());
  }
}

}  // namespace

RunResult Sampler::run(const std::vector<std::string>& argv, const SampleOptions& o) {
  if (argv.empty() || argv[0].empty())
    throw Error("nothing to run: give a program and its arguments");
  core::check_arguments(argv);
  std::string program = resolve(argv[0]);
  TempDir handoff;
  std::vector<std::string> unavailable;

  // The target's environment: ours, plus where a linked libmainboard and the CUDA injection
  // library leave their evidence ("%p": each process its own file).
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view kv = *e;
    if (kv.rfind("MAINBOARD_PROFILE=", 0) == 0 || kv.rfind("MAINBOARD_INJECT_", 0) == 0) continue;
    env.emplace_back(kv);
  }
  if (has(o.features, Feature::spans))
    env.push_back("MAINBOARD_PROFILE=out=" + (handoff.path / "spans-%p.json").string() +
                  ",max_spans=" + std::to_string(o.max_spans));
  if (has(o.features, Feature::gpu_activity)) {
    auto lib = inject_library();
    if (lib.empty()) {
      unavailable.push_back(
          "gpu_activity: libmainboard_inject.so not found (set MAINBOARD_INJECT_LIBRARY)");
    } else {
      bool already = std::any_of(env.begin(), env.end(), [](const std::string& kv) {
        return kv.rfind("CUDA_INJECTION64_PATH=", 0) == 0;
      });
      if (already) {
        unavailable.push_back(
            "gpu_activity: CUDA_INJECTION64_PATH is already set (another tool injects into CUDA)");
      } else {
        env.push_back("CUDA_INJECTION64_PATH=" + lib);
        env.push_back("MAINBOARD_INJECT_OUTPUT=" + (handoff.path / "gpu-%p.json").string());
        env.push_back("MAINBOARD_INJECT_ACTIVITIES=" + to_string(o.activities));
      }
    }
  }
  std::vector<char*> envp, args;
  for (auto& kv : env)
    envp.push_back(kv.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy)
    args.push_back(a.data());
  args.push_back(nullptr);
  int out_fd = -1, err_fd = -1;
  if (!o.stdout_path.empty())
    out_fd = ::open(o.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (!o.stderr_path.empty())
    err_fd = ::open(o.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

  // The child waits on `go` until the sampler is ready, then execs; `report` (close-on-exec)
  // carries errno back if exec fails.
  int go[2], report[2];
  if (::pipe2(go, O_CLOEXEC) != 0 || ::pipe2(report, O_CLOEXEC) != 0)
    throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  // The energy counters' first reading, just before the command starts (host-wide: RAPL
  // packages and DRAM, each GPU).
  std::optional<detail::EnergyTracker> energy;
  try {
    energy.emplace(Machine::instance(), true);
  } catch (const std::exception& e) {
    core::log().debug("profile: no energy reading: {}", e.what());
  }
  auto start_ns = core::monotonic_ns();
  pid_t pid = ::fork();
  if (pid < 0) throw Error(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec.
    ::close(go[1]);
    ::close(report[0]);
    char c;
    if (::read(go[0], &c, 1) != 1) ::_exit(127);
    if (out_fd >= 0) ::dup2(out_fd, 1);
    if (err_fd >= 0) ::dup2(err_fd, 2);
    ::execve(program.c_str(), args.data(), envp.data());
    int e = errno;
    ssize_t ignored = ::write(report[1], &e, sizeof e);
    (void)ignored;
    ::_exit(127);
  }
  ::close(go[0]);
  ::close(report[1]);
  if (out_fd >= 0) ::close(out_fd);
  if (err_fd >= 0) ::close(err_fd);

  std::unique_ptr<sampling::PerfSampler> sampler;
  if (has(o.features, Feature::stacks)) {
    try {
      auto so = perf_options(o);
      sampler =
          std::make_unique<sampling::PerfSampler>(pid, std::vector<std::int32_t>{pid}, so, true);
    } catch (const Error& e) {
      if (o.strict) {
        ::kill(pid, SIGKILL);
        ::close(go[1]);
        ::waitpid(pid, nullptr, 0);
        ::close(report[0]);
        throw;
      }
      unavailable.push_back(std::string("stacks: ") + e.what());
    }
  }
  ssize_t ignored = ::write(go[1], "x", 1);
  (void)ignored;
  ::close(go[1]);
  int exec_errno = 0;
  ssize_t n;
  do
    n = ::read(report[0], &exec_errno, sizeof exec_errno);
  while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == sizeof exec_errno) {
    ::waitpid(pid, nullptr, 0);
    core::throw_exec_failed(argv[0], exec_errno);
  }

  // Its name as the kernel has it now that exec has happened: the root of folded stacks.
  std::string command(
      core::trim(symbols::read_proc_file("/proc/" + std::to_string(pid) + "/comm")));

  // Python frames: watched only now that exec has happened (before, the child is a copy of
  // this process, which may itself be Python).
  std::unique_ptr<sampling::PythonPoller> python;
  if (sampler && o.python) {
    python = std::make_unique<sampling::PythonPoller>(
        sampling::PythonPollerOptions{o.hz, o.wall, o.pause, !o.nonblocking, o.gil});
    python->watch({pid});
  }

  RunResult result;
  auto deadline = o.timeout_s > 0 ? std::chrono::steady_clock::now() +
                                        std::chrono::duration<double>(o.timeout_s)
                                  : std::chrono::steady_clock::time_point::max();
  // Asked to stop (an interrupt, or the timeout): the command's processes are signalled step by
  // step (core::Ending) while sampling goes on; the profile keeps what it saw.
  core::Ending ending(o.kill_after_s);
  auto processes = [&] {
    std::vector<int> pids;
    for (auto p : sampler ? sampler->processes() : std::vector<std::int32_t>{pid})
      pids.push_back(p);
    return pids;
  };
  int status = 0;
  auto drain_every = sampler ? sampler->drain_interval() : std::chrono::milliseconds(25);
  auto next_drain = std::chrono::steady_clock::now();
  for (;;) {
    // Whether it ended, asked without taking anything: a thread of the command stopped for a
    // Python read (ptrace, by the poller's thread) reports its stop to any thread of this
    // process that waits for it, and a stop taken here would leave that read waiting for good.
    siginfo_t info{};
    int w = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (w == 0 && info.si_pid == pid &&
        (info.si_code == CLD_EXITED || info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED)) {
      pid_t r;
      do
        r = ::waitpid(pid, &status, 0);
      while (r < 0 && errno == EINTR);
      if (r == pid) break;
    }
    if (w < 0 && errno != EINTR) {
      // Stopping it for a Python read found it ended, and that wait reaped it.
      if (auto reaped = python ? python->reaped(pid) : std::nullopt) status = *reaped;
      break;
    }
    auto now = std::chrono::steady_clock::now();
    if (now >= next_drain) {
      if (sampler) sampler->drain();
      if (python && o.children) python->watch(sampler->processes());
      next_drain = now + drain_every;
    }
    if (energy) energy->sample_if_due();
    if (now >= deadline && !ending.began()) {
      result.timed_out = true;
      ending.begin(SIGTERM, 2.0);
    }
    ending.tick(processes);
    auto wake = std::min(next_drain, now + std::chrono::milliseconds(50));
    if (python && o.pause) {
      // The paused reads happen here: a tracer must be the thread that waits for the target.
      auto due = python->poll() - core::monotonic_ns();
      wake = std::min(wake, std::chrono::steady_clock::now() + std::chrono::nanoseconds(due));
    }
    std::this_thread::sleep_until(wake);
  }
  if (ending.began() && sampler)
    for (auto p : sampler->processes())
      if (p != pid) ::kill(p, SIGKILL);  // leave nothing behind
  auto end_ns = core::monotonic_ns();
  if (energy) energy->sample();
  auto ended = core::exit_status(status);
  result.exit_code = ended.exit_code;
  result.signal = ended.signal;

  Profile& p = result.profile;
  std::vector<std::int32_t> pids{pid};
  if (sampler) {
    auto raw = sampler->finish();
    pids = raw.processes;
    std::optional<sampling::PythonSamples> py;
    if (python) py = python->finish();
    p = sampling::to_profile(std::move(raw), o.hz, pid, o.children, "/tmp", py ? &*py : nullptr);
  }
  p.pid = pid;
  p.command = command;
  if ((o.wall || o.gil) && !python)
    p.unavailable.push_back(std::string(o.gil ? "gil" : "wall") +
                            ": needs the Python frames that --no-python turns off (or "
                            "stacks): sampled on CPU only");
  // The target's own evidence, when it wrote some (a crash leaves none).
  bool spans_written = merge_handoff(p, handoff.path, "spans-", pids);
  if (!spans_written && result.signal && has(o.features, Feature::spans))
    p.unavailable.push_back("spans: none, the command was killed by signal " +
                            std::to_string(result.signal) + " (" + strsignal(result.signal) +
                            "): a program that records spans hands them over as it exits");
  bool injected = has(o.features, Feature::gpu_activity) &&
                  std::none_of(unavailable.begin(), unavailable.end(), [](const std::string& u) {
                    return u.rfind("gpu_activity:", 0) == 0;
                  });
  auto activities_before = p.activities.size();
  bool gpu_written = merge_handoff(p, handoff.path, "gpu-", pids);
  if (injected && !gpu_written && p.activities.size() == activities_before) {
    // CUDA loads the injection with the command's first CUDA call: none came.
    std::string why;
    if (!core::DynamicLibrary::open({"libcuda.so.1"}, &why))
      p.unavailable.push_back("gpu_activity: no CUDA driver on this host (" + why +
                              "): no GPU activity to trace");
    else
      p.unavailable.push_back(
          "gpu_activity: the command made no CUDA call (the driver loads the tracer with the "
          "first one): no GPU activity traced");
  }
  p.start_ns = start_ns;
  p.end_ns = end_ns;
  p.unavailable.insert(p.unavailable.begin(), unavailable.begin(), unavailable.end());
  if (result.timed_out)
    p.unavailable.push_back("the target was ended after the " + fmt::format("{:g}", o.timeout_s) +
                            " s timeout");
  add_machine(p);
  if (energy) p.energy = energy->result(static_cast<double>(end_ns - start_ns) / 1e9);
  p.record_origin();
  p.target_exit = TargetExit{result.exit_code, result.signal, result.timed_out};
  return result;
}

Profile Sampler::measure(const Reach& reach, const SampleOptions& options) {
  switch (reach.kind) {
    case Reach::Kind::command: return run(reach.argv, options).profile;
    case Reach::Kind::process: return attach(reach.pid, options);
    case Reach::Kind::here: break;
  }
  throw Error(
      "Reach::here() names the calling process: measure it with a Profiler session (construct one, "
      "run the code, "
      "then result()), not with measure()");
}

namespace {

/// A running process (and, with children, the processes it had started) being sampled: by
/// attach, for a while, and by watch, an interval at a time.
struct Attached {
  std::int32_t pid = 0;
  std::unique_ptr<sampling::PerfSampler> sampler;
  std::unique_ptr<sampling::PythonPoller> python;
  std::string command;
};

Attached attach_to(std::int64_t pid64, const SampleOptions& o) {
  if (pid64 <= 0 || pid64 > std::numeric_limits<std::int32_t>::max() ||
      ::kill(static_cast<std::int32_t>(pid64), 0) != 0)
    throw Error("process " + std::to_string(pid64) + " does not exist");
  Attached a;
  a.pid = static_cast<std::int32_t>(pid64);
  if (process_gone(a.pid))
    throw Error("process " + std::to_string(pid64) +
                " has exited (a zombie its parent has not "
                "reaped): nothing to sample");
  // The process and, with children, every process it had started already (a multiprocessing
  // pool's workers): their threads are sampled from the start, and what they start later
  // follows by inheritance.
  std::vector<std::int32_t> tree = o.children ? symbols::process_tree(a.pid) : std::vector{a.pid};
  if (tree.empty()) tree.push_back(a.pid);
  std::vector<std::int32_t> tids;
  for (auto p : tree) {
    auto more = symbols::thread_ids(p);
    tids.insert(tids.end(), more.begin(), more.end());
  }
  if (tids.empty()) tids.push_back(a.pid);
  a.sampler = std::make_unique<sampling::PerfSampler>(a.pid, tids, perf_options(o), false);
  for (auto p : tree)
    a.sampler->seed_from_proc(p);
  if (o.python) {
    a.python = std::make_unique<sampling::PythonPoller>(
        sampling::PythonPollerOptions{o.hz, o.wall, o.pause, !o.nonblocking, o.gil});
    a.python->watch(tree);
  }
  a.command =
      std::string(core::trim(symbols::read_proc_file("/proc/" + std::to_string(a.pid) + "/comm")));
  return a;
}

/// One turn of the sampling loop: the ring buffers read, new children followed, and (with
/// `pause`) the Python stacks read on this thread, until the next read of the buffers is due or
/// `deadline`, whichever is first.
void sampling_turn(Attached& a, const SampleOptions& o,
                   std::chrono::steady_clock::time_point deadline) {
  a.sampler->drain();
  if (a.python && o.children) a.python->watch(a.sampler->processes());
  auto wake = std::min(std::chrono::steady_clock::now() + a.sampler->drain_interval(), deadline);
  while (a.python && o.pause && std::chrono::steady_clock::now() < wake &&
         detail::g_interrupts.count.load() == 0) {
    auto due = a.python->poll() - core::monotonic_ns();
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::max<std::int64_t>(due, 0)));
  }
  std::this_thread::sleep_until(wake);
}

}  // namespace

Profile Sampler::attach(std::int64_t pid64, const SampleOptions& o) {
  if (std::isnan(o.duration_s)) throw Error("duration_s is not a number");
  auto a = attach_to(pid64, o);
  auto pid = a.pid;
  auto start_ns = core::monotonic_ns();
  // An infinite (or absurdly long) duration: until the process exits or a signal.
  auto until = o.duration_s > 1e9
                   ? std::chrono::steady_clock::time_point::max()
                   : std::chrono::steady_clock::now() +
                         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(std::max(o.duration_s, 0.0)));
  // Only this process's sampling is ended by an interrupt: the process sampled is not ours.
  while (std::chrono::steady_clock::now() < until && detail::g_interrupts.count.load() == 0 &&
         !process_gone(pid))
    sampling_turn(a, o, std::chrono::steady_clock::time_point::max());
  auto raw = a.sampler->finish();
  std::optional<sampling::PythonSamples> py;
  if (a.python) py = a.python->finish();
  auto p = sampling::to_profile(std::move(raw), o.hz, pid, o.children, "/tmp", py ? &*py : nullptr);
  p.pid = pid;
  p.command = a.command;
  if ((o.wall || o.gil) && !a.python)
    p.unavailable.push_back(std::string(o.gil ? "gil" : "wall") +
                            ": needs the Python frames that --no-python turns off: sampled "
                            "on CPU only");
  p.start_ns = start_ns;
  p.end_ns = core::monotonic_ns();
  add_machine(p);
  // The rank is the process's own (its environment as it started), not this one's.
  p.rank = RankInfo::of_process(pid);
  p.record_origin();
  return p;
}

void Sampler::watch(std::int64_t pid64, const SampleOptions& o, double interval_s,
                    const std::function<bool(const Profile&)>& on_interval,
                    const std::atomic<bool>* stop) {
  if (!(interval_s >= 0.01)) throw Error("the interval must be at least 0.01 s");
  auto a = attach_to(pid64, o);
  using clock = std::chrono::steady_clock;
  auto every =
      std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(interval_s));
  auto next = clock::now() + every;
  auto chunk_start = core::monotonic_ns();
  // The samples since the last interval, named, to the caller; false when it wants no more.
  auto deliver = [&] {
    auto raw = a.sampler->take();
    std::optional<sampling::PythonSamples> py;
    if (a.python) py = a.python->take();
    auto p =
        sampling::to_profile(std::move(raw), o.hz, a.pid, o.children, "/tmp", py ? &*py : nullptr);
    p.pid = a.pid;
    p.command = a.command;
    p.start_ns = chunk_start;
    p.end_ns = chunk_start = core::monotonic_ns();
    return on_interval(p);
  };
  bool more = true;
  while (more && !(stop && stop->load()) && !process_gone(a.pid)) {
    sampling_turn(a, o, std::min(next, clock::now() + std::chrono::milliseconds(50)));
    if (clock::now() >= next) {
      more = deliver();
      next = std::max(next + every, clock::now());
    }
  }
  // A process that ended: what it did last is still shown.
  if (more && !(stop && stop->load())) deliver();
  a.sampler->finish();
  if (a.python) a.python->finish();
}

struct SelfSampler::State {
  SampleOptions options;
  std::thread thread;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::optional<Profile> result;
  std::exception_ptr error;
  bool stopped = false;
  /// Whether the thread started sampling (or why not): kept here, not on the constructor's
  /// stack, so that the thread's last touch of it cannot outlive it.
  std::promise<void> started;
};

SelfSampler::SelfSampler(const SampleOptions& options) : state_(std::make_unique<State>()) {
  state_->options = options;
  State* s = state_.get();
  auto ready = s->started.get_future();
  s->thread = std::thread([s] {
    bool running = false;
    try {
      const auto& o = s->options;
      auto pid = static_cast<std::int32_t>(::getpid());
      auto self = static_cast<std::int32_t>(::gettid());
      // Every thread but this one, which only reads; the threads they start join by inheritance.
      std::vector<std::int32_t> tids;
      for (auto tid : symbols::thread_ids(pid))
        if (tid != self) tids.push_back(tid);
      auto so = perf_options(o);
      sampling::PerfSampler sampler(pid, tids, so, false);
      sampler.seed_from_proc(pid);
      std::unique_ptr<sampling::PythonPoller> python;
      if (o.python) {
        // Never stopped for a read: no thread may trace its own process.
        python = std::make_unique<sampling::PythonPoller>(
            sampling::PythonPollerOptions{o.hz, o.wall, false, false, o.gil});
        python->watch({pid});
      }
      std::string command(core::trim(symbols::read_proc_file("/proc/self/comm")));
      auto start_ns = core::monotonic_ns();
      running = true;
      s->started.set_value();
      {
        std::unique_lock lock(s->mutex);
        while (!s->stopping) {
          lock.unlock();
          sampler.drain();
          lock.lock();
          s->wake.wait_for(lock, sampler.drain_interval(), [s] { return s->stopping; });
        }
      }
      auto raw = sampler.finish();
      std::optional<sampling::PythonSamples> py;
      if (python) py = python->finish();
      auto p = sampling::to_profile(std::move(raw), o.hz, pid, false, "/tmp", py ? &*py : nullptr);
      p.pid = pid;
      p.command = command;
      p.start_ns = start_ns;
      p.end_ns = core::monotonic_ns();
      std::lock_guard lock(s->mutex);
      s->result = std::move(p);
    } catch (...) {
      if (!running)
        s->started.set_exception(std::current_exception());
      else {
        std::lock_guard lock(s->mutex);
        s->error = std::current_exception();
      }
    }
  });
  try {
    ready.get();
  } catch (...) {
    s->thread.join();
    throw;
  }
}

SelfSampler::~SelfSampler() {
  if (state_ && state_->thread.joinable()) {
    {
      std::lock_guard lock(state_->mutex);
      state_->stopping = true;
    }
    state_->wake.notify_all();
    state_->thread.join();
  }
}

Profile SelfSampler::stop() {
  if (state_->stopped) return {};
  state_->stopped = true;
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->wake.notify_all();
  state_->thread.join();
  if (state_->error) std::rethrow_exception(state_->error);
  return std::move(state_->result).value_or(Profile{});
}

}  // namespace mainboard
