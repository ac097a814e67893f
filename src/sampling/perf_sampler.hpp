#pragma once

// Stack sampling of other processes with perf_event_open: a software CPU-clock event per CPU for
// each followed thread (inherited by the threads and processes it starts), call chains collected
// by the kernel, timestamps on CLOCK_MONOTONIC, and the mmap/comm/fork records needed to name
// what was sampled.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "symbols/code_map.hpp"
#include "symbols/symbolizer.hpp"

namespace mainboard::sampling {

using symbols::JitSymbol;
using symbols::Mapping;
using symbols::parse_maps;
using symbols::parse_perf_map;
using symbols::read_proc_file;
using symbols::Symbolizer;

struct RawSample {
  std::int64_t t_ns = 0;
  std::int32_t pid = 0, tid = 0;
  /// The kernel's walk (along frame pointers): the sampled address first, then return addresses;
  /// kKernelAddress first when the sample was taken in the kernel.
  std::vector<std::uint64_t> ips;
  /// With dwarf: the walk of the sample's stack copy with the modules' CFI, the user's sampled
  /// address first, and which of its addresses are not return addresses (a frame a signal
  /// interrupted). Which walk the sample keeps is decided once every mapping is known
  /// (choose_walk): either may have gone astray.
  std::vector<std::uint64_t> unwound;
  std::vector<bool> activations;
};

/// The walk a sample keeps: each of its walks cut where it leaves the process's code (CodeMap),
/// the longer of the two; its addresses, leaf first (kKernelAddress first for a sample taken in
/// the kernel), and why it was cut, if it was.
symbols::WalkStop choose_walk(const RawSample& s, symbols::CodeMap& code,
                              std::vector<std::uint64_t>& ips);

struct SamplerOutput {
  std::vector<RawSample> samples;
  std::map<std::int32_t, std::vector<Mapping>> mappings;  ///< per process
  std::map<std::int32_t, std::string> thread_names;       ///< tid → comm
  std::map<std::int32_t, std::int32_t> thread_process;    ///< tid → pid
  std::vector<std::int32_t> processes;                    ///< pids seen, first the target
  std::uint64_t lost = 0;
  std::vector<std::string> notes;  ///< what could not be sampled, and why
};

/// The address a sample taken in the kernel carries as its leaf: its own frame, "[kernel]", above
/// the user code that entered the kernel (kernel frames themselves are not collected).
inline constexpr std::uint64_t kKernelAddress = ~std::uint64_t{0} - 1;

/// A frame-pointer chain that loops (a frame whose saved frame pointer points at itself, as in a
/// thread that has only just been made) repeats one return address until the kernel's depth
/// limit: the repeats past the first are dropped. A chain that ends before the limit is left
/// whole (recursion repeats addresses too, and ends).
void trim_frame_pointer_loop(std::vector<std::uint64_t>& ips);

struct SamplerOptions {
  std::uint32_t hz = 99;
  /// Also copy each sample's user stack and registers and unwind them with the modules' CFI
  /// (for code built without frame pointers); otherwise the kernel's frame-pointer chain.
  bool dwarf = false;
  std::uint32_t stack_bytes = 16384;  ///< user stack copied per sample with dwarf
  std::size_t max_samples = 10'000'000;
  /// Ring buffer per CPU, in pages (a power of two); 0: ring_pages() of 256 KiB, 512 KiB with
  /// dwarf (16 KiB a sample).
  std::size_t buffer_pages = 0;
  /// Also samples time spent in the kernel on the threads' behalf (system calls, page faults),
  /// when kernel.perf_event_paranoid allows it; otherwise a note says why not.
  bool kernel = true;
};

/// Data pages for a ring buffer of about `bytes` with pages of `page` bytes: a power of two, at
/// least one, and with its header page within `limit` bytes: by default what an ordinary user
/// may map per CPU (perf_event_mlock_kb, 516 KiB by default): 128 pages of 4 KiB, but 4 of 64 KiB.
std::size_t ring_pages(std::size_t bytes, std::size_t page, std::size_t limit = (512 + 4) << 10);

class PerfSampler {
 public:
  /// Samples the threads `tids` (of process `pid`) and whatever they start, on every CPU. With
  /// `on_exec`, the events stay off until the (stopped, forked) process calls exec. Throws
  /// mainboard::Error naming the setting that refused it.
  PerfSampler(std::int32_t pid, const std::vector<std::int32_t>& tids,
              const SamplerOptions& options, bool on_exec);
  ~PerfSampler();
  PerfSampler(const PerfSampler&) = delete;
  PerfSampler& operator=(const PerfSampler&) = delete;

  /// Seeds the mappings and thread names of an already running process (attach), and counts
  /// it among the processes sampled.
  void seed_from_proc(std::int32_t pid);
  /// Reads what the ring buffers hold. Call every drain_interval().
  void drain();
  /// How long the ring buffers may go unread: rarely (each wake-up takes a little CPU from the
  /// sampled program on a small machine), but before a quarter of a buffer can fill.
  std::chrono::milliseconds drain_interval() const;
  /// Stops sampling, drains the rest and hands everything over.
  SamplerOutput finish();
  /// What was sampled since the last take() (or the start), sampling going on: the samples
  /// handed over, the mappings and names (needed to name them) copied, the samples lost since.
  SamplerOutput take();

  /// Descendant processes seen so far (from fork records).
  std::vector<std::int32_t> processes() const { return out_.processes; }

 private:
  void handle(const unsigned char* record, std::size_t size);

  SamplerOptions options_;
  std::int32_t pid_ = 0;
  std::vector<int> fds_;
  struct Buffer {
    int fd = -1;
    void* base = nullptr;
    std::size_t size = 0;  // data pages only
  };
  std::vector<Buffer> buffers_;
  std::vector<unsigned char> scratch_;
  /// Records copied out of the rings and not handled yet (each as it was, header first): the
  /// rings are freed at once, and the slow part — unwinding a stack copy — happens after, so a
  /// slow unwinder (a sanitizer build, a loaded machine) no longer makes the kernel lose samples.
  std::vector<unsigned char> pending_;
  std::size_t pending_at_ = 0;  // the first record not handled
  /// Handles pending records until none are left or `budget` has passed.
  void handle_pending(std::chrono::steady_clock::duration budget);
  SamplerOutput out_;
  // Unwinding as samples arrive (their stack copies are not kept): one per process, rebuilt when
  // its mappings change.
  std::map<std::int32_t, std::unique_ptr<Symbolizer>> unwinders_;
  // Per process, a count bumped when its file-backed mappings change (anonymous memory, which
  // comes and goes with every allocation, does not matter to an unwinder), and the count each
  // unwinder was built at.
  std::map<std::int32_t, std::uint64_t> file_maps_changed_;
  std::map<std::int32_t, std::uint64_t> unwinder_built_at_;
  std::vector<std::uint64_t> regs_;
  std::vector<unsigned char> stack_;
  bool finished_ = false;
  std::uint64_t lost_taken_ = 0;
};

/// Why perf_event_open refused, in words a user can act on.
std::string explain_perf_error(int error, std::int32_t pid);

}  // namespace mainboard::sampling
