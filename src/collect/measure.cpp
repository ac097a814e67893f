// profile(fn): one function run under a Profiler with GPU activity traced, and the verdict drawn
// from what was observed (ProfileReport::from_profile).
#include <dlfcn.h>

#include "mainboard/gpu.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/profile_report.hpp"
#include "mainboard/profiler.hpp"

namespace mainboard {

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
  const Profile result = p.result();

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

}  // namespace mainboard
