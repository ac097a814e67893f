// What a Profiler session collects beyond spans when the program links mainboard::mainboard: the
// process's GPU memory and utilization while spans are open, GPU activity through CUPTI, the
// machine snapshot, and in-process names of auto-instrumented functions. Installed into the span
// library when this library is loaded.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "collect/gpu_trace.hpp"
#include "core/clock.hpp"
#include "core/log.hpp"
#include "core/region_energy.hpp"
#include "mainboard/error.hpp"
#include "mainboard/machine.hpp"
#include "profile/reader_hook.hpp"
#include "spans/extension.hpp"
#include "symbols/function_names.hpp"
#include "traces/kineto.hpp"

namespace mainboard::collect {

namespace {

class Collectors final : public detail::SessionExtension {
 public:
  Collectors(const Collection& collection, const detail::SessionContext& context)
      : collection_(collection), open_spans_(context.open_spans) {}

  ~Collectors() override { stop_sampler(); }

  /// Everything the collection asks for beyond spans; what cannot be had goes to `unavailable`.
  void start(std::vector<std::string>& unavailable) {
    auto refuse = [&](const std::string& what) {
      if (collection_.strict) throw Error(what);
      unavailable.push_back(what);
    };
    bool device = has(collection_.features, Feature::device);
    bool activity = has(collection_.features, Feature::gpu_activity);
    machine_ = collection_.machine;
    // Device evidence is read against the machine; so is a snapshot asked for.
    if (!machine_ && (device || activity || collection_.machine_snapshot))
      machine_ = &Machine::instance();
    if (device) {
      const auto& gpus = machine_->gpus();
      if (collection_.device_index < gpus.size())
        gpu_ = gpus[collection_.device_index];
      else if (gpus.empty() && !collection_.strict)
        ;  // a host without GPUs: no reading to take, and none failed (the default asks for it)
      else
        refuse("device: no GPU at index " + std::to_string(collection_.device_index) + " (" +
               std::to_string(gpus.size()) + " found)");
    }
    if (activity) {
      std::vector<std::string> why;
      tracer_ = detail::GpuTracer::start(collection_.activities, collection_.max_activities, why);
      if (!tracer_ && collection_.strict)
        refuse(why.empty() ? "gpu_activity: unavailable" : why.back());
      unavailable.insert(unavailable.end(), why.begin(), why.end());
    }
    // The session's energy, host-wide, wherever it reads the machine: first reading now.
    if (machine_) {
      try {
        energy_.emplace(*machine_, true);
        energy_start_ = std::chrono::steady_clock::now();
      } catch (const std::exception& e) {
        core::log().debug("profiler: no energy reading: {}", e.what());
      }
    }
    if (gpu_) {
      auto interval =
          std::chrono::milliseconds(std::max<std::uint32_t>(collection_.sample_interval_ms, 1));
      sampler_ = std::thread([this, interval] { sample_while_spans_open(interval); });
    }
  }

  bool count_open_spans() const override { return gpu_ != nullptr; }

  void sample() override { take_sample(); }

  void stop_sampler() override {
    {
      std::lock_guard<std::mutex> lock(sampler_mutex_);
      sampler_stop_ = true;
    }
    sampler_wake_.notify_all();
    if (sampler_.joinable()) sampler_.join();
  }

  Activity traced() const override { return tracer_ ? tracer_->traced() : traced_; }

  void peek(Profile& profile) override {
    if (tracer_) put(profile, tracer_->peek());
    {
      std::lock_guard<std::mutex> lock(samples_mutex_);
      profile.device_samples = samples_;
    }
    name_and_describe(profile);
  }

  void finish(Profile& profile) override {
    stop_sampler();
    if (energy_) {
      std::lock_guard<std::mutex> lock(energy_mutex_);
      energy_->sample();
      profile.energy = energy_->result(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - energy_start_).count());
      energy_.reset();
    }
    if (tracer_) {
      traced_ = tracer_->traced();
      put(profile, tracer_->finish());
      tracer_.reset();
    }
    {
      std::lock_guard<std::mutex> lock(samples_mutex_);
      profile.device_samples = std::move(samples_);
    }
    name_and_describe(profile);
  }

 private:
  static void put(Profile& profile, detail::GpuTraceResult trace) {
    profile.activity_names = std::move(trace.names);
    profile.activities = std::move(trace.activities);
    profile.dropped_activities = trace.dropped;
  }

  /// Names auto-instrumented functions and adds the machine the evidence was read on.
  void name_and_describe(Profile& profile) const {
    symbols::name_functions(profile);
    if (!machine_) return;
    try {
      profile.machine = machine_->snapshot({.toolchain = false});
    } catch (const std::exception& e) {
      core::log().debug("profiler: no machine snapshot: {}", e.what());
    }
  }

  void sample_while_spans_open(std::chrono::milliseconds interval) {
    std::unique_lock<std::mutex> lock(sampler_mutex_);
    while (!sampler_stop_) {
      sampler_wake_.wait_for(lock, interval, [&] { return sampler_stop_; });
      if (sampler_stop_) break;
      // Only while some span is open: an idle process records nothing.
      if (open_spans_ && open_spans_->load(std::memory_order_relaxed) > 0) {
        lock.unlock();
        take_sample();
        lock.lock();
      }
    }
  }

  void take_sample() {
    if (energy_) {
      std::lock_guard<std::mutex> lock(energy_mutex_);
      energy_->sample_if_due();
    }
    if (!gpu_) return;
    DeviceSample s;
    s.t_ns = core::monotonic_ns();
    s.gpu = gpu_->info().index;
    // Only where this process is on the GPU: a GPU it does not use gives no readings, and
    // another process's work there is never taken for ours. Where the driver lists no
    // processes, the readings are device-wide (no process_memory_bytes says so).
    auto pid = static_cast<std::uint32_t>(::getpid());
    bool on_gpu = false;
    for (const auto& p : gpu_->processes()) {
      if (p.pid != pid) continue;
      on_gpu = true;
      if (p.used_memory_bytes)
        s.process_memory_bytes = s.process_memory_bytes.value_or(0) + *p.used_memory_bytes;
    }
    if (!on_gpu && gpu_->lists_processes()) return;
    auto mem = gpu_->memory();
    if (mem && mem->used_bytes) s.device_memory_used_bytes = mem->used_bytes;
    auto util = gpu_->utilization();
    if (util) {
      s.utilization_pct = util->compute_pct;
      s.memory_utilization_pct = util->memory_pct;
    }
    std::lock_guard<std::mutex> lock(samples_mutex_);
    samples_.push_back(s);
  }

  Collection collection_;
  const std::atomic<std::int64_t>* open_spans_ = nullptr;
  const Machine* machine_ = nullptr;
  std::shared_ptr<const Gpu> gpu_;
  mutable std::mutex samples_mutex_;
  std::vector<DeviceSample> samples_;
  std::thread sampler_;
  std::mutex sampler_mutex_;
  std::condition_variable sampler_wake_;
  bool sampler_stop_ = false;
  std::unique_ptr<detail::GpuTracer> tracer_;
  Activity traced_{};
  std::mutex energy_mutex_;
  std::optional<detail::EnergyTracker> energy_;
  std::chrono::steady_clock::time_point energy_start_;
};

std::unique_ptr<detail::SessionExtension> start(const Collection& collection,
                                                const detail::SessionContext& context,
                                                std::vector<std::string>& unavailable) {
  auto c = std::make_unique<Collectors>(collection, context);
  c->start(unavailable);
  return c;
}

// Loading this library (or linking its objects) installs the collectors into every later session,
// and the naming of auto-instrumented functions into every profile read.
const bool g_installed = (detail::install_session_extension(&start),
                          detail::install_profile_reader(&symbols::name_functions),
                          detail::install_trace_loader(&traces::load_trace), true);

}  // namespace

}  // namespace mainboard::collect
