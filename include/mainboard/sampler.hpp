#pragma once

/// Stack sampling of another process: one launched (run), one running (attach), one stack of
/// every thread (dump). Part of mainboard::mainboard (perf_event_open, elfutils). The reference's
/// Profiler.run / attach / dump / measure are here, apart from the in-process session
/// (mainboard::Profiler, in the lean mainboard::spans), so that each class lives in one library.

#include <atomic>
#include <csignal>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mainboard/export.hpp"
#include "mainboard/profile.hpp"
#include "mainboard/profiler.hpp"

namespace mainboard {

/// How sampled stacks are walked.
enum class CallGraph {
  frame_pointers,  ///< by the kernel, along frame pointers: code without them is cut short
  /// A copy of the user stack per sample, unwound with the modules' CFI: also the frames of code
  /// built without frame pointers (libtorch, BLAS, most of a distribution's libraries)
  dwarf,
};

/// How Sampler::run and Sampler::attach sample another process.
struct MAINBOARD_API SampleOptions {
  CallGraph call_graph = CallGraph::dwarf;
  Feature features =
      Feature::defaults | Feature::stacks;   ///< stacks; spans and gpu_activity for run
  Activity activities = Activity::defaults;  ///< GPU kinds, through the injection library
  std::uint32_t hz = 99;                     ///< stack samples per second and thread
  /// Also sample the processes the target starts (attach: and those it had started already,
  /// its whole process tree).
  bool children = true;
  /// Also sample time in the kernel on the target's behalf (system calls, page faults) as a
  /// "[kernel]" frame above the user code that entered it, when kernel.perf_event_paranoid
  /// allows (else only user time, and `unavailable` says why).
  bool kernel = true;
  /// In CPython 3.9–3.13 processes, replace the interpreter's frames by the Python frames it
  /// runs (read from outside at the sampling rate, without stopping the process), keeping the
  /// native frames of C extensions between them.
  bool python = true;
  /// Wall-clock instead of on-CPU: Python threads are sampled at `hz` whether they run or wait
  /// (sleep, lock, I/O, GPU synchronisation), with their native frames when they were on a CPU.
  /// Threads without Python frames are still sampled on CPU only (said in `unavailable`).
  bool wall = false;
  /// Sample, at each wall-clock tick, only the Python thread that holds the GIL (py-spy's --gil):
  /// a program asleep gives (almost) no samples, a busy one one per tick, and no other thread's
  /// time (native threads, threads waiting for the GIL) is in the profile.
  bool gil = false;
  /// Stop the process for each read of its Python stacks (ptrace), as py-spy does by default:
  /// no read can tear, at the cost of stopping the program `hz` times a second. Without it the
  /// process runs on while it is read, and a read that does not validate is dropped (and
  /// counted in `unavailable`).
  bool pause = false;
  /// Without `pause`, a thread whose Python stack changed under three reads in a row (a tight
  /// loop of calls changes it faster than it can be read) is read once more with that thread
  /// alone stopped for the read (ptrace, tens of microseconds); `nonblocking` never stops it and
  /// leaves such stacks out (counted in `unavailable`), as py-spy's --nonblocking.
  bool nonblocking = false;
  double timeout_s = 0;  ///< run: end the target after this long (0: never)
  /// run: after an interrupt (SIGINT, SIGTERM, SIGHUP caught by the caller, as the command
  /// does), how long the target may take to end before it is sent SIGTERM, then SIGKILL.
  double kill_after_s = 10;
  double duration_s = 10;  ///< attach: how long to sample (ends early if the process exits)
  std::uint64_t max_samples = 10'000'000;
  std::uint64_t max_spans = 100000;  ///< for a target that links libmainboard
  /// A feature that cannot be collected throws instead of being listed in unavailable.
  bool strict = false;
  /// Where the target's standard streams go: inherited unless set (files, for tests).
  std::string stdout_path, stderr_path;
};

/// What Sampler::run observed: the profile, and how the target ended.
struct MAINBOARD_API RunResult {
  Profile profile;
  int exit_code = 0;  ///< the target's status, 128 + signal when a signal ended it
  int signal = 0;     ///< the signal that ended it, 0 when it exited
  bool timed_out = false;
};

/// An argument or local variable of a Python frame (DumpOptions::locals), read from the
/// process's memory, never by running code in it.
struct MAINBOARD_API LocalVariable {
  std::string name;
  /// A short repr: None, True/False, ints of any size, floats, 'str' and b'bytes' (cut past 60
  /// characters, with their length), tuples, lists and dicts of those (three levels, ten items),
  /// and "TYPE at 0x…" for anything else.
  std::string repr;
  bool argument = false;      ///< an argument of the call (else a local variable)
  std::uint64_t address = 0;  ///< the object's address in the process
};

/// One thread's stack at one instant (Sampler::dump), innermost frame first. In a Python
/// process the frames are Python's (module "[python]", `function (file:line)`), with the native
/// frames of C extensions and libraries between them when DumpOptions::native asks.
struct MAINBOARD_API ThreadStack {
  std::int64_t tid = 0;
  /// The Python thread's name (threading) where it has one, else the kernel's (comm).
  std::string name;
  std::vector<StackFrame> frames;
  /// Per frame, the native frame's address in the process (the instruction; for a caller, the
  /// return address less one), as eu-stack shows it; 0 for Python frames. Empty when the dump
  /// read Python stacks only.
  std::vector<std::uint64_t> addresses;
  /// What the kernel says the thread is doing: "running", "sleeping", "disk sleep", "stopped",
  /// "zombie" … ("" when it could not be read); a sleeping thread in a system call that says what
  /// it waits for is "waiting (lock)", "waiting (sleep)", "waiting (I/O)", "waiting (child)" or
  /// "waiting (signal)".
  std::string state;
  bool python = false;     ///< a Python thread (it has an interpreter thread state)
  bool holds_gil = false;  ///< the Python thread holding the GIL
  /// With DumpOptions::locals: per frame (as `frames`), its arguments then its local variables;
  /// empty for native frames. Empty otherwise.
  std::vector<std::vector<LocalVariable>> locals;
};
/// One asyncio task of a Python process (DumpOptions::async_aware): where its chain of awaits
/// stands, innermost coroutine first, and which tasks wait for it.
struct MAINBOARD_API AsyncTask {
  std::string name;                ///< "Task-1", or the name it was given
  std::int64_t tid = 0;            ///< the thread running it now; 0 while it is suspended
  std::vector<StackFrame> frames;  ///< innermost first, Python frames
  /// What it waits for: "task NAME", "gather" (the tasks gather waits on are awaited by it),
  /// "a future", or "" (running, or ready to run).
  std::string waiting_for;
  std::vector<std::uint32_t> awaited_by;  ///< indices into StackDump::tasks
};

struct MAINBOARD_API StackDump {
  std::int64_t pid = 0;
  /// "CPython 3.11.2 (python3.11)" for a Python process, else empty.
  std::string python;
  std::vector<ThreadStack> threads;
  std::vector<AsyncTask> tasks;          ///< with DumpOptions::async_aware
  std::vector<std::string> unavailable;  ///< what could not be read, and why
  /// Native: like eu-stack (a block per thread, a frame per line). Python: like py-spy dump (a
  /// thread per block with its state and GIL, `function (file:line)` innermost first).
  std::string text() const;
};

/// What Sampler::dump reads.
struct MAINBOARD_API DumpOptions {
  /// Only the main thread's stack (for Python, the thread that started the interpreter).
  bool all_threads = true;
  /// In a Python process, also the native frames between the Python ones (C extensions,
  /// libraries): the threads are stopped with ptrace while each is read. Without it a Python
  /// process is read without stopping it and only its Python threads are shown.
  bool native = false;
  /// Read Python frames where the process is CPython 3.9–3.13 (else native stacks only).
  bool python = true;
  /// Also every asyncio task's chain of awaits (CPython 3.11–3.13), awaited-by order.
  bool async_aware = false;
  /// Without `native`: a thread whose Python stack changed under every read is read once with
  /// that thread stopped (ptrace); `nonblocking` never stops it (the thread is then shown
  /// without frames, and `unavailable` says why).
  bool nonblocking = false;
  /// Also each Python frame's arguments and local variables (ThreadStack::locals), read from the
  /// process's memory (py-spy's --locals). Read as the stacks are: without --native, while the
  /// program runs on (a value may be read as it changes).
  bool locals = false;
};

/// What Sampler::measure reaches: a command to launch, a running process, or this process.
struct MAINBOARD_API Reach {
  enum class Kind { here, command, process } kind = Kind::here;
  std::vector<std::string> argv;  ///< command
  std::int64_t pid = 0;           ///< process
  static Reach here() { return {}; }
  static Reach command(std::vector<std::string> argv) {
    return {Kind::command, std::move(argv), 0};
  }
  static Reach process(std::int64_t pid) { return {Kind::process, {}, pid}; }
};

/// Catches `signals` while it lives, so that the library's long calls made meanwhile
/// (Sampler::run, attach and dump, measure_command) end as the command's do on Ctrl-C: a run
/// passes the signal on and waits for its program, an attach stops sampling and keeps what it
/// has, a dump lets the process go. For a program that otherwise handles signals itself (the
/// Python module, around its long calls); the handlers that were there are put back after.
class MAINBOARD_API InterruptScope {
 public:
  explicit InterruptScope(std::vector<int> signals = {SIGINT});
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
  /// The first signal caught so far, 0 for none.
  int signal() const noexcept;

  struct Handlers;

 private:
  std::unique_ptr<Handlers> handlers_;
};

/// Samples the calling process's own threads (those running now and those they start) from a
/// thread of its own, until stop(): the stacks of whatever the process runs meanwhile, its
/// Python frames included (profile(fn) samples its iterations so). The Python stacks are read
/// without ever stopping a thread (a thread cannot trace its own process): a read that tears is
/// left out and counted. Throws mainboard::Error when no sampling could start (perf_event_paranoid
/// and no Python frames to read).
class MAINBOARD_API SelfSampler {
 public:
  explicit SelfSampler(const SampleOptions& options = {});
  ~SelfSampler();
  SelfSampler(const SelfSampler&) = delete;
  SelfSampler& operator=(const SelfSampler&) = delete;
  /// Ends sampling and hands over what was sampled (once; later calls give an empty profile).
  Profile stop();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

/// Samples the stacks of other processes with perf_event_open and names their frames with
/// elfutils.
class MAINBOARD_API Sampler {
 public:
  /// Starts `argv` (no shell; PATH is searched), samples its stacks until it exits (or the
  /// timeout ends it), and joins the spans of a target that links mainboard::spans and the GPU
  /// activity of a CUDA target (CUDA injection). The target's streams and status are its own.
  /// Throws mainboard::Error when the program cannot be started.
  static RunResult run(const std::vector<std::string>& argv, const SampleOptions& options = {});
  /// Measures whatever `reach` names: a command (run), a process (attach). Reach::here() names
  /// the calling process, which a Profiler session measures, not this: it throws
  /// mainboard::Error rather than launch nothing.
  static Profile measure(const Reach& reach, const SampleOptions& options = {});
  /// Samples a running process (every thread, and the ones it starts) for options.duration_s.
  static Profile attach(std::int64_t pid, const SampleOptions& options = {});
  /// Samples a running process as attach does, without end: every `interval_s` the samples of
  /// that interval, named, go to `on_interval` (on this thread), until it returns false, `stop`
  /// is set, or the process ends (its last samples are still given). What `mainboard profile
  /// top` shows. Throws mainboard::Error as attach does.
  static void watch(std::int64_t pid, const SampleOptions& options, double interval_s,
                    const std::function<bool(const Profile&)>& on_interval,
                    const std::atomic<bool>* stop = nullptr);
  /// One stack of every thread of `pid`: its Python stacks when it is CPython (read from outside,
  /// see DumpOptions), native stacks unwound with libdw through ptrace otherwise; the process is
  /// always let go again, also on error. Throws mainboard::Error naming the setting that refused
  /// access (kernel.yama.ptrace_scope, CAP_SYS_PTRACE).
  static StackDump dump(std::int64_t pid, const DumpOptions& options = {});
  /// dump() of `pid` and of every process it started (and they started), as the tree is now:
  /// `pid`'s first, parents before their children (py-spy's --subprocesses). A descendant that
  /// cannot be dumped (it ended meanwhile) is said in the first dump's `unavailable`.
  static std::vector<StackDump> dump_tree(std::int64_t pid, const DumpOptions& options = {});
};

}  // namespace mainboard
