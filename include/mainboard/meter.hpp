#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/energy.hpp"
#include "mainboard/export.hpp"

namespace mainboard {

class Machine;

/// Times a region and tracks the peak host and GPU memory in use across samples. Memory is read
/// from the machine at construction, at every sample(), and at stop() (or destruction); there is
/// no background thread: the caller decides when to look.
///
///   auto m = mainboard::meter();
///   train_step();
///   m.sample();
///   evaluate();
///   m.stop();
///   fmt::print("{:.1f} s, peak GPU {:.1f} GiB\n", m.elapsed_s(), m.peak_gpu_gb());
class MAINBOARD_API Meter {
 public:
  explicit Meter(const Machine& machine);
  ~Meter();
  Meter(Meter&& other) noexcept;
  Meter& operator=(Meter&&) = delete;
  Meter(const Meter&) = delete;
  Meter& operator=(const Meter&) = delete;

  /// One host and GPU memory reading, and one of the energy counters. RAPL counters wrap
  /// (a package's every few minutes to hours, by its power): sample at least once per wrap.
  void sample();
  /// The last sample; freezes elapsed time. Later calls do nothing.
  void stop();
  bool stopped() const { return stopped_; }

  /// Seconds since construction, up to stop().
  double elapsed_s() const;
  /// Highest host memory in use over the samples, in GiB.
  double peak_host_gb() const;
  /// Highest total GPU memory in use (all GPUs together) over the samples, in GiB.
  double peak_gpu_gb() const;
  /// Host memory growth from the first sample to the last, in GiB (negative when it shrank).
  double host_delta_gb() const;

  std::uint64_t peak_host_bytes() const { return peak_host_; }
  std::uint64_t peak_gpu_bytes() const { return peak_gpu_; }
  std::size_t samples() const { return samples_; }

  /// This process's own memory, beside the host-wide figures above (which count every
  /// process). Peak resident set size over the region, what was resident at entry included.
  /// The meter resets the kernel's high-water mark (VmHWM) at entry (/proc/self/clear_refs,
  /// "5"), so a peak that rose and fell between two samples is caught; where the kernel refuses
  /// the reset (peak_rss_from_kernel() false), the largest RSS sampled, or VmHWM when it rose
  /// above its value at entry. The reset also resets what getrusage() gives as ru_maxrss (the
  /// process's peak since it started). A meter entered inside another keeps the outer one's
  /// peak. 0 where /proc/self/status cannot be read.
  std::uint64_t peak_rss_bytes() const { return peak_rss_; }
  /// Peak proportional set size over the samples (smaps_rollup: pages shared with other
  /// processes count in shares). 0 where the kernel has no smaps_rollup.
  std::uint64_t peak_pss_bytes() const { return peak_pss_; }
  /// The resident set size and PSS at entry (the first sample).
  std::uint64_t rss_at_start_bytes() const { return rss_at_start_; }
  std::uint64_t pss_at_start_bytes() const { return pss_at_start_; }
  /// What the region added at its peak: peak_rss_bytes() over the RSS at entry (0 when the
  /// region only freed memory), and the same for PSS.
  std::uint64_t peak_rss_delta_bytes() const {
    return peak_rss_ > rss_at_start_ ? peak_rss_ - rss_at_start_ : 0;
  }
  std::uint64_t peak_pss_delta_bytes() const {
    return peak_pss_ > pss_at_start_ ? peak_pss_ - pss_at_start_ : 0;
  }
  /// Whether peak_rss_bytes() is the kernel's high-water mark over the whole region (reset at
  /// entry), not only what the samples saw.
  bool peak_rss_from_kernel() const { return hwm_reset_ != nullptr; }

  /// The energy used from construction to the last sample (to stop(), once stopped): CPU
  /// packages and DRAM from RAPL, each GPU from its total energy counter; what could not be
  /// read is in `unavailable` with why.
  RegionEnergy energy() const;

 private:
  const Machine* machine_;
  std::chrono::steady_clock::time_point start_, end_;
  bool stopped_ = false;
  std::size_t samples_ = 0;
  std::uint64_t peak_host_ = 0, peak_gpu_ = 0;
  std::optional<std::uint64_t> first_host_, last_host_;
  std::uint64_t peak_rss_ = 0, peak_pss_ = 0, rss_at_start_ = 0, pss_at_start_ = 0;
  std::optional<std::uint64_t> hwm_at_start_;
  struct HwmSlot;  ///< the high-water marks other meters' resets wiped while this one ran
  std::shared_ptr<HwmSlot> hwm_reset_;
  struct Energy;  ///< the energy counters' readings
  std::unique_ptr<Energy> energy_;
};

/// A meter on Machine::instance().
MAINBOARD_API Meter meter();

/// What `mainboard meter -- CMD` measures of a command and every process it starts.
struct MAINBOARD_API CommandMeasurement {
  std::vector<std::string> argv;
  int exit_code = 0;          ///< the command's status (128 + signal when killed)
  std::optional<int> signal;  ///< the signal that ended it
  double wall_s = 0;
  double user_s = 0;  ///< CPU time of the whole tree (waited-for descendants)
  double system_s = 0;
  /// The headline: the sampled peak of the tree's proportional set size (PSS, smaps_rollup):
  /// a page shared by several of its processes (after fork: DataLoader workers) counts once, in
  /// shares. 0 where the kernel has no smaps_rollup (before 4.14).
  std::uint64_t peak_pss_bytes = 0;
  std::uint64_t peak_rss_bytes = 0;       ///< peak of the summed RSS of the tree, or the largest
                                          ///< single process's peak if that is higher
  std::uint64_t peak_tree_rss_bytes = 0;  ///< the sampled peak of the tree's summed RSS
  /// Largest single process's own high-water mark (VmHWM, read while each process lives: a
  /// process a shell started in the background counts; the copy of this program between fork
  /// and exec does not). Where no sample saw the command (it ended within the first interval),
  /// its own getrusage maximum.
  std::uint64_t max_process_rss_bytes = 0;
  std::uint32_t peak_processes = 0;  ///< most processes alive at once in the tree
  // What `/usr/bin/time -v` reports too, for the whole tree (getrusage of the waited-for
  // descendants).
  std::uint64_t major_faults = 0;               ///< page faults that read from disk
  std::uint64_t minor_faults = 0;               ///< page faults served from memory
  std::uint64_t voluntary_switches = 0;         ///< gave up the CPU (waited: I/O, a lock, sleep)
  std::uint64_t involuntary_switches = 0;       ///< were preempted
  std::uint64_t fs_inputs = 0;                  ///< file-system reads, in 512-byte blocks
  std::uint64_t fs_outputs = 0;                 ///< file-system writes, in 512-byte blocks
  std::optional<std::uint64_t> peak_gpu_bytes;  ///< empty when no GPU could be read
  std::map<std::string, std::uint64_t> peak_gpu_bytes_by_gpu;  ///< by GPU uuid
  std::size_t samples = 0;
  double interval_ms = 50;
  /// Energy over the command's run, host-wide (CPU packages, DRAM, each GPU), or why not.
  RegionEnergy energy;
  bool operator==(const CommandMeasurement&) const = default;
};

struct MAINBOARD_API MeterOptions {
  std::chrono::milliseconds interval{50};
  bool gpus = true;  ///< read GPU process memory (through the machine's GPU providers)
  /// After an interrupt the caller catches (SIGINT, SIGTERM, SIGHUP, as the command does), how
  /// long the command may take to end before it is sent SIGTERM, then SIGKILL.
  double kill_after_s = 10;
};

/// Starts `argv` (no shell; stdin, stdout and stderr are the caller's), samples its process
/// tree every interval until it exits, and returns the measurement. Throws mainboard::Error
/// when the command cannot be started.
MAINBOARD_API CommandMeasurement measure_command(const Machine& machine,
                                                 const std::vector<std::string>& argv,
                                                 const MeterOptions& options = {});

}  // namespace mainboard
