#pragma once

// The readers of the host probe table (MAINBOARD_HOST_PROBES in mainboard/snapshot.hpp): one
// function per row, `Part read_<name>(sources, so_far, note)`, declared here from the table and
// defined beside the probe it runs (host/<x>_linux.cpp, or machine/probe_table.cpp for those
// that compose other layers). A reader never throws; what it cannot read it says in `note`.

#include <functional>
#include <memory>
#include <vector>

#include "core/environ.hpp"
#include "core/fs.hpp"
#include "host/note.hpp"
#include "mainboard/gpu.hpp"
#include "mainboard/runner.hpp"
#include "mainboard/snapshot.hpp"
#include "mainboard/toolchain.hpp"

namespace mainboard::host {

/// What every probe reads through.
struct Sources {
  std::shared_ptr<const core::Fs> fs;
  core::EnvMap env;
  std::shared_ptr<const Runner> runner;
  /// The toolchain probe's version cache, when one is used.
  ToolCache* tool_cache = nullptr;
  /// The providers' GPUs (compilers derive CMAKE_CUDA_ARCHITECTURES from them).
  std::function<const std::vector<std::shared_ptr<Gpu>>&()> gpus;
};

/// `so_far` holds the parts of the probes named in the row's `after`, already read.
#define MAINBOARD_DECLARE_READER(name, lifetime, after, Part, member, path) \
  Part read_##name(const Sources& sources, const MachineSnapshot& so_far, Note& note);
MAINBOARD_HOST_PROBES(MAINBOARD_DECLARE_READER)
#undef MAINBOARD_DECLARE_READER

}  // namespace mainboard::host
