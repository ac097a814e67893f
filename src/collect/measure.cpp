// profile(fn): one function run under a Profiler (GPU activity traced where there is a GPU) and
// the process's own stack sampler, each iteration timed; the verdict drawn from what was
// observed (ProfileReport::from_profile), with the times and the hot functions beside it.
#include <dlfcn.h>

#include "core/clock.hpp"
#include "mainboard/gpu.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/profile_report.hpp"
#include "mainboard/profiler.hpp"
#include "mainboard/sampler.hpp"

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
  // A host without a GPU gets its times and stacks: asking for device readings and a CUDA trace
  // there only lists why each failed. An index past the GPUs there are still says so.
  const auto& gpus = machine.gpus();
  bool gpu = !gpus.empty();
  Collection c;
  c.features = gpu ? Feature::spans | Feature::device | Feature::gpu_activity : Feature::spans;
  c.activities = options.kinds;
  c.device_index = options.device_index;
  c.sample_interval_ms = options.sample_interval_ms;
  c.machine = &machine;
  Profiler p(c);
  std::optional<SelfSampler> sampler;
  std::string sampler_error;
  if (options.stack_hz > 0) {
    SampleOptions so;
    so.hz = options.stack_hz;
    try {
      sampler.emplace(so);
    } catch (const std::exception& e) {
      sampler_error = e.what();
    }
  }
  std::vector<std::int64_t> wall, cpu;
  wall.reserve(options.iters);
  cpu.reserve(options.iters);
  for (std::uint32_t i = 0; i < options.iters; ++i) {
    MAINBOARD_SPAN("iteration");
    auto wall0 = core::monotonic_ns();
    auto cpu0 = core::process_cpu_ns();
    fn();
    if (options.sync) options.sync();
    cpu.push_back(core::process_cpu_ns() - cpu0);
    wall.push_back(core::monotonic_ns() - wall0);
    p.sample();
  }
  if (!options.sync && gpu) synchronize_driver();
  Profile stacks;
  if (sampler) {
    try {
      stacks = sampler->stop();
    } catch (const std::exception& e) {
      sampler_error = e.what();
    }
  }
  p.stop();
  Profile result = p.result();

  double peak = 0;
  if (options.device_index < gpus.size())
    peak = gpus[options.device_index]->peak_bandwidth_gbs().value_or(0);
  auto report = ProfileReport::from_profile(result, options.iters, peak, p.traced_activities(),
                                            gpu ? options.kinds : Activity{});
  report.warmup = options.warmup;
  report.wall = IterationTimes::of(wall);
  report.cpu = IterationTimes::of(cpu);
  report.iteration_wall_ns = std::move(wall);
  report.iteration_cpu_ns = std::move(cpu);
  if (options.device_index < gpus.size()) report.device = gpus[options.device_index]->label();
  report.stack_samples = stacks.samples.size();
  // By self time: a function that only called others (main, the callable itself) is not hot.
  report.hot_functions = stacks.hot_functions(options.top_functions);
  std::erase_if(report.hot_functions, [](const FunctionStat& f) { return f.self_samples == 0; });
  if (!sampler_error.empty()) report.unavailable.push_back("stacks: " + sampler_error);
  for (const auto& u : stacks.unavailable)
    report.unavailable.push_back("stacks: " + u);
  if (evidence) {
    if (!stacks.samples.empty()) result.merge(stacks);
    if (!sampler_error.empty()) result.unavailable.push_back("stacks: " + sampler_error);
    *evidence = std::move(result);
  }
  return report;
}

ProfileReport profile(const std::function<void()>& fn, const ProfileOptions& options) {
  return profile(fn, options, nullptr);
}

}  // namespace mainboard
