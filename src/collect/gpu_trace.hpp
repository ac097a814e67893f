#pragma once

// GPU activity tracing for a profiling session (CUPTI's activity API, loaded at run time). The
// records come back converted: demangled names interned, timestamps on CLOCK_MONOTONIC.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mainboard/profile.hpp"
#include "mainboard/profiler.hpp"

namespace mainboard::detail {

struct GpuTraceResult {
  std::vector<std::string> names;       ///< interned; GpuActivity::name indexes it
  std::vector<GpuActivity> activities;  ///< by start time
  std::uint64_t dropped = 0;            ///< lost by CUPTI or past max_records
};

/// One tracing session. CUPTI is process-wide, so only one tracer exists at a time.
class GpuTracer {
 public:
  /// Starts tracing `kinds`. Null when tracing is impossible (no CUPTI, built without the CUDA
  /// headers, another tracer running): the reason is appended to `unavailable`, as is each kind
  /// CUPTI refuses on its own, prefixed "gpu_activity: ".
  static std::unique_ptr<GpuTracer> start(Activity kinds, std::uint64_t max_records,
                                          std::vector<std::string>& unavailable);
  virtual ~GpuTracer() = default;
  /// The kinds CUPTI accepted.
  virtual Activity traced() const = 0;
  /// The records delivered so far (completed buffers are flushed first; a buffer CUPTI is still
  /// filling waits for the next peek or the finish), tracing going on.
  virtual GpuTraceResult peek() = 0;
  /// Flushes every buffer, stops tracing and returns the records. Once only.
  virtual GpuTraceResult finish() = 0;
};

}  // namespace mainboard::detail
