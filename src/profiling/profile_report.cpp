// profile(fn): one function run under the profiler with GPU activity traced, and the verdict
// drawn from what was observed.
#include "mainboard/profile_report.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "json/fields.hpp"
#include "mainboard/gpu.hpp"
#include "mainboard/machine.hpp"
#include "profiling/analysis_util.hpp"

namespace mainboard {

const char* to_string(Bound bound) {
  switch (bound) {
    case Bound::memory: return "memory";
    case Bound::compute: return "compute";
    case Bound::unknown: return "unknown";
  }
  return "unknown";
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
    say(fmt::format("copies take {} of GPU time against {} in kernels", detail::duration(copy_ns),
                    detail::duration(kernel_ns)));
    return Bound::memory;
  }
  if (have_utilization && *memory_pct >= kMemoryBoundRatio * *sm_pct) {
    say(fmt::format(
        "the memory controller was busy {:.0f} % of the time against {:.0f} % for the SMs",
        *memory_pct, *sm_pct));
    return Bound::memory;
  }
  if (kernel_ns > 0) {
    if (have_utilization)
      say(
          fmt::format("kernels dominate and the memory controller was busy only {:.0f} % against "
                      "{:.0f} % for the SMs",
                      *memory_pct, *sm_pct));
    else
      say(fmt::format("kernels take {} against {} in copies (no utilization readings)",
                      detail::duration(kernel_ns), detail::duration(copy_ns)));
    return Bound::compute;
  }
  say("utilization readings without kernels or copies that explain them");
  return Bound::unknown;
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

  // Per kernel: the summary, and the shape of its last launch.
  for (const auto& k : profile.kernel_summaries()) {
    KernelStat s;
    s.name = k.name;
    s.calls = k.calls;
    s.total_ns = k.total_ns;
    s.share_pct = k.share_pct;
    r.kernels.push_back(std::move(s));
  }
  std::vector<const GpuActivity*> last(profile.activity_names.size(), nullptr);
  for (const auto& a : profile.activities)
    if (a.kind == GpuActivity::Kind::kernel && a.name < last.size()) last[a.name] = &a;
  for (std::size_t i = 0; i < last.size(); ++i) {
    if (!last[i]) continue;
    auto it = std::find_if(r.kernels.begin(), r.kernels.end(), [&](const KernelStat& s) {
      return s.name == profile.activity_names[i];
    });
    if (it == r.kernels.end()) continue;
    const auto& a = *last[i];
    it->grid = a.grid;
    it->block = a.block;
    it->registers_per_thread = a.registers_per_thread;
    it->shared_memory_bytes = a.static_shared_bytes + a.dynamic_shared_bytes;
    it->occupancy_pct =
        std::min(100.0, 100.0 * static_cast<double>(a.threads_per_block()) / 1024.0);
  }
  if (!r.kernels.empty()) {
    r.dominant_kernel = r.kernels.front().name;
    r.dominant_share_pct = r.kernels.front().share_pct;
  }

  // Device memory and utilization over the run.
  double memory_sum = 0, sm_sum = 0, mem_util_sum = 0;
  std::size_t memory_n = 0, util_n = 0;
  for (const auto& s : profile.device_samples) {
    auto bytes = s.process_memory_bytes ? s.process_memory_bytes : s.device_memory_used_bytes;
    if (bytes) {
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

std::string ProfileReport::report() const {
  using detail::duration;
  std::string out;
  std::string verdict = bound == Bound::memory    ? "MEMORY-bound"
                        : bound == Bound::compute ? "COMPUTE-bound"
                                                  : "UNKNOWN";
  out += fmt::format("{} over {} iteration{}: {}\n", verdict, iterations,
                     iterations == 1 ? "" : "s", bound_reason);
  if (!dominant_kernel.empty())
    out += fmt::format("dominant kernel: {} ({:.1f} % of kernel time)\n",
                       detail::clip(dominant_kernel, 80), dominant_share_pct);
  out +=
      fmt::format("kernels {} · copies {}", duration(total_kernel_ns), duration(total_memcpy_ns));
  if (total_memcpy_ns > 0) {
    out += fmt::format(" · copy bandwidth {:.1f} GB/s", achieved_bandwidth_gbps);
    if (peak_bandwidth_gbps > 0)
      out +=
          fmt::format(" ({:.0f} % of the {:.0f} GB/s peak)",
                      100.0 * achieved_bandwidth_gbps / peak_bandwidth_gbps, peak_bandwidth_gbps);
  }
  out += "\n";
  if (peak_memory_bytes)
    out += fmt::format("device memory: peak {}, mean {}\n", view::bytes(peak_memory_bytes),
                       view::bytes(avg_memory_bytes));
  if (!kernels.empty()) {
    out += fmt::format("{:<44} {:>7} {:>10} {:>6} {:>15} {:>12} {:>4} {:>7} {:>5}\n", "kernel",
                       "calls", "total", "share", "grid", "block", "regs", "shared", "occ");
    for (const auto& k : kernels)
      out +=
          fmt::format("{:<44} {:>7} {:>10} {:>5.1f}% {:>15} {:>12} {:>4} {:>7} {:>4.0f}%\n",
                      detail::clip(k.name, 44), k.calls, duration(k.total_ns), k.share_pct,
                      fmt::format("{}×{}×{}", k.grid[0], k.grid[1], k.grid[2]),
                      fmt::format("{}×{}×{}", k.block[0], k.block[1], k.block[2]),
                      k.registers_per_thread, view::bytes(k.shared_memory_bytes), k.occupancy_pct);
  }
  for (const auto& u : unavailable)
    out += "not traced: " + u + "\n";
  return out;
}

namespace {

/// cuCtxSynchronize of the calling thread's context, when the process has the driver loaded.
void synchronize_driver() {
  void* handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!handle) return;
  using Sync = int();
  if (auto* sync = reinterpret_cast<Sync*>(::dlsym(handle, "cuCtxSynchronize"))) sync();
  ::dlclose(handle);
}

}  // namespace

ProfileReport profile(const std::function<void()>& fn, const ProfileOptions& options,
                      Profile* evidence) {
  const Machine& machine = options.machine ? *options.machine : Machine::instance();
  for (std::uint32_t i = 0; i < options.warmup; ++i) {
    fn();
    if (options.sync) options.sync();
  }
  Collection c;
  c.features = Feature::spans | Feature::device | Feature::gpu_activity;
  c.activities = options.kinds;
  c.device_index = options.device_index;
  c.sample_interval_ms = options.sample_interval_ms;
  c.machine = &machine;
  Profiler p(c);
  for (std::uint32_t i = 0; i < options.iters; ++i) {
    MAINBOARD_SPAN("iteration");
    fn();
    if (options.sync) options.sync();
    p.sample();
  }
  if (!options.sync) synchronize_driver();
  p.stop();
  const Profile& result = p.result();

  double peak = 0;
  const auto& gpus = machine.gpus();
  if (options.device_index < gpus.size())
    peak = gpus[options.device_index]->peak_bandwidth_gbs().value_or(0);
  auto report = ProfileReport::from_profile(result, options.iters, peak, p.traced_activities(),
                                            options.kinds);
  if (evidence) *evidence = result;
  return report;
}

ProfileReport profile(const std::function<void()>& fn, const ProfileOptions& options) {
  return profile(fn, options, nullptr);
}

MAINBOARD_DEFINE_ENUM_JSON(Bound, Bound::memory, Bound::compute, Bound::unknown)

template <class V>
void fields(V& v, KernelStat& m) {
  v("name", m.name);
  v("calls", m.calls);
  v("total_ns", m.total_ns);
  v("share_pct", m.share_pct);
  v("grid", m.grid);
  v("block", m.block);
  v("registers_per_thread", m.registers_per_thread);
  v("shared_memory_bytes", m.shared_memory_bytes);
  v("occupancy_pct", m.occupancy_pct);
}
MAINBOARD_DEFINE_JSON(KernelStat)

template <class V>
void fields(V& v, ProfileReport& m) {
  v("iterations", m.iterations);
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
  v("sm_utilization_pct", m.sm_utilization_pct);
  v("memory_utilization_pct", m.memory_utilization_pct);
  v("kernels", m.kernels);
  v("unavailable", m.unavailable);
}
MAINBOARD_DEFINE_JSON(ProfileReport)

}  // namespace mainboard
