#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mainboard/board.hpp"
#include "mainboard/cgroup.hpp"
#include "mainboard/cpu.hpp"
#include "mainboard/cuda.hpp"
#include "mainboard/environment.hpp"
#include "mainboard/export.hpp"
#include "mainboard/gpu.hpp"
#include "mainboard/memory.hpp"
#include "mainboard/npu.hpp"
#include "mainboard/runner.hpp"
#include "mainboard/snapshot.hpp"
#include "mainboard/storage.hpp"
#include "mainboard/toolchain.hpp"

namespace mainboard {

/// CPU, memory and disk of the host together.
struct MAINBOARD_API Host {
  CpuInfo cpu;
  Reading<Memory> memory;
  Disk disk;
};

struct MAINBOARD_API SnapshotOptions {
  bool toolchain = true;  ///< run (or read from cache) the toolchain probe
};

/// The facade over the host and its units. Identity (CPU, board, environment, toolchain, GPU
/// list) is computed once on first use, thread-safely; readings are taken afresh at each call.
class MAINBOARD_API Machine {
 public:
  struct Options {
    /// Root for every system read; empty means MAINBOARD_SYSROOT, else "/".
    std::filesystem::path sysroot;
    /// Environment variables as the probes should see them; empty means this process's own,
    /// or, for a recorded sysroot, the variables recorded with it.
    std::optional<std::map<std::string, std::string>> environment;
    /// Runs external commands; empty means a LocalRunner on PATH, or, for a sysroot, a
    /// ReplayRunner over the commands recorded with it.
    std::shared_ptr<const Runner> runner;
    /// The toolchain version cache: on by default, at ToolCache::default_file().
    bool toolchain_cache = true;
    std::optional<std::filesystem::path> toolchain_cache_file;
    /// For a long-running reader (a metrics server): where the kernel log cannot be read (it
    /// needs root or CAP_SYSLOG), listen to NVML's XID events from the moment the GPUs are
    /// found, on a thread of the machine's own. One-shot readers leave it off: they would only
    /// ever count the XIDs of their own few milliseconds.
    bool listen_for_xids = false;
  };

  /// The process-wide machine over MAINBOARD_SYSROOT (or /).
  static Machine& instance();

  Machine();
  explicit Machine(Options options);
  ~Machine();
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  const std::filesystem::path& sysroot() const;
  bool is_live() const;  ///< probing this host, not a recorded one

  const Cpu& cpu() const;
  Host host() const;
  const std::vector<std::shared_ptr<Gpu>>& gpus() const;
  const std::vector<std::shared_ptr<Npu>>& npus() const;
  /// One GPU provider's devices ("nvidia"), probed afresh; none when it fails or is unknown.
  std::vector<std::shared_ptr<Gpu>> probe_gpus(const std::string& provider) const;
  /// The CPU, then every GPU and NPU.
  std::vector<const Unit*> units() const;

  const Environment& environment() const;
  const Reading<Board>& board() const;
  const Toolchain& toolchain() const;
  const CompilerConfig& compilers() const;
  std::optional<std::string> nvcc_path() const;
  /// The NVIDIA libraries and toolkit found on the host, or why not (computed once).
  const CudaStack& cuda_stack() const;
  /// Compute capability of the first visible GPU without the dot, e.g. "90".
  std::optional<std::string> cuda_architecture() const;

  std::string hostname() const;
  Reading<Memory> memory() const;
  MemoryHardware memory_hardware() const;
  Reading<CgroupMemory> cgroup_memory() const;
  /// Pressure stall information now (/proc/pressure): how much work waits for CPU, memory, I/O.
  Reading<Pressure> pressure() const;
  Disk disk() const;
  Scratch scratch() const;

  /// One host probe's part of a snapshot, by the probe's name (a row of MAINBOARD_HOST_PROBES
  /// in mainboard/snapshot.hpp: "pressure", "cpu_clocks", "dimms"…), read as a snapshot reads it:
  /// an identity part once per Machine, a live part afresh. The rest of the value keeps its
  /// defaults; a live part's diagnostic is in `diagnostics`. Throws mainboard::Error naming the
  /// probes for a name the table does not hold.
  MachineSnapshot reading(std::string_view probe) const;

  /// Probes everything into one value. Never throws: a probe that fails is recorded in
  /// `diagnostics` and its part of the snapshot is marked unsupported.
  MachineSnapshot snapshot(const SnapshotOptions& options = {}) const;

  /// Diagnostics of the probes that ran once (cpu, board, environment, toolchain, gpus…).
  std::vector<Diagnostic> identity_diagnostics() const;

  struct Impl;

 private:
  friend struct Memory;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mainboard
