#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/json_fwd.hpp"
#include "mainboard/snapshot.hpp"

namespace mainboard {

/// Version of the profile's JSON layout.
inline constexpr int kProfileSchemaVersion = 1;

/// Exact statistics of one span path over the whole session (whatever max_spans was).
struct SpanStat {
  std::string path;  ///< "train/step/forward"
  std::string name;  ///< the last component
  std::uint64_t calls = 0;
  std::int64_t total_ns = 0;
  std::int64_t self_ns = 0;  ///< total minus the time in child spans
  std::int64_t min_ns = 0;
  std::int64_t max_ns = 0;
  double avg_ns() const { return calls ? static_cast<double>(total_ns) / static_cast<double>(calls) : 0.0; }
  bool operator==(const SpanStat&) const = default;
};

/// One stored span (bounded by max_spans): indices into Profile::paths and Profile::threads.
struct SpanEvent {
  std::uint32_t path = 0;
  std::uint32_t thread = 0;
  std::int64_t start_ns = 0;  ///< monotonic clock, the one snapshots and device samples use
  std::int64_t end_ns = 0;
  bool operator==(const SpanEvent&) const = default;
};

struct ThreadInfo {
  std::uint32_t index = 0;
  std::int64_t tid = 0;
  std::string name;
  bool operator==(const ThreadInfo&) const = default;
};

/// One reading of the profiled process on its GPU, taken while spans were open.
struct DeviceSample {
  std::int64_t t_ns = 0;
  std::uint32_t gpu = 0;
  std::optional<std::uint64_t> process_memory_bytes;  ///< this process's share of GPU memory
  std::optional<std::uint64_t> device_memory_used_bytes;
  std::optional<double> utilization_pct;
  std::optional<double> memory_utilization_pct;
  bool operator==(const DeviceSample&) const = default;
};

/// A window in which the observed activity stopped.
struct IdleGap {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::string open_span;  ///< the innermost span open during the gap, if any
  std::int64_t duration_ns() const { return end_ns - start_ns; }
  bool operator==(const IdleGap&) const = default;
};

/// Busy and idle time over the observed activity, and the longest idle windows.
struct Timeline {
  std::string source;  ///< what counted as activity: "spans", "device samples", "gpu activity"
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
struct RegionDiff {
  std::string path;
  enum class Kind { changed, added, removed } kind = Kind::changed;
  std::uint64_t baseline_calls = 0, calls = 0;
  std::int64_t baseline_total_ns = 0, total_ns = 0;
  double baseline_avg_ns = 0, avg_ns = 0;
  std::int64_t total_change_ns() const { return total_ns - baseline_total_ns; }
  /// Relative change of the total, in percent; empty for new or vanished regions.
  std::optional<double> total_change_pct() const;
  bool operator==(const RegionDiff&) const = default;
};

struct ProfileDiff {
  std::vector<RegionDiff> regions;  ///< largest absolute change of total first
  std::string report() const;
  bool operator==(const ProfileDiff&) const = default;
};

/// One immutable result of a profiling session: only evidence that was observed (span
/// statistics, stored spans, device samples), the machine it ran on, and what could not be
/// collected and why.
struct Profile {
  int schema_version = kProfileSchemaVersion;
  std::int64_t pid = 0;  ///< the profiled process
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::vector<std::string> paths;     ///< interned span paths, indexed by SpanEvent::path
  std::vector<SpanStat> span_stats;   ///< one per path, in `paths` order
  std::vector<SpanEvent> spans;       ///< stored spans, by start time
  std::uint64_t dropped_spans = 0;    ///< spans past max_spans (their statistics still count)
  std::vector<ThreadInfo> threads;
  std::vector<DeviceSample> device_samples;
  std::vector<std::string> unavailable;  ///< "device: no GPU at index 0", …
  std::optional<MachineSnapshot> machine;

  /// Per-path statistics, slowest total first.
  std::vector<SpanStat> stats() const;
  /// The `top` slowest paths by total time.
  std::vector<SpanStat> bottlenecks(std::size_t top = 10) const;
  /// Busy/idle accounting: over device samples when there are some (utilization above zero is
  /// busy), else over the innermost spans; the `top_gaps` longest idle windows.
  Timeline timeline(std::size_t top_gaps = 10) const;
  /// Change of every region against `baseline`, largest absolute change first.
  ProfileDiff diff(const Profile& baseline) const;
  /// Plain text with only the sections that have evidence.
  std::string report() const;
  /// Prints the report, coloured when `color`.
  void show(bool color = true) const;

  /// Writes JSON (with schema_version) to a temporary file and renames it over `path`.
  void save(const std::filesystem::path& path) const;
  /// Reads a saved profile. Throws mainboard::Error naming the file and what is wrong: missing,
  /// truncated, corrupt, another schema version, or inconsistent (an index out of range).
  static Profile load(const std::filesystem::path& path);
  /// Parses profile JSON text (what load() reads); `origin` names it in errors.
  static Profile parse(std::string_view text, const std::string& origin = "profile");
  /// Chrome / Perfetto trace-event JSON: a track per thread, spans as complete events, device
  /// samples as counters, process and thread names, the machine in the metadata.
  void perfetto(const std::filesystem::path& path) const;
  std::string perfetto_json() const;

  bool operator==(const Profile&) const = default;
};

MAINBOARD_DECLARE_JSON(SpanStat);
MAINBOARD_DECLARE_JSON(SpanEvent);
MAINBOARD_DECLARE_JSON(ThreadInfo);
MAINBOARD_DECLARE_JSON(DeviceSample);
MAINBOARD_DECLARE_JSON(IdleGap);
MAINBOARD_DECLARE_JSON(Timeline);
MAINBOARD_DECLARE_JSON(RegionDiff);
MAINBOARD_DECLARE_JSON(ProfileDiff);
MAINBOARD_DECLARE_JSON(Profile);

}  // namespace mainboard
