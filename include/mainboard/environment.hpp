#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mainboard/export.hpp"

namespace mainboard {

/// A batch job scheduler whose client commands were found on PATH.
struct MAINBOARD_API Scheduler {
  std::string name;    ///< slurm, pbs, lsf, sge, htcondor, flux
  std::string binary;  ///< the client command that identified it, as an absolute path
  bool operator==(const Scheduler&) const = default;
};

/// The job this process runs inside, when a scheduler's job variables are set.
struct MAINBOARD_API Job {
  std::string scheduler;  ///< which scheduler set the variables
  std::string id;         ///< e.g. SLURM_JOB_ID
  std::string name;       ///< job name where the scheduler exports it
  std::optional<std::string> array_task;
  bool operator==(const Job&) const = default;
};

/// Who runs, and where work can be sent.
struct MAINBOARD_API Environment {
  std::string user;
  std::string group;                   ///< primary group
  std::vector<std::string> groups;     ///< every group, primary first
  std::optional<Scheduler> scheduler;  ///< the first one found, in the table's order
  std::vector<Scheduler> schedulers;   ///< every one found
  std::optional<Job> job;              ///< set when running inside a batch job
  bool operator==(const Environment&) const = default;
};

/// The operating system: what fastfetch and `uname -r` say.
struct MAINBOARD_API OperatingSystem {
  std::string name;        ///< os-release's PRETTY_NAME: "Debian GNU/Linux 12 (bookworm)"
  std::string id;          ///< os-release's ID: "debian", "ubuntu", "rhel"
  std::string version_id;  ///< os-release's VERSION_ID: "12", "22.04"
  std::string kernel;      ///< the kernel's release: "6.1.0-18-amd64"
  std::string libc;        ///< the C library: "glibc 2.36" (empty when not known)
  /// The kernel's base page: 4 KiB on x86; 4 or 64 KiB on arm64 (Grace and Ampere kernels are
  /// often built for 64 KiB, which changes RSS arithmetic, ring-buffer sizes and alignment).
  std::optional<std::uint64_t> page_size_bytes;
  bool operator==(const OperatingSystem&) const = default;
};

}  // namespace mainboard
