// The verdict on one workload (ProfileReport::from_profile): memory- or compute-bound and why,
// the dominant kernel, device memory. Pure functions of a Profile; profile(fn), which runs the
// workload, is in collect/, and the text of the verdict in view/.
#include "mainboard/profile_report.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "mainboard/json.hpp"
#include "model/json_fields.hpp"
#include "profile/kernel_fields.hpp"
#include "profile/text_util.hpp"

namespace mainboard {

using detail::duration;
using detail::fixed;

const char* to_string(Bound bound) {
  return detail::name_of(bound);
}

Bound classify(std::int64_t kernel_ns, std::int64_t copy_ns, std::optional<double> sm_pct,
               std::optional<double> memory_pct, std::string* reason) {
  auto say = [&](std::string text) {
    if (reason) *reason = std::move(text);
  };
  bool have_utilization = sm_pct && memory_pct && *sm_pct > 0;
  if (kernel_ns <= 0 && copy_ns <= 0 && !have_utilization) {
    say("no kernels, copies or utilization readings to classify");
    return Bound::unknown;
  }
  if (copy_ns > 0 && copy_ns >= kernel_ns) {
    say("copies take " + duration(copy_ns) + " of GPU time against " + duration(kernel_ns) +
        " in kernels");
    return Bound::memory;
  }
  if (have_utilization && *memory_pct > *sm_pct) {
    say("the memory controller was the busier unit: busy " + fixed(*memory_pct, 0) +
        " % of the time against " + fixed(*sm_pct, 0) + " % for the SMs");
    return Bound::memory;
  }
  if (have_utilization) {
    say(std::string(kernel_ns > 0 ? "kernels dominate and " : "") +
        "the SMs were the busier unit: busy " + fixed(*sm_pct, 0) + " % of the time against " +
        fixed(*memory_pct, 0) + " % for the memory controller");
    return Bound::compute;
  }
  say("kernels take " + duration(kernel_ns) + " against " + duration(copy_ns) +
      " in copies (no utilization readings)");
  return Bound::compute;
}

ProfileReport ProfileReport::from_profile(const Profile& profile, std::uint32_t iterations,
                                          double peak_bandwidth_gbps,
                                          std::optional<Activity> supported,
                                          std::optional<Activity> requested) {
  ProfileReport r;
  r.iterations = iterations;
  r.peak_bandwidth_gbps = peak_bandwidth_gbps;
  auto trace = profile.trace_report(SIZE_MAX);
  r.total_kernel_ns = trace.kernel_ns;
  r.total_memcpy_ns = trace.copy_ns;
  r.memcpy_bytes = trace.copy_bytes;
  if (trace.copy_ns > 0)
    r.achieved_bandwidth_gbps =
        static_cast<double>(trace.copy_bytes) / static_cast<double>(trace.copy_ns);

  // Per kernel: the summary with the shape of its last launch, and the occupancy it implies.
  for (auto& k : profile.kernel_summaries()) {
    KernelStat s;
    static_cast<KernelSummary&>(s) = std::move(k);
    s.occupancy_pct =
        std::min(100.0, 100.0 * static_cast<double>(s.shape.threads_per_block()) / 1024.0);
    r.kernels.push_back(std::move(s));
  }
  if (!r.kernels.empty()) {
    r.dominant_kernel = r.kernels.front().name;
    r.dominant_share_pct = r.kernels.front().share_pct;
  }

  // Device memory and utilization over the run.
  // The process's own memory where the driver reported it; the whole device's only where it
  // never did, and labelled so: another process's memory is never taken for this one's.
  double memory_sum = 0, sm_sum = 0, mem_util_sum = 0;
  std::size_t memory_n = 0, util_n = 0;
  bool per_process = std::any_of(profile.device_samples.begin(), profile.device_samples.end(),
                                 [](const DeviceSample& s) { return s.process_memory_bytes; });
  for (const auto& s : profile.device_samples) {
    auto bytes = per_process ? s.process_memory_bytes : s.device_memory_used_bytes;
    if (bytes) {
      r.memory_scope = per_process ? "process" : "device";
      r.peak_memory_bytes = std::max(r.peak_memory_bytes, *bytes);
      memory_sum += static_cast<double>(*bytes);
      ++memory_n;
    }
    // Only readings taken while the device was working say which unit limits the work.
    if (s.utilization_pct && s.memory_utilization_pct && *s.utilization_pct > 0) {
      sm_sum += *s.utilization_pct;
      mem_util_sum += *s.memory_utilization_pct;
      ++util_n;
    }
  }
  if (memory_n)
    r.avg_memory_bytes = static_cast<std::uint64_t>(memory_sum / static_cast<double>(memory_n));
  if (util_n) {
    r.sm_utilization_pct = sm_sum / static_cast<double>(util_n);
    r.memory_utilization_pct = mem_util_sum / static_cast<double>(util_n);
  }
  r.bound = classify(r.total_kernel_ns, r.total_memcpy_ns, r.sm_utilization_pct,
                     r.memory_utilization_pct, &r.bound_reason);

  // What was asked for and not traced, with the profile's reasons where it has them.
  for (const auto& u : profile.unavailable)
    if (u.rfind("gpu_activity", 0) == 0 || u.rfind("device", 0) == 0) r.unavailable.push_back(u);
  // Kinds missing from a partial trace that no reason names (a trace that did not start at all
  // is already explained by the profile).
  if (requested && supported && static_cast<std::uint32_t>(*supported) != 0) {
    auto missing = static_cast<std::uint32_t>(*requested) &
                   ~static_cast<std::uint32_t>(supported.value_or(Activity{}));
    for (std::uint32_t bit = 1; bit != 0 && bit <= static_cast<std::uint32_t>(Activity::all);
         bit <<= 1) {
      if (!(missing & bit)) continue;
      auto name = to_string(static_cast<Activity>(bit));
      bool said =
          std::any_of(r.unavailable.begin(), r.unavailable.end(),
                      [&](const std::string& u) { return u.find(name) != std::string::npos; });
      if (!said) r.unavailable.push_back(name + ": not traced");
    }
  }
  return r;
}

IterationTimes IterationTimes::of(const std::vector<std::int64_t>& ns) {
  IterationTimes t;
  if (ns.empty()) return t;
  t.count = static_cast<std::uint32_t>(std::min<std::size_t>(ns.size(), UINT32_MAX));
  std::vector<std::int64_t> sorted(ns);
  std::sort(sorted.begin(), sorted.end());
  t.min_ns = sorted.front();
  t.max_ns = sorted.back();
  auto n = sorted.size();
  t.median_ns = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  long double sum = 0;
  for (auto v : sorted)
    sum += static_cast<long double>(v);
  long double mean = sum / static_cast<long double>(n);
  t.mean_ns = static_cast<std::int64_t>(std::llround(mean));
  if (n > 1) {
    long double squares = 0;
    for (auto v : sorted)
      squares += (static_cast<long double>(v) - mean) * (static_cast<long double>(v) - mean);
    t.stdev_ns = static_cast<std::int64_t>(
        std::llround(std::sqrt(squares / static_cast<long double>(n - 1))));
  }
  return t;
}

MAINBOARD_DEFINE_ENUM_JSON(Bound)

template <class V>
void fields(V& v, IterationTimes& m) {
  v("count", m.count);
  v("min_ns", m.min_ns);
  v("median_ns", m.median_ns);
  v("mean_ns", m.mean_ns);
  v("stdev_ns", m.stdev_ns);
  v("max_ns", m.max_ns);
}
MAINBOARD_DEFINE_JSON(IterationTimes)

template <class V>
void fields(V& v, KernelStat& m) {
  fields(v, static_cast<KernelSummary&>(m));
  v("occupancy_pct", m.occupancy_pct);
}
MAINBOARD_DEFINE_JSON(KernelStat)

template <class V>
void fields(V& v, ProfileReport& m) {
  v("iterations", m.iterations);
  v("warmup", m.warmup);
  v("iteration_wall_ns", m.iteration_wall_ns);
  v("iteration_cpu_ns", m.iteration_cpu_ns);
  v("wall", m.wall);
  v("cpu", m.cpu);
  v("device", m.device);
  v("hot_functions", m.hot_functions);
  v("stack_samples", m.stack_samples);
  v("dominant_kernel", m.dominant_kernel);
  v("dominant_share_pct", m.dominant_share_pct);
  v("bound", m.bound);
  v("bound_reason", m.bound_reason);
  v("total_kernel_ns", m.total_kernel_ns);
  v("total_memcpy_ns", m.total_memcpy_ns);
  v("memcpy_bytes", m.memcpy_bytes);
  v("achieved_bandwidth_gbps", m.achieved_bandwidth_gbps);
  v("peak_bandwidth_gbps", m.peak_bandwidth_gbps);
  v("peak_memory_bytes", m.peak_memory_bytes);
  v("avg_memory_bytes", m.avg_memory_bytes);
  v("memory_scope", m.memory_scope);
  v("sm_utilization_pct", m.sm_utilization_pct);
  v("memory_utilization_pct", m.memory_utilization_pct);
  v("kernels", m.kernels);
  v("unavailable", m.unavailable);
}
MAINBOARD_DEFINE_JSON(ProfileReport)

}  // namespace mainboard
