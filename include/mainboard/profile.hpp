#pragma once

/// A profile: the evidence of one session or run, and what it says. The model, its JSON (save,
/// load) and its analyses are in mainboard::spans; the text report, show() and the trace exports
/// (Perfetto, speedscope, folded stacks) are formatting, in mainboard::mainboard.

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/energy.hpp"
#include "mainboard/export.hpp"
#include "mainboard/snapshot.hpp"

namespace mainboard {

/// Version of the profile's JSON layout. Versions 1 (no GPU activity), 2 (no stack samples), 3
/// (no function_maps; counters with duration_ns) and 4 to 6 (no ranks, processes or clock
/// reference) still load.
inline constexpr int kProfileSchemaVersion = 7;

/// Exact statistics of one span path over the whole session (whatever max_spans was).
struct MAINBOARD_API SpanStat {
  std::string path;  ///< "train/step/forward"
  std::string name;  ///< the last component
  std::uint64_t calls = 0;
  std::int64_t total_ns = 0;
  std::int64_t self_ns = 0;  ///< total minus the time in child spans
  std::int64_t min_ns = 0;
  std::int64_t max_ns = 0;
  double avg_ns() const {
    return calls ? static_cast<double>(total_ns) / static_cast<double>(calls) : 0.0;
  }
  bool operator==(const SpanStat&) const = default;
};

/// One stored span (bounded by max_spans): indices into Profile::paths and Profile::threads.
struct MAINBOARD_API SpanEvent {
  std::uint32_t path = 0;
  std::uint32_t thread = 0;
  std::int64_t start_ns = 0;  ///< monotonic clock, the one snapshots and device samples use
  std::int64_t end_ns = 0;
  bool operator==(const SpanEvent&) const = default;
};

struct MAINBOARD_API ThreadInfo {
  std::uint32_t index = 0;
  std::int64_t tid = 0;
  std::string name;
  /// Index into Profile::processes (a merged job's rank); 0 where the profile has none.
  std::uint32_t process = 0;
  bool operator==(const ThreadInfo&) const = default;
};

/// Which rank of a distributed job a process was, as its launcher said in its environment.
struct MAINBOARD_API RankInfo {
  std::int64_t rank = 0;
  std::optional<std::int64_t> local_rank;  ///< its rank on its node
  std::optional<std::int64_t> world_size;  ///< how many ranks the job has
  std::string job_id;                      ///< SLURM_JOB_ID, TORCHELASTIC_RUN_ID, …
  /// The variable the rank was read from: "RANK" (torchrun and most launchers),
  /// "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK" or "SLURM_PROCID".
  std::string source;
  /// The rank of the process whose environment is `env` (NAME=VALUE strings, as `environ`);
  /// empty when no launcher variable holds a rank. The launcher nearest the process wins:
  /// torchrun's RANK over MPI's, MPI's over Slurm's task id.
  static std::optional<RankInfo> from_environment(const std::vector<std::string>& env);
  /// This process's (its `environ`).
  static std::optional<RankInfo> current();
  /// Process `pid`'s, from its environment as it started (/proc/PID/environ); empty also when
  /// that cannot be read (another user's process).
  static std::optional<RankInfo> of_process(std::int64_t pid);
  bool operator==(const RankInfo&) const = default;
};

/// The node this process runs on, as its scheduler names it: SLURMD_NODENAME under Slurm, else
/// the host's name.
MAINBOARD_API std::string this_node();

/// Where a profile's clock (the monotonic clock of its node, which starts near boot) stood
/// against the wall clock: what puts the profiles of different nodes on one time axis.
struct MAINBOARD_API ClockReference {
  std::int64_t monotonic_ns = 0;
  std::int64_t realtime_ns = 0;     ///< read between two monotonic reads, paired with their middle
  std::int64_t uncertainty_ns = 0;  ///< half the time between those two reads
  /// The kernel's boot id: profiles with one boot id share the monotonic clock itself (the
  /// ranks of one node), and are aligned exactly, without the wall clock.
  std::string boot_id;
  /// Read now. Several tries: the pair with the shortest gap is kept.
  static ClockReference now();
  bool operator==(const ClockReference&) const = default;
};

/// How a launched target ended (Sampler::run, `mainboard profile run`): absent from a profile
/// of an attach or of a session in the process itself.
struct MAINBOARD_API TargetExit {
  int exit_code = 0;       ///< its status, 128 + the signal when a signal ended it
  int signal = 0;          ///< the signal that ended it, 0 when it exited
  bool timed_out = false;  ///< ended by the run's timeout
  bool failed() const { return exit_code != 0 || signal != 0 || timed_out; }
  /// "exited with status 2", "was killed by signal 9 (Killed)", "was ended by its timeout".
  std::string summary() const;
  bool operator==(const TargetExit&) const = default;
};

/// How one rank spent its time, as Holistic Trace Analysis breaks it down: over the window from
/// its first to its last activity, the time in computation, in communication and memory
/// operations (together "non-compute"), and idle; and how much of the communication overlapped
/// computation. Read from GPU kernels (communication: NCCL's; memory: copies and sets) where the
/// rank has them, else from its CPU operators (communication: the collectives, gloo:… nccl:…).
struct MAINBOARD_API TimeBreakdown {
  std::int64_t rank = 0;
  std::string source;  ///< "gpu kernels" or "cpu operators"
  std::int64_t window_ns = 0;
  std::int64_t compute_ns = 0;        ///< time at least one computation ran
  std::int64_t communication_ns = 0;  ///< time a communication ran and no computation
  std::int64_t memory_ns = 0;         ///< time only copies or sets ran
  std::int64_t idle_ns = 0;           ///< nothing ran
  double compute_pct = 0, non_compute_pct = 0, idle_pct = 0;  ///< of the window
  /// Of the time communication ran, the share in which computation ran too; empty without
  /// communication.
  std::optional<double> overlap_pct;
  bool operator==(const TimeBreakdown&) const = default;
};

/// One process of a merged job (a rank), and how its times were put on the job's time axis.
struct MAINBOARD_API ProcessInfo {
  std::uint32_t index = 0;
  std::int64_t pid = 0;
  std::string command;
  std::string node;  ///< the host it ran on
  std::optional<RankInfo> rank;
  std::string written_by;  ///< the mainboard version that recorded it
  /// Added to each of its times to put them on the job's axis (0 for the reference rank).
  std::int64_t offset_ns = 0;
  /// How the offset was found: "reference" (the first rank), "boot id" (the same node's clock:
  /// exact), "wall clock" (the nodes' realtime clocks, as well synchronized as they are),
  /// "collective ends" or "first step" (a trace: by what it shares with the first trace), or
  /// "unaligned" (nothing to align by: placed at the job's start, with a warning).
  std::string alignment;
  std::int64_t start_ns = 0;  ///< on the job's axis
  std::int64_t end_ns = 0;
  std::vector<SpanStat> span_stats;  ///< its own exact statistics, whatever was stored
  std::uint64_t samples = 0;         ///< its stack samples
  std::uint64_t lost_samples = 0;
  std::uint64_t dropped_spans = 0;
  /// How it spent its time (GPU kernels; a trace's CPU operators without them); empty with
  /// neither.
  std::optional<TimeBreakdown> breakdown;
  bool operator==(const ProcessInfo&) const = default;
};

/// One frame of a sampled stack, symbolized.
struct MAINBOARD_API StackFrame {
  std::string function;  ///< demangled; "0x7f12…" when no symbol covers the address
  /// the ELF file's name, "[jit]" (perf map), "[kernel]", "[unknown]", or "[python]" for a
  /// Python frame (its function the qualified name, its file and line the source's)
  std::string module;
  std::string file;  ///< source file, when debug information says
  std::uint32_t line = 0;
  bool inlined = false;  ///< inlined into the frame after it (its caller)
  bool operator==(const StackFrame&) const = default;
};

/// One stack sample: which thread, when, and which stack (Profile::stacks).
struct MAINBOARD_API StackSample {
  std::int64_t t_ns = 0;
  std::uint32_t thread = 0;
  std::uint32_t stack = 0;
  bool operator==(const StackSample&) const = default;
};

/// A function's share of the samples.
struct MAINBOARD_API FunctionStat {
  std::string function;
  std::string module;
  /// A Python function's source file (module "[python]"): functions of one name in two files
  /// are two functions. Empty for native ones.
  std::string file;
  std::uint64_t self_samples = 0;   ///< samples with it as the leaf
  std::uint64_t total_samples = 0;  ///< samples with it anywhere on the stack
  double self_pct = 0;
  double total_pct = 0;
  bool operator==(const FunctionStat&) const = default;
};

/// One distinct stack, by function names, and how often it was sampled.
struct MAINBOARD_API StackStat {
  std::vector<std::string> frames;  ///< root first
  std::uint64_t samples = 0;
  double pct = 0;
  bool operator==(const StackStat&) const = default;
};

/// One reading of the profiled process on its GPU, taken while spans were open.
struct MAINBOARD_API DeviceSample {
  std::int64_t t_ns = 0;
  std::uint32_t gpu = 0;
  std::optional<std::uint64_t> process_memory_bytes;  ///< this process's share of GPU memory
  std::optional<std::uint64_t> device_memory_used_bytes;
  std::optional<double> utilization_pct;
  std::optional<double> memory_utilization_pct;
  bool operator==(const DeviceSample&) const = default;
};

/// One GPU activity record (CUPTI), on the profile's clock.
struct MAINBOARD_API GpuActivity {
  enum class Kind { kernel, memcpy, memset, synchronization, overhead } kind = Kind::kernel;
  /// Index into Profile::activity_names: the demangled kernel name, "memcpy HtoD (pageable →
  /// device)", "memset (device)", "sync: stream", "overhead: CUPTI buffer flush", …
  std::uint32_t name = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint32_t device = 0;  ///< CUDA device ordinal
  std::uint32_t stream = 0;
  std::uint32_t correlation = 0;  ///< ties the record to its API call
  // Kernels: the launch shape.
  std::array<std::uint32_t, 3> grid{};
  std::array<std::uint32_t, 3> block{};
  std::uint32_t registers_per_thread = 0;
  std::uint32_t static_shared_bytes = 0;
  std::uint32_t dynamic_shared_bytes = 0;
  // Copies and sets.
  std::uint64_t bytes = 0;
  std::int64_t duration_ns() const { return end_ns - start_ns; }
  std::uint64_t blocks() const { return std::uint64_t{grid[0]} * grid[1] * grid[2]; }
  std::uint64_t threads_per_block() const { return std::uint64_t{block[0]} * block[1] * block[2]; }
  /// Kernels, copies and sets occupy the device; synchronization and overhead do not.
  bool occupies_device() const {
    return kind == Kind::kernel || kind == Kind::memcpy || kind == Kind::memset;
  }
  bool operator==(const GpuActivity&) const = default;
};
MAINBOARD_API const char* to_string(GpuActivity::Kind kind);

/// How a kernel was launched: grid and block, registers, shared memory.
struct MAINBOARD_API LaunchShape {
  std::array<std::uint32_t, 3> grid{};
  std::array<std::uint32_t, 3> block{};
  std::uint32_t registers_per_thread = 0;
  std::uint32_t shared_bytes = 0;  ///< static plus dynamic, per block
  std::uint64_t blocks() const { return std::uint64_t{grid[0]} * grid[1] * grid[2]; }
  std::uint64_t threads_per_block() const { return std::uint64_t{block[0]} * block[1] * block[2]; }
  bool operator==(const LaunchShape&) const = default;
};

/// One kernel name over a profile: the statistics every view of kernels starts from
/// (kernel_summaries, efficiency, the verdict's KernelStat, the counter pass).
struct MAINBOARD_API KernelSummary {
  std::string name;
  std::uint64_t calls = 0;
  std::int64_t total_ns = 0;
  std::int64_t min_ns = 0;
  std::int64_t max_ns = 0;
  double share_pct = 0;  ///< of all kernel time
  /// The last-seen launch (kernels of one name share a launch configuration, so one shape
  /// describes them without a row per call).
  LaunchShape shape;
  std::int64_t avg_ns() const { return calls ? total_ns / static_cast<std::int64_t>(calls) : 0; }
  bool operator==(const KernelSummary&) const = default;
};

/// GPU time attributed to one span path (or "(outside spans)").
struct MAINBOARD_API RegionGpuTime {
  std::string path;
  std::int64_t kernel_ns = 0;
  std::int64_t copy_ns = 0;  ///< memcpy and memset
  std::uint64_t activities = 0;
  double share_pct = 0;  ///< of all GPU time (kernels and copies)
  bool operator==(const RegionGpuTime&) const = default;
};

/// Where the GPU's time went: compute against copies, the hottest kernels, and each span's share.
struct MAINBOARD_API TraceReport {
  std::int64_t kernel_ns = 0;  ///< summed kernel durations (overlapping kernels both count)
  std::int64_t copy_ns = 0;    ///< summed memcpy and memset durations
  std::uint64_t kernel_count = 0;
  std::uint64_t copy_count = 0;
  std::uint64_t copy_bytes = 0;
  std::vector<KernelSummary> kernels;  ///< hottest first
  std::vector<RegionGpuTime> regions;  ///< most GPU time first
  std::string report() const;          ///< the text section (mainboard::mainboard)
  bool operator==(const TraceReport&) const = default;
};

/// How efficiency() scores kernels.
struct MAINBOARD_API EfficiencyOptions {
  /// The device's SMs (GpuInfo::sm_count); 0: those of the GPU the kernels ran on, from the
  /// profile's machine snapshot (no wave figures when it has none).
  std::uint32_t sm_count = 0;
  double peak_bandwidth_gbs = 0;    ///< device peak, 0 to skip the bandwidth score
  std::uint64_t bytes_moved = 0;    ///< bytes one launch moves, 0 to skip
  std::uint32_t blocks_per_sm = 1;  ///< resident blocks per SM the kernel achieves
  std::size_t top = 12;
};

/// One kernel's wave quantisation and achieved bandwidth, from its last-seen launch shape.
struct MAINBOARD_API KernelEfficiency : KernelSummary {
  double waves = 0;               ///< blocks / (SMs × blocks per SM)
  double last_wave_fill_pct = 0;  ///< block slots the final wave fills; low means SMs sit idle
  std::optional<double> achieved_gbs;
  std::optional<double> bandwidth_pct;  ///< achieved against the peak
  bool operator==(const KernelEfficiency&) const = default;
};

/// Hardware-counter readings of one kernel name (from a counter pass).
struct MAINBOARD_API KernelCounters : KernelSummary {
  std::optional<double> sm_throughput_pct;    ///< of peak SM throughput
  std::optional<double> dram_throughput_pct;  ///< of peak DRAM bandwidth
  std::optional<double> achieved_occupancy_pct;
  /// "memory" or "compute" by the busier of the two throughputs, "latency" when both are low
  /// (under 60 %), empty without readings.
  std::string limiter() const;
  bool operator==(const KernelCounters&) const = default;
};

/// How a region or kernel name compares with a baseline.
enum class DiffKind { changed, added, removed };

/// What changed for one name (a region's path, a kernel's name) from a baseline to now: the
/// part every diff shares.
struct MAINBOARD_API Change {
  using Kind = DiffKind;
  Kind kind = Kind::changed;
  std::uint64_t baseline_calls = 0, calls = 0;
  std::int64_t baseline_total_ns = 0, total_ns = 0;
  std::int64_t total_change_ns() const { return total_ns - baseline_total_ns; }
  /// Relative change of the total, in percent; empty for new or vanished names.
  std::optional<double> total_change_pct() const;
  bool operator==(const Change&) const = default;
};

/// One kernel name's change against a baseline.
struct MAINBOARD_API KernelDiff : Change {
  std::string name;
  bool operator==(const KernelDiff&) const = default;
};

/// A window in which the observed activity stopped.
struct MAINBOARD_API IdleGap {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::string open_span;  ///< the innermost span open during the gap, if any
  std::int64_t duration_ns() const { return end_ns - start_ns; }
  bool operator==(const IdleGap&) const = default;
};

/// Busy and idle time over the observed activity, and the longest idle windows.
struct MAINBOARD_API Timeline {
  std::string source;  ///< what counted as activity: "gpu activity", "device samples", "spans"
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t busy_ns = 0;
  std::int64_t idle_ns = 0;
  std::vector<IdleGap> gaps;  ///< longest first
  double busy_pct() const {
    auto span = end_ns - start_ns;
    return span > 0 ? 100.0 * static_cast<double>(busy_ns) / static_cast<double>(span) : 0.0;
  }
  bool operator==(const Timeline&) const = default;
};

/// One region's change against a baseline.
struct MAINBOARD_API RegionDiff : Change {
  std::string path;
  double baseline_avg_ns = 0, avg_ns = 0;
  bool operator==(const RegionDiff&) const = default;
};

/// One function's change in the stack samples from a baseline, in shares of each profile's
/// samples (as perf diff): runs of different lengths or rates compare.
struct MAINBOARD_API FunctionDiff {
  DiffKind kind = DiffKind::changed;  ///< added: only in the new profile; removed: only in the base
  std::string function, module, file;  ///< as FunctionStat
  double baseline_self_pct = 0, self_pct = 0;
  double baseline_total_pct = 0, total_pct = 0;
  double self_change() const { return self_pct - baseline_self_pct; }  ///< in points
  double total_change() const { return total_pct - baseline_total_pct; }
  bool operator==(const FunctionDiff&) const = default;
};

struct MAINBOARD_API ProfileDiff {
  std::vector<RegionDiff> regions;  ///< largest absolute change of total first
  std::vector<KernelDiff> kernels;  ///< the same for kernel names
  /// Functions of the stack samples, largest change of self share first (then of total share).
  std::vector<FunctionDiff> functions;
  std::string report() const;  ///< the text table (mainboard::mainboard)
  bool operator==(const ProfileDiff&) const = default;
};

/// One span path's time on each rank of a merged job.
struct MAINBOARD_API RankSpread {
  std::string path;
  /// Time in it is waiting for other ranks: a collective by its name ("allreduce", "barrier",
  /// "wait", … or one RankOptions::collectives names), or the phase in which the other ranks
  /// are found to wait for the straggler.
  bool wait = false;
  std::vector<std::int64_t> total_ns;  ///< per rank, in RankReport::ranks order
  std::int64_t min_ns = 0;
  std::int64_t median_ns = 0;
  std::int64_t max_ns = 0;
  std::int64_t slowest_rank = 0;    ///< the rank with the most time in it
  std::int64_t over_median_ns = 0;  ///< the slowest rank's time minus the median
  bool operator==(const RankSpread&) const = default;
};

/// One step (an occurrence of the repeated step span) across the ranks.
struct MAINBOARD_API StepLag {
  std::uint64_t index = 0;        ///< the step's number, from 0, in each rank's order
  std::int64_t slowest_rank = 0;  ///< the rank with the most work (time outside waits) in it
  std::int64_t lag_ns = 0;        ///< that rank's work minus the median of the others'
  std::int64_t median_work_ns = 0;
  bool operator==(const StepLag&) const = default;
};

/// One rank's share of a job.
struct MAINBOARD_API RankSummary {
  std::int64_t rank = 0;
  std::string node;
  std::int64_t pid = 0;
  std::int64_t work_ns = 0;  ///< time in the phases that are not waits
  std::int64_t wait_ns = 0;  ///< time in the wait phases
  std::uint64_t samples = 0;
  /// Of its stack samples, those in a collective library's code (gloo, NCCL, MPI, c10d).
  std::uint64_t collective_samples = 0;
  /// The rank it waits for: the straggler, when this rank waits longer than it does.
  std::optional<std::int64_t> waits_for;
  std::uint64_t slowest_steps = 0;  ///< steps in which it had the most work
  std::string alignment;            ///< ProcessInfo::alignment
  bool operator==(const RankSummary&) const = default;
};

/// The rank that holds the job back, where, and what it costs the others.
struct MAINBOARD_API Straggler {
  std::int64_t rank = 0;
  std::string node;
  std::string phase;                 ///< the span path in which it is slowest against the others
  std::string phase_kind;            ///< "data loading", "forward", "backward", "optimizer" or ""
  std::int64_t phase_excess_ns = 0;  ///< its time in that phase minus the others' median
  std::int64_t lag_ns = 0;           ///< its work minus the others' median work
  double lag_pct = 0;                ///< of the others' median work
  std::string wait_phase;            ///< where the others wait for it
  std::int64_t others_wait_ns = 0;   ///< the others' median wait beyond its own
  std::uint64_t slowest_steps = 0;   ///< steps in which it had the most work
  std::uint64_t steps = 0;
  bool operator==(const Straggler&) const = default;
};

/// How Profile::ranks() reads a job.
struct MAINBOARD_API RankOptions {
  /// The step span (its path or last name); empty: the shallowest span repeated on every rank.
  std::string step;
  /// More span names whose time is waiting in a collective.
  std::vector<std::string> collectives;
  /// A lag under this share of the others' median work names no straggler.
  double threshold_pct = 5;
  std::size_t top = 10;  ///< the most steps listed (the text; the JSON has them all)
};

/// Which rank holds a job back: the ranks of a merged profile compared phase by phase.
struct MAINBOARD_API RankReport {
  std::vector<RankSummary> ranks;  ///< by rank
  std::optional<std::int64_t> world_size;
  std::vector<std::int64_t> missing_ranks;  ///< ranks of world_size without one (the first 1000)
  std::string step;                         ///< the step span's path; empty without one
  std::vector<RankSpread> spans;            ///< the phases, the widest spread first
  std::vector<StepLag> steps;               ///< each step recorded on every rank, in order
  std::optional<Straggler> straggler;
  /// One line: "rank 2 (n3) holds the job back: …", or why no rank does.
  std::string verdict;
  std::vector<std::string> warnings;     ///< what the merge could not do (clocks, versions, ranks)
  std::vector<TimeBreakdown> breakdown;  ///< per rank, by rank
  std::string report(std::size_t top = 10) const;  ///< the text section (mainboard::mainboard)
  bool operator==(const RankReport&) const = default;
};

/// One immutable result of a profiling session: only evidence that was observed (span
/// statistics, stored spans, device samples), the machine it ran on, and what could not be
/// collected and why.
/// The roots of a flame graph: the command (every thread's samples add up, as in folded stacks),
/// each thread ("name-TID"), or each process (a merged job's rank, a child's "pid N").
enum class FlameRoots { command, thread, process };

struct MAINBOARD_API FlameOptions {
  FlameRoots roots = FlameRoots::command;
  std::string title;  ///< default "Flame graph of COMMAND"
  int width = 1200;   ///< in pixels
  /// Python frames named "function (file:line)", as py-spy names them (a function at two lines
  /// is two frames); false: "function (file)", the function as one frame.
  bool lines = true;
};

/// How a list of functions is ordered: by samples as the leaf, or on the stack at all.
enum class FunctionOrder { self, total };

struct MAINBOARD_API HtmlOptions {
  std::string title;              ///< default "mainboard profile of COMMAND"
  std::size_t top = 50;           ///< rows of the functions' table (regions and kernels: all)
  std::size_t max_spans = 20000;  ///< the longest spans drawn on the timeline; the rest counted
  /// How the page's flame graph names Python frames when it opens (FlameOptions::lines); the
  /// page switches between the two.
  bool lines = true;
};

struct MAINBOARD_API Profile {
  int schema_version = kProfileSchemaVersion;
  std::int64_t pid = 0;  ///< the profiled process
  /// Its program's name as the kernel knows it (comm: "python3", "train"); empty when unknown.
  std::string command;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::vector<std::string> paths;    ///< interned span paths, indexed by SpanEvent::path
  std::vector<SpanStat> span_stats;  ///< one per path, in `paths` order
  std::vector<SpanEvent> spans;      ///< stored spans, by start time
  std::uint64_t dropped_spans = 0;   ///< spans past max_spans (their statistics still count)
  std::vector<ThreadInfo> threads;
  std::vector<DeviceSample> device_samples;
  std::vector<std::string> activity_names;  ///< interned, indexed by GpuActivity::name
  std::vector<GpuActivity> activities;      ///< GPU activity records, by start time
  std::uint64_t dropped_activities = 0;     ///< records lost (CUPTI's count plus max_activities)
  std::vector<KernelCounters> counters;     ///< from a hardware-counter pass, when one ran
  std::vector<StackFrame> frames;           ///< interned, indexed by stacks
  std::vector<std::vector<std::uint32_t>> stacks;  ///< frame indices, leaf first
  std::vector<StackSample> samples;                ///< by time
  std::uint32_t sample_hz = 0;                     ///< the sampling rate, 0 without samples
  /// The counter spans are timed with: "tsc" (x86), "cntvct_el0" (the Arm virtual counter) or
  /// "monotonic", and its rate in ticks per second (a span's resolution is one tick): stated by
  /// the hardware on Arm (CNTFRQ_EL0: 1 GHz on recent parts, 25 MHz on some), measured against
  /// the monotonic clock over the session on x86. Empty where spans were not recorded.
  std::string span_clock;
  std::optional<double> span_clock_hz;
  std::uint64_t lost_samples = 0;        ///< samples the kernel or max_samples dropped
  std::vector<std::string> unavailable;  ///< "device: no GPU at index 0", …
  /// Paths of auto-instrumented functions hold "@0x<address>" until they are named: these are
  /// the file mappings (/proc/<pid>/maps lines) of the modules holding those addresses, so that
  /// whoever reads the profile can name them (mainboard::mainboard does on load in the command
  /// and at the end of an in-process session). Empty once named.
  std::vector<std::string> function_maps;
  std::optional<MachineSnapshot> machine;
  /// The energy used over the session, host-wide (CPU packages, DRAM, each GPU), or why not;
  /// empty where the session did not read the machine.
  std::optional<RegionEnergy> energy;
  std::string node;              ///< the host it ran on
  std::optional<RankInfo> rank;  ///< the rank it was, when a launcher said so
  std::optional<ClockReference> clock;
  std::string written_by;  ///< the mainboard version that recorded it
  /// How the launched target ended (a run); absent for an attach or an in-process session.
  std::optional<TargetExit> target_exit;
  /// A merged job: one per rank (merge_ranks); the threads name theirs. Empty otherwise.
  std::vector<ProcessInfo> processes;
  /// Another tool's record this profile was read from: "torch.profiler (Kineto)" or
  /// "torch.profiler (without Kineto)" for a PyTorch profiler trace; empty for mainboard's own.
  std::optional<std::string> source;

  /// Records where and when this process is: node, rank, clock reference, this version.
  void record_origin();
  /// Per-path statistics, slowest total first.
  std::vector<SpanStat> stats() const;
  /// The `top` slowest paths by total time.
  std::vector<SpanStat> bottlenecks(std::size_t top = 10) const;
  /// Busy/idle accounting over the best evidence there is: GPU activity (kernels, copies and
  /// sets occupy the device), else device samples (utilization above zero is busy), else the
  /// innermost spans; the `top_gaps` longest idle windows and the span open in each.
  Timeline timeline(std::size_t top_gaps = 10) const;
  /// GPU time split into compute and copies, the `top` hottest kernels, and each span path's
  /// share: an activity belongs to the innermost stored span whose window holds its start.
  TraceReport trace_report(std::size_t top = 10) const;
  /// Per kernel name: launch shape, waves and last-wave fill, achieved bandwidth; most time first.
  std::vector<KernelEfficiency> efficiency(const EfficiencyOptions& options) const;
  /// The `top` kernels of the counter pass by duration; empty when no pass ran (see unavailable).
  std::vector<KernelCounters> counter_bottlenecks(std::size_t top = 10) const;
  /// Every kernel name with its calls and time, hottest first.
  std::vector<KernelSummary> kernel_summaries() const;
  /// Functions with their samples as the leaf (self) and on the stack (total), the most by
  /// `by` first: self time names where the time is spent, total time the callers that spend
  /// it (`main`, `train_step`), which self time never lists.
  std::vector<FunctionStat> hot_functions(std::size_t top = 20,
                                          FunctionOrder by = FunctionOrder::self) const;
  /// The most sampled distinct stacks; stacks that differ only in lines or addresses are one.
  std::vector<StackStat> hot_stacks(std::size_t top = 10) const;
  /// The two sample exports below are formatting (mainboard::mainboard).
  /// Folded stacks, the format flamegraph.pl reads: "command;root;…;leaf count" a line each,
  /// so the folded stacks of several runs of one program add up; with `per_thread`, each
  /// thread's own "name-TID" instead of the command.
  std::string folded(bool per_thread = false) const;
  /// The same rooted at the command, each thread, or each process (a merged job's "rank 3", a
  /// child process's "pid 4242").
  std::string folded(FlameRoots roots) const;
  /// With Python frames named "function (file:line)" (`lines`, py-spy's folded stacks; the
  /// overloads above do) or "function (file)".
  std::string folded(FlameRoots roots, bool lines) const;
  /// A speedscope file (https://www.speedscope.app/file-format-schema.json): one sampled
  /// profile per thread over shared frames.
  std::string speedscope_json() const;
  /// The classic interactive SVG flame graph (flamegraph.pl's, py-spy's): a frame per call path,
  /// as wide as its samples, coloured by what it is (native code warm, Python green, the kernel
  /// orange, JIT code aqua); click to zoom, search with the matched share, reset; opens in any
  /// browser, offline (mainboard::mainboard). The root is at the top (an icicle, as the report
  /// page and speedscope draw it): a browser opens the picture on it, however deep the stacks.
  std::string flamegraph_svg(const FlameOptions& options = {}) const;
  /// Writes it to a temporary file renamed over `path`, as save() writes.
  void write_flamegraph_svg(const std::filesystem::path& path,
                            const FlameOptions& options = {}) const;
  /// A pprof profile (Go's profile.proto, gzipped: what `go tool pprof`, Grafana Pyroscope,
  /// Parca and Google Cloud Profiler read): the stack samples, each distinct stack with its
  /// count and CPU time (Python frames as functions with their file and line); a profile
  /// without samples (a PyTorch profiler trace, spans alone) gives its spans' time instead,
  /// each span path a stack of its names with the calls and self time spent there
  /// (mainboard::mainboard).
  std::string pprof() const;
  /// Writes it to a temporary file renamed over `path`, as save() writes.
  void write_pprof(const std::filesystem::path& path) const;
  /// One self-contained HTML page (no network: its script and style inline) that answers
  /// "where did the time go": the machine; the stack samples of every thread or one in five
  /// views (left heavy, time order, call tree, inverted tree, sandwich) with zoom, search and
  /// transforms (Python frames only, collapse a library, focus on or merge a function); the
  /// spans' timeline with GPU utilisation and memory under it and the idle gaps marked, sortable
  /// tables of regions, kernels and functions, the verdict and what could not be read
  /// (mainboard::mainboard).
  std::string html_report(const HtmlOptions& options = {}) const;
  /// Writes it to a temporary file renamed over `path`, as save() writes.
  void write_html_report(const std::filesystem::path& path, const HtmlOptions& options = {}) const;
  /// Adds `other`'s evidence to this profile: threads joined by tid, regions by path (their
  /// statistics summed), GPU activity and stack samples re-indexed, unavailable reasons joined.
  /// For the pieces of one run (the stack samples, the target's own spans, its GPU trace) or
  /// the processes of one job.
  void merge(const Profile& other);
  /// One profile of a distributed job from the profiles of its ranks: a process per rank, its
  /// times moved onto the first rank's clock (the same boot: exactly; other nodes: through the
  /// wall clock), statistics summed. What cannot be done right is said in `unavailable`
  /// ("merge: …"): ranks missing from world_size, a rank twice, clocks that cannot be aligned,
  /// profiles of other mainboard versions. `names` (the files, say) name the profiles in those
  /// lines. Throws mainboard::Error when `ranks` is empty.
  static Profile merge_ranks(std::vector<Profile> ranks,
                             const std::vector<std::string>& names = {});
  /// The ranks compared (a merged job's processes): per phase, per step, the waits, and the
  /// straggler. Empty (no ranks) for a profile of one process.
  RankReport ranks(const RankOptions& options = {}) const;
  /// Change of every region, kernel and sampled function against `baseline`, largest absolute
  /// change first.
  ProfileDiff diff(const Profile& baseline) const;
  /// Plain text with only the sections that have evidence; no list longer than `top` rows (the
  /// regions all by default; 15 functions, 3 stacks, 5 idle gaps at most) (mainboard::mainboard).
  std::string report(std::size_t top = SIZE_MAX) const;
  /// The same, a merged job's ranks read with `ranks` (the report above uses the defaults). A
  /// merged job's report opens with the line that names the rank holding it back.
  std::string report(std::size_t top, const RankOptions& ranks) const;
  /// The same, its hot functions ordered `by` self or total time.
  std::string report(std::size_t top, const RankOptions& ranks, FunctionOrder by) const;
  /// Prints the report, coloured when `color` (mainboard::mainboard).
  void show(bool color = true) const;

  /// Writes JSON (with schema_version) to a temporary file and renames it over `path`.
  void save(const std::filesystem::path& path) const;
  /// Reads a saved profile, plain or gzipped, or a PyTorch profiler trace (`*.pt.trace.json`,
  /// plain or gzipped; told by its content; read by mainboard::mainboard): its steps,
  /// annotations and operators as spans, its kernels, copies and sets as GPU activity, its rank
  /// from `distributedInfo` or the file's name. Throws mainboard::Error naming the file and what
  /// is wrong: missing, truncated, corrupt, another schema version, inconsistent (an index out of
  /// range), or a trace event's field missing or of the wrong type.
  static Profile load(const std::filesystem::path& path);
  /// Parses profile JSON text (what load() reads); `origin` names it in errors.
  static Profile parse(std::string_view text, const std::string& origin = "profile");
  /// Chrome / Perfetto trace-event JSON: a track per thread, spans as complete events, device
  /// samples as counters, process and thread names, the machine in the metadata
  /// (mainboard::mainboard).
  void perfetto(const std::filesystem::path& path) const;
  std::string perfetto_json() const;

  bool operator==(const Profile&) const = default;
};

}  // namespace mainboard
