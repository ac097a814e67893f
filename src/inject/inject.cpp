// libmainboard_inject.so: CUPTI tracing inside a program mainboard launches. The CUDA driver
// loads the file named by CUDA_INJECTION64_PATH while it initializes and calls
// InitializeInjection(); tracing then runs until the program exits, when the records are written,
// as a Profile, to the file MAINBOARD_INJECT_OUTPUT names.
//
//   MAINBOARD_INJECT_OUTPUT       where to write the profile (required)
//   MAINBOARD_INJECT_ACTIVITIES   kinds to trace, e.g. "kernel|memcpy" (default: the defaults)
//   MAINBOARD_INJECT_MAX          records to keep (default 1000000)
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "core/clock.hpp"
#include "core/text.hpp"
#include "model/enum_names.hpp"
#include "mainboard/profile.hpp"
#include "mainboard/profiler.hpp"
#include "collect/gpu_trace.hpp"

namespace {

struct Injected {
  std::mutex mutex;
  std::unique_ptr<mainboard::detail::GpuTracer> tracer;
  std::vector<std::string> unavailable;
  std::string output;
  std::int64_t start_ns = 0;
  bool written = false;
};
Injected& injected() {
  static auto* s =
      new Injected;  // never destroyed: the exit handler runs after static destructors may have
  return *s;
}

mainboard::Activity parse_kinds(const char* text) {
  if (!text || !*text) return mainboard::Activity::defaults;
  auto kinds = mainboard::detail::parse_activities(text);
  return kinds && *kinds != mainboard::Activity{} ? *kinds : mainboard::Activity::defaults;
}

void write_profile() {
  auto& s = injected();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.written || s.output.empty()) return;
  s.written = true;
  mainboard::Profile p;
  p.pid = ::getpid();
  p.start_ns = s.start_ns;
  p.end_ns = mainboard::core::monotonic_ns();
  p.unavailable = s.unavailable;
  if (s.tracer) {
    auto trace = s.tracer->finish();
    p.activity_names = std::move(trace.names);
    p.activities = std::move(trace.activities);
    p.dropped_activities = trace.dropped;
    s.tracer.reset();
  }
  try {
    p.save(s.output);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mainboard: cannot write the GPU trace: %s\n", e.what());
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  auto& s = injected();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.tracer || s.written) return 1;  // once per process
    const char* output = std::getenv("MAINBOARD_INJECT_OUTPUT");
    if (!output || !*output) return 0;
    s.output = output;
    // "%p": each process its own file (a CUDA program may start others).
    if (auto p = s.output.find("%p"); p != std::string::npos)
      s.output.replace(p, 2, std::to_string(::getpid()));
    s.start_ns = mainboard::core::monotonic_ns();
    std::uint64_t max = 1000000;
    if (const char* m = std::getenv("MAINBOARD_INJECT_MAX"); m && *m)
      max = mainboard::core::parse_u64(m).value_or(max);
    s.tracer = mainboard::detail::GpuTracer::start(
        parse_kinds(std::getenv("MAINBOARD_INJECT_ACTIVITIES")), max, s.unavailable);
  }
  std::atexit(write_profile);
  return 1;
}

/// For a program that wants its trace written before it exits (and for the tests).
extern "C" __attribute__((visibility("default"))) void mainboard_inject_flush(void) {
  write_profile();
}
