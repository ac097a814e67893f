#pragma once

/// The profiling session. Part of mainboard::spans, the small library an instrumented program
/// links (C and C++ runtime only): spans, the session, its Profile, save. Linking
/// mainboard::mainboard as well adds what a session can collect beyond spans (GPU sampling,
/// CUPTI activity, the machine snapshot) and names auto-instrumented functions in process; a
/// spans-only program lists those in Profile::unavailable instead.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mainboard/export.hpp"
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
MAINBOARD_API std::string to_string(Activity set);

/// Whether spans also push and pop NVTX ranges, so that an NVTX tool (Nsight Systems) shows
/// them on its timeline.
enum class NvtxBridge {
  off,
  when_attached,  ///< only when a tool is attached (NVTX_INJECTION64_PATH is set)
  always,         ///< even without a tool (each range is then a call into an empty function)
};

/// How a session collects: one value rather than six loose arguments, so that code holding a
/// policy hands it over whole (Profiler::under).
struct MAINBOARD_API Collection {
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
  /// Also put the machine snapshot into the profile. It is taken anyway when the session
  /// collects device evidence (device, gpu_activity); a spans-only session never reads the
  /// machine unless asked here.
  bool machine_snapshot = false;
  /// The machine to read GPUs from; null means Machine::instance().
  const Machine* machine = nullptr;
};

/// A handle for a span opened with Profiler::enter, for code that cannot use scopes.
struct MAINBOARD_API SpanToken {
  std::uint32_t depth = 0;
  std::uint64_t session = 0;
};

/// A bounded profiling session, active from construction until stop() or destruction. Spans
/// anywhere in the process (any thread) are recorded while it is active. Only one session can
/// be active at a time: constructing a second throws mainboard::Error.
class MAINBOARD_API Profiler {
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
  /// The same, with the span's duration measured by the caller (`wall_ns`, at least 0): it is
  /// recorded as ending wall_ns after it began. Spans still open inside it close now.
  void exit(const SpanToken& token, std::int64_t wall_ns);

  /// The evidence observed so far, frozen into a Profile, while the session goes on: span
  /// statistics and stored spans, device samples, the GPU activity CUPTI has delivered, the
  /// machine now. Only stop() or the destructor ends the session; after stop(), the final Profile.
  Profile result() const;
  /// The same readings, from result().
  std::vector<SpanStat> stats() const;
  std::vector<SpanStat> bottlenecks(std::size_t top = 10) const;
  /// GPU activity attributed to span windows (empty without Feature::gpu_activity).
  TraceReport trace_report(std::size_t top = 10) const;
  /// The activity kinds CUPTI accepted for this session (none without gpu_activity).
  Activity traced_activities() const;
  /// The text report and its printing belong to the view layer: link mainboard::mainboard.
  std::string report() const { return result().report(); }
  void show(bool color = true) const { result().show(color); }

  /// Turns functions compiled with -finstrument-functions into spans (link mainboard::instrument),
  /// for the modules named here only: a shared object's file name or path, or "" / "main" for
  /// the executable. An empty list turns it off. The spans carry addresses while recording;
  /// they are named where the profile is read (`mainboard profile report`), or at the end of
  /// the session when the program links mainboard::mainboard.
  void auto_instrument(std::vector<std::string> modules);

  struct Session;

 private:
  std::unique_ptr<Session> session_;
  std::unique_ptr<Profile> result_;
};

}  // namespace mainboard
