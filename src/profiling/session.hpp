#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "mainboard/profiler.hpp"
#include "profiling/gpu_trace.hpp"
#include "profiling/thread_state.hpp"

namespace mainboard::detail {

/// Globals the span hot path reads. Only the session start and stop write them.
extern std::atomic<std::uint64_t> g_epoch;          // id of the active session, 0 for none
extern std::atomic<std::int64_t> g_budget;          // stored spans left to hand out
extern std::atomic<std::int64_t> g_open_outermost;  // threads inside at least one span
extern std::atomic<bool> g_count_open;              // whether to keep g_open_outermost
extern std::atomic<bool> g_nvtx;                    // spans also push NVTX ranges

/// Every ThreadState of the active session, so it can read them at stop. Threads register on
/// their first span of a session (the one lock of the hot path's life).
struct Registry {
  std::mutex mutex;
  std::uint64_t epoch = 0;  // the session registering now, 0 for none
  std::vector<std::shared_ptr<ThreadState>> threads;
};
Registry& registry();
/// This thread's state for the active session, or null.
ThreadState* current_state() noexcept;

}  // namespace mainboard::detail

namespace mainboard {

struct Profiler::Session {
  Collection collection;
  std::uint64_t epoch = 0;
  bool active = false;
  std::uint64_t start_ticks = 0, stop_ticks = 0;
  std::int64_t start_ns = 0, stop_ns = 0;
  std::vector<std::string> unavailable;

  // Device sampling.
  const Machine* machine = nullptr;
  std::shared_ptr<const Gpu> gpu;  // null without the device feature or a GPU
  std::mutex samples_mutex;
  std::vector<DeviceSample> samples;
  std::thread sampler;
  std::mutex sampler_mutex;
  std::condition_variable sampler_wake;
  bool sampler_stop = false;

  // GPU activity.
  std::unique_ptr<detail::GpuTracer> tracer;
  Activity traced{};  // what the tracer traced, kept after it finished

  void take_sample();
};

}  // namespace mainboard
