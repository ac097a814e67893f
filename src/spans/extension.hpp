#pragma once

// The seam between the lean span library and the full one. A Profiler session (mainboard::spans)
// records spans only; what else it collects — GPU sampling, CUPTI activity, the machine
// snapshot, in-process names of auto-instrumented functions — is a SessionExtension that
// mainboard::mainboard installs when it is loaded. A program that links only the span library
// has none, and its sessions say so in Profile::unavailable.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mainboard/export.hpp"
#include "mainboard/profiler.hpp"

namespace mainboard::detail {

/// What the session lends its extension.
struct SessionContext {
  /// Threads inside at least one span right now (kept while count_open_spans() says so).
  const std::atomic<std::int64_t>* open_spans = nullptr;
};

/// One session's collectors beyond spans. Created at the session's start, finished at its stop.
class SessionExtension {
 public:
  virtual ~SessionExtension() = default;
  /// Whether the session should count threads inside spans (the device sampler reads only then).
  virtual bool count_open_spans() const { return false; }
  /// Profiler::sample(): one reading now.
  virtual void sample() {}
  /// Profiler::stop_sampler(): background sampling ends, the rest goes on.
  virtual void stop_sampler() {}
  /// The GPU activity kinds being (or that were) traced.
  virtual Activity traced() const { return Activity{}; }
  /// Adds what it has collected so far to `profile` (Profiler::result while active), the session
  /// going on.
  virtual void peek(Profile& profile) { static_cast<void>(profile); }
  /// Called once, after the spans are frozen into `profile` and before the session's
  /// `unavailable` reasons are final: adds its evidence (device samples, GPU activity, the
  /// machine) and names auto-instrumented functions.
  virtual void finish(Profile& profile) = 0;
};

/// Starts the extension for `collection`. Appends what it cannot collect to `unavailable`
/// ("device: no GPU at index 1 (0 found)"); throws mainboard::Error instead when the collection
/// is strict. Returns null when there is nothing to add.
using ExtensionFactory = std::unique_ptr<SessionExtension> (*)(
    const Collection& collection, const SessionContext& context,
    std::vector<std::string>& unavailable);

/// Installed by mainboard::mainboard at load time; sessions started afterwards use it.
MAINBOARD_API void install_session_extension(ExtensionFactory factory) noexcept;
ExtensionFactory session_extension() noexcept;

}  // namespace mainboard::detail
