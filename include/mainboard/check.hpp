#pragma once

// Is this node ready for a benchmark or a job? Findings from one machine snapshot: what was
// read, why it matters, how severe it is, and the fix (docs/check.md lists every rule).

#include <string>
#include <vector>

#include "mainboard/export.hpp"
#include "mainboard/snapshot.hpp"

namespace mainboard {

/// blocker: the node is not ready; warning: not ready under --strict; info: worth knowing.
enum class Severity { info, warning, blocker };
MAINBOARD_API const char* to_string(Severity severity);

struct MAINBOARD_API Finding {
  std::string id;       ///< the rule: "cpu.governor", "gpu.processes", …
  std::string subject;  ///< "host", "GPU 3"
  Severity severity = Severity::info;
  std::string reading;  ///< what was read: "powersave on cpu0-31"
  std::string why;      ///< why it matters for measured work
  std::string fix;      ///< the command or setting that fixes it (empty when none is needed)
  bool operator==(const Finding&) const = default;
};

struct MAINBOARD_API Readiness {
  std::string hostname;
  bool strict = false;            ///< warnings count as not ready
  std::vector<Finding> findings;  ///< most severe first
  /// No blocker (and, when strict, no warning either).
  bool ready() const;
  std::size_t count(Severity severity) const;
  /// The findings as a terminal report, most severe first (colour with `color`).
  std::string text(bool color = false) const;
  bool operator==(const Readiness&) const = default;
};

/// The rules over one snapshot (take it with the toolchain skipped: check reads no tools).
MAINBOARD_API Readiness check_readiness(const MachineSnapshot& snapshot, bool strict = false);

}  // namespace mainboard
