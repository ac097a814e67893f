#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mainboard/profile.hpp"
#include "mainboard/span.hpp"

namespace mainboard {

class Machine;

/// What a session may collect. Only what is observed ends up in the Profile.
enum class Feature : std::uint32_t {
  spans = 1u << 0,         ///< span timings
  device = 1u << 1,        ///< the process's GPU memory and utilization while spans are open
  gpu_activity = 1u << 2,  ///< kernels and copies through CUPTI
  stacks = 1u << 3,        ///< stack samples (run / attach)
  all = spans | device | gpu_activity | stacks,
  defaults = spans | device,
};
constexpr Feature operator|(Feature a, Feature b) {
  return static_cast<Feature>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}
constexpr bool has(Feature set, Feature f) {
  return (static_cast<std::uint32_t>(set) & static_cast<std::uint32_t>(f)) != 0;
}

/// GPU activity kinds a session may trace through CUPTI (with Feature::gpu_activity).
enum class Activity : std::uint32_t {
  kernel = 1u << 0,  ///< kernels, traced concurrently (streams keep overlapping)
  memcpy = 1u << 1,  ///< copies, with bytes and direction
  memset = 1u << 2,
  synchronization = 1u << 3,  ///< stream, event and context synchronization calls
  overhead = 1u << 4,         ///< time CUPTI and the driver spend on tracing itself
  counters = 1u << 5,         ///< a hardware-counter pass (not in defaults)
  defaults = kernel | memcpy | memset,
  all = kernel | memcpy | memset | synchronization | overhead | counters,
};
constexpr Activity operator|(Activity a, Activity b) {
  return static_cast<Activity>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}
constexpr bool has(Activity set, Activity a) {
  return (static_cast<std::uint32_t>(set) & static_cast<std::uint32_t>(a)) != 0;
}
/// "kernel", "memcpy", …; for a set, the names joined with "|".
std::string to_string(Activity set);

/// Whether spans also push and pop NVTX ranges, so that an NVTX tool (Nsight Systems) shows
/// them on its timeline.
enum class NvtxBridge {
  off,
  when_attached,  ///< only when a tool is attached (NVTX_INJECTION64_PATH is set)
  always,         ///< even without a tool (each range is then a call into an empty function)
};

/// How a session collects: one value rather than six loose arguments, so that code holding a
/// policy hands it over whole (Profiler::under).
struct Collection {
  Feature features = Feature::defaults;
  std::uint32_t device_index = 0;  ///< which GPU (Machine::gpus() order) to sample
  std::uint32_t sample_interval_ms = 50;
  std::uint64_t max_spans = 100000;          ///< stored spans; statistics are exact regardless
  Activity activities = Activity::defaults;  ///< what Feature::gpu_activity traces
  std::uint64_t max_activities = 1000000;    ///< GPU activity records kept; the rest are counted
  NvtxBridge nvtx = NvtxBridge::when_attached;
  /// A requested feature that cannot be collected throws mainboard::Error naming it, instead of
  /// being listed in Profile::unavailable.
  bool strict = false;
  /// The machine to read GPUs from; null means Machine::instance().
  const Machine* machine = nullptr;
};

/// A handle for a span opened with Profiler::enter, for code that cannot use scopes.
struct SpanToken {
  std::uint32_t depth = 0;
  std::uint64_t session = 0;
};

/// How sampled stacks are walked.
enum class CallGraph {
  frame_pointers,  ///< by the kernel, along frame pointers: cheap; code without them is cut short
  dwarf,           ///< a copy of the user stack per sample, unwound with the modules' CFI
};

/// How Profiler::run and Profiler::attach sample another process.
struct SampleOptions {
  CallGraph call_graph = CallGraph::frame_pointers;
  Feature features =
      Feature::defaults | Feature::stacks;   ///< stacks; spans and gpu_activity for run
  Activity activities = Activity::defaults;  ///< GPU kinds, through the injection library
  std::uint32_t hz = 99;                     ///< stack samples per second and thread
  bool children = true;                      ///< also sample the processes the target starts
  /// Also sample time in the kernel on the target's behalf (system calls, page faults) as a
  /// "[kernel]" frame above the user code that entered it, when kernel.perf_event_paranoid
  /// allows (else only user time, and `unavailable` says why).
  bool kernel = true;
  double timeout_s = 0;    ///< run: end the target after this long (0: never)
  double duration_s = 10;  ///< attach: how long to sample (ends early if the process exits)
  std::uint64_t max_samples = 10'000'000;
  std::uint64_t max_spans = 100000;  ///< for a target that links libmainboard
  /// A feature that cannot be collected throws instead of being listed in unavailable.
  bool strict = false;
  /// Where the target's standard streams go: inherited unless set (files, for tests).
  std::string stdout_path, stderr_path;
};

/// What Profiler::run observed: the profile, and how the target ended.
struct RunResult {
  Profile profile;
  int exit_code = 0;  ///< the target's status, 128 + signal when a signal ended it
  int signal = 0;     ///< the signal that ended it, 0 when it exited
  bool timed_out = false;
};

/// One thread's stack at one instant (Profiler::dump), innermost frame first.
struct ThreadStack {
  std::int64_t tid = 0;
  std::string name;
  std::vector<StackFrame> frames;
};
struct StackDump {
  std::int64_t pid = 0;
  std::vector<ThreadStack> threads;
  std::string text() const;  ///< like eu-stack: a block per thread, a frame per line
};

/// What Profiler::measure reaches: a command to launch, a running process, or this process.
struct Reach {
  enum class Kind { here, command, process } kind = Kind::here;
  std::vector<std::string> argv;  ///< command
  std::int64_t pid = 0;           ///< process
  static Reach here() { return {}; }
  static Reach command(std::vector<std::string> argv) {
    return {Kind::command, std::move(argv), 0};
  }
  static Reach process(std::int64_t pid) { return {Kind::process, {}, pid}; }
};

/// A bounded profiling session, active from construction until stop() or destruction. Spans
/// anywhere in the process (any thread) are recorded while it is active. Only one session can
/// be active at a time: constructing a second throws mainboard::Error.
class Profiler {
 public:
  explicit Profiler(const Collection& collection = {});
  /// The same, from one collection policy.
  static std::unique_ptr<Profiler> under(const Collection& collection);
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  bool active() const;
  /// Ends the session: spans stop recording, the sampler stops, the Profile is frozen.
  void stop();
  /// Stops only the background device sampler.
  void stop_sampler();
  /// Takes one device reading now (when the device feature is on and a GPU exists).
  void sample();

  /// Opens a span named at run time on this thread (the name is copied and interned).
  SpanToken enter(std::string_view name);
  /// Closes the span of `token` on this thread, and any still open inside it.
  void exit(const SpanToken& token);

  /// The evidence so far (stops the session first if it is still active).
  const Profile& result();
  std::vector<SpanStat> stats();
  std::vector<SpanStat> bottlenecks(std::size_t top = 10);
  /// GPU activity attributed to span windows (empty without Feature::gpu_activity).
  TraceReport trace_report(std::size_t top = 10);
  /// The activity kinds CUPTI accepted for this session (none without gpu_activity).
  Activity traced_activities() const;
  std::string report();
  void show(bool color = true);

  /// Turns functions compiled with -finstrument-functions into spans (link mainboard::instrument),
  /// for the modules named here only: a shared object's file name or path, or "" / "main" for
  /// the executable. Names are resolved when the session ends. An empty list turns it off.
  void auto_instrument(std::vector<std::string> modules);

  /// Starts `argv` (no shell; PATH is searched), samples its stacks until it exits (or the
  /// timeout ends it), and joins the spans of a target that links libmainboard and the GPU
  /// activity of a CUDA target (CUDA injection). The target's streams and status are its own.
  /// Throws mainboard::Error when the program cannot be started.
  static RunResult run(const std::vector<std::string>& argv, const SampleOptions& options = {});
  /// Measures whatever `reach` names: a command (run), a process (attach). Reach::here() names
  /// the calling process, which a Profiler session measures, not this: it throws
  /// mainboard::Error rather than launch nothing.
  static Profile measure(const Reach& reach, const SampleOptions& options = {});
  /// Samples a running process (every thread, and the ones it starts) for options.duration_s.
  static Profile attach(std::int64_t pid, const SampleOptions& options = {});
  /// One stack of every thread of `pid`, unwound with libdw through ptrace; the process is
  /// always let go again, also on error.
  static StackDump dump(std::int64_t pid);

  struct Session;

 private:
  std::unique_ptr<Session> session_;
  std::unique_ptr<Profile> result_;
};

}  // namespace mainboard
