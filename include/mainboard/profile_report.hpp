#pragma once

/// The verdict on one workload: run a function under the profiler, time each iteration (wall and
/// CPU, as timeit would), sample where its CPU time goes, and on a GPU say which kernel dominates
/// and whether it is bound by memory or compute.
///
///   auto r = mainboard::profile([&] { step(); }, {.iters = 20, .warmup = 3});
///   std::cout << r.report();   // "20 iterations timed … MEMORY-bound … copy_kernel 92.1 % …"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/export.hpp"
#include "mainboard/profile.hpp"
#include "mainboard/profiler.hpp"

namespace mainboard {

/// Whether the dominant work is limited by memory traffic or by compute.
enum class Bound { memory, compute, unknown };
MAINBOARD_API const char* to_string(Bound bound);

/// One kernel name over the run, with a launch-shape occupancy figure.
struct MAINBOARD_API KernelStat : KernelSummary {
  /// A launch-shape proxy, not achieved occupancy: threads per block over the 1024 maximum
  /// (the activity record carries the launch configuration, not what the SMs achieved).
  double occupancy_pct = 0;
  bool operator==(const KernelStat&) const = default;
};

/// One figure over the timed iterations of profile(): a wall or CPU time per iteration.
struct MAINBOARD_API IterationTimes {
  std::uint32_t count = 0;  ///< iterations timed
  std::int64_t min_ns = 0;
  std::int64_t median_ns = 0;
  std::int64_t mean_ns = 0;
  std::int64_t stdev_ns = 0;  ///< the sample standard deviation (0 for one iteration)
  std::int64_t max_ns = 0;
  /// The figures of a list of per-iteration times (empty: all zero).
  static IterationTimes of(const std::vector<std::int64_t>& ns);
  bool operator==(const IterationTimes&) const = default;
};

/// The verdict on one profiled workload.
struct MAINBOARD_API ProfileReport {
  std::uint32_t iterations = 0;
  std::uint32_t warmup = 0;  ///< untimed runs before the timed ones (profile())
  /// Each timed iteration's wall time (the function and its `sync`), and the process's CPU time
  /// over it (all its threads: a multithreaded kernel's CPU time exceeds its wall time; the
  /// sampler's own thread is among them). Empty when the report came from a saved profile.
  std::vector<std::int64_t> iteration_wall_ns;
  std::vector<std::int64_t> iteration_cpu_ns;
  IterationTimes wall;  ///< over iteration_wall_ns
  IterationTimes cpu;   ///< over iteration_cpu_ns
  /// The GPU the verdict is scored against ("NVIDIA H200"); empty on a host without one, where
  /// the report is the times and hot functions alone.
  std::string device;
  /// Where the iterations spent their CPU time: the functions the stack sampler saw most, by
  /// self time (the Python functions of a Python callable, with the native frames under them).
  std::vector<FunctionStat> hot_functions;
  std::uint64_t stack_samples = 0;  ///< samples behind hot_functions
  std::string dominant_kernel;      ///< the kernel with the most time, empty without kernels
  double dominant_share_pct = 0;
  Bound bound = Bound::unknown;
  std::string bound_reason;  ///< the rule that decided, with its figures
  std::int64_t total_kernel_ns = 0;
  std::int64_t total_memcpy_ns = 0;  ///< copies and sets
  std::uint64_t memcpy_bytes = 0;
  double achieved_bandwidth_gbps = 0;   ///< copy bytes over copy time, 0 without copies
  double peak_bandwidth_gbps = 0;       ///< the device's, 0 when unknown
  std::uint64_t peak_memory_bytes = 0;  ///< device memory high-water mark over the run
  std::uint64_t avg_memory_bytes = 0;
  /// Whose memory the two figures are: "process" (this process's own, as the driver lists it),
  /// "device" (the whole GPU's, other processes included: the driver gave no per-process
  /// figure), empty without readings.
  std::string memory_scope;
  std::optional<double> sm_utilization_pct;      ///< mean over the busy device samples
  std::optional<double> memory_utilization_pct;  ///< mean memory-controller utilization
  std::vector<KernelStat> kernels;               ///< hottest first
  std::vector<std::string> unavailable;  ///< requested activity kinds the device could not trace

  /// Distils a profile. `peak_bandwidth_gbps` 0 disables the bandwidth score; `requested` kinds
  /// missing from `supported` are listed in `unavailable` (with the profile's own reasons).
  static ProfileReport from_profile(const Profile& profile, std::uint32_t iterations,
                                    double peak_bandwidth_gbps,
                                    std::optional<Activity> supported = std::nullopt,
                                    std::optional<Activity> requested = std::nullopt);
  /// A compact verdict and the kernel table.
  std::string report() const;
  bool operator==(const ProfileReport&) const = default;
};

/// The verdict rule, on its own, as the reference words it: MEMORY when copies dominate the GPU
/// time or the memory controller is the busier unit (NVML's utilization while the device
/// worked); COMPUTE when kernels dominate or the SMs are the busier unit; UNKNOWN with nothing
/// to classify. `reason` gets the rule that decided, with its figures.
MAINBOARD_API Bound classify(std::int64_t kernel_ns, std::int64_t copy_ns,
                             std::optional<double> sm_utilization_pct,
                             std::optional<double> memory_utilization_pct,
                             std::string* reason = nullptr);

/// How profile() runs its function.
struct MAINBOARD_API ProfileOptions {
  std::uint32_t iters = 1;   ///< timed runs, in one trace pass
  std::uint32_t warmup = 0;  ///< untimed runs first
  /// A device barrier after each run (e.g. cudaDeviceSynchronize), so the asynchronous GPU work
  /// is captured rather than only its launch. Without one, the CUDA driver's cuCtxSynchronize
  /// runs once at the end when the driver is loaded in the process.
  std::function<void()> sync;
  Activity kinds = Activity::defaults;
  std::uint32_t device_index = 0;  ///< which GPU (Machine::gpus() order) to score against
  std::uint32_t sample_interval_ms = 20;
  const Machine* machine = nullptr;  ///< null: Machine::instance()
  /// Sample the stacks of the timed iterations (SelfSampler) for the report's hot functions, at
  /// this rate per thread; 0 turns the sampler off.
  std::uint32_t stack_hz = 199;
  std::size_t top_functions = 10;  ///< how many hot functions the report keeps
};

/// Runs `fn` under a profiler with GPU activity and device sampling (where the machine has a
/// GPU) and stack sampling, times each iteration, and returns the verdict.
/// Throws mainboard::Error when another profiling session is active.
MAINBOARD_API ProfileReport profile(const std::function<void()>& fn,
                                    const ProfileOptions& options = {});
/// The same, also handing back the full Profile (for save(), perfetto(), efficiency()).
MAINBOARD_API ProfileReport profile(const std::function<void()>& fn, const ProfileOptions& options,
                                    Profile* evidence);

}  // namespace mainboard
