#pragma once

// The host probes as one table, like the GPU and NPU providers, made from the rows of
// MAINBOARD_HOST_PROBES (mainboard/snapshot.hpp): each row's reader fills its part of a
// MachineSnapshot. The Machine runs identity probes once and live ones at every reading; gather
// runs them all over a recording file system, so what they read is what a recorded host holds.

#include <array>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/environ.hpp"
#include "core/fs.hpp"
#include "host/note.hpp"
#include "host/readers.hpp"
#include "mainboard/gpu.hpp"
#include "mainboard/runner.hpp"
#include "mainboard/snapshot.hpp"
#include "mainboard/toolchain.hpp"

namespace mainboard::machine {

/// What every probe reads through (host/readers.hpp).
using Sources = host::Sources;

/// Identity is read once per Machine (CPU model, board, user, tools); a live reading at every
/// snapshot (clocks, memory in use, cgroup, disks).
enum class Lifetime { identity, live };

struct HostProbe {
  const char* name;  ///< the diagnostic's name
  Lifetime lifetime;
  /// Identity probes whose fields this one reads; they run first.
  std::array<const char*, 2> after;
  /// Reads the host into the probe's fields of `snapshot`, saying in `note` what it could not.
  void (*fill)(const Sources& sources, MachineSnapshot& snapshot, host::Note& note);
  /// Copies the probe's fields from one snapshot to another (identity fields, read once, go
  /// into every snapshot).
  void (*copy)(const MachineSnapshot& from, MachineSnapshot& to);
};

/// Every host probe, in the order their diagnostics are listed.
std::span<const HostProbe> host_probes();
const HostProbe* find_probe(std::string_view name);

}  // namespace mainboard::machine
