#pragma once

#include <exception>

#include "core/clock.hpp"
#include "core/log.hpp"
#include "host/note.hpp"

namespace mainboard::host {

/// Runs a probe, timing it and turning an escaped exception into a "failed" diagnostic, so no
/// probe can take the snapshot down.
template <class T, class F>
T run_probe(const char* name, Diagnostic& diag, F&& make) {
  auto t0 = core::monotonic_ns();
  host::Note note;
  T value{};
  try {
    value = make(note);
  } catch (const std::exception& e) {
    note.failed(e.what());
    core::log().warn("probe {} failed: {}", name, e.what());
  } catch (...) {
    note.failed("unknown exception");
    core::log().warn("probe {} failed with an unknown exception", name);
  }
  diag = Diagnostic{name, note.status, note.reason, core::monotonic_ns() - t0};
  // -v: every probe, what came of it and what it cost.
  core::log().debug("probe {}: {} in {:.2f} ms{}{}", name,
                    diag.status == ProbeStatus::ok            ? "ok"
                    : diag.status == ProbeStatus::unsupported ? "unsupported"
                                                              : "failed",
                    static_cast<double>(diag.duration_ns) / 1e6, diag.reason.empty() ? "" : ": ",
                    diag.reason);
  return value;
}

}  // namespace mainboard::host
