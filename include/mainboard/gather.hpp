#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "mainboard/export.hpp"

namespace mainboard {

struct MAINBOARD_API GatherOptions {
  /// The host to gather: empty for this one; a recorded host's directory gathers it again
  /// (keeping only what the probes read).
  std::filesystem::path sysroot;
  /// The hostname the gathered tree reports (the real one is never written).
  std::string hostname = "gathered-host";
  /// Write into a directory that is not empty.
  bool force = false;
};

struct MAINBOARD_API GatherReport {
  std::size_t files = 0;        ///< files and links written with what the probes read
  std::size_t empty_files = 0;  ///< files the probes only looked for, written empty
  std::size_t commands = 0;     ///< command outputs recorded
  bool gpu_scenario = false;    ///< NVIDIA readings written as .mainboard/gpu-scenario.json
  std::vector<std::string> notes;
};

/// Copies what mainboard reads on this host — every file, link and directory its probes and
/// providers read, the outputs of the commands they run, the statvfs figures and the
/// environment variables they look up, and the CPU topology as hwloc XML — into `dir` as a
/// sysroot, scrubbed of serial numbers, hostnames and other accounts, so that
/// `MAINBOARD_SYSROOT=dir mainboard snapshot` reproduces this host elsewhere. On a host with
/// NVIDIA GPUs the NVML and CUDA readings are also written as a scenario for the fake driver
/// libraries of the test suite. Throws mainboard::Error when `dir` cannot be written.
MAINBOARD_API GatherReport gather_host(const std::filesystem::path& dir,
                                       const GatherOptions& options = {});

}  // namespace mainboard
