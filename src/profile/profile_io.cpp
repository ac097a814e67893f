// A Profile on disk: JSON with a schema version, written atomically, read defensively (a profile
// file may be truncated, corrupt or hostile).
#include <array>
#include <atomic>
#include <charconv>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/atomic_file.hpp"
#include "core/input_file.hpp"
#include "mainboard/error.hpp"
#include "mainboard/json.hpp"
#include "mainboard/profile.hpp"
#include "model/json_fields.hpp"
#include "profile/kernel_fields.hpp"
#include "profile/reader_hook.hpp"

namespace mainboard {

const char* to_string(DiffKind kind) {
  return detail::name_of(kind);
}
MAINBOARD_DEFINE_ENUM_JSON(DiffKind)

template <class V>
void fields(V& v, SpanStat& m) {
  v("path", m.path);
  v("name", m.name);
  v("calls", m.calls);
  v("total_ns", m.total_ns);
  v("self_ns", m.self_ns);
  v("min_ns", m.min_ns);
  v("max_ns", m.max_ns);
}
MAINBOARD_DEFINE_JSON(SpanStat)

template <class V>
void fields(V& v, ThreadInfo& m) {
  v("index", m.index);
  v("tid", m.tid);
  v("name", m.name);
  v("process", m.process);
}
MAINBOARD_DEFINE_JSON(ThreadInfo)

template <class V>
void fields(V& v, RankInfo& m) {
  v("rank", m.rank);
  v("local_rank", m.local_rank);
  v("world_size", m.world_size);
  v("job_id", m.job_id);
  v("source", m.source);
}
MAINBOARD_DEFINE_JSON(RankInfo)

template <class V>
void fields(V& v, ClockReference& m) {
  v("monotonic_ns", m.monotonic_ns);
  v("realtime_ns", m.realtime_ns);
  v("uncertainty_ns", m.uncertainty_ns);
  v("boot_id", m.boot_id);
}
MAINBOARD_DEFINE_JSON(ClockReference)

template <class V>
void fields(V& v, TargetExit& m) {
  v("exit_code", m.exit_code);
  v("signal", m.signal);
  v("timed_out", m.timed_out);
}
MAINBOARD_DEFINE_JSON(TargetExit)

std::string TargetExit::summary() const {
  if (timed_out) return "was ended by its timeout";
  if (signal) {
    const char* name = ::strsignal(signal);
    return "was killed by signal " + std::to_string(signal) +
           (name ? std::string(" (") + name + ")" : std::string());
  }
  return "exited with status " + std::to_string(exit_code);
}

template <class V>
void fields(V& v, TimeBreakdown& m) {
  v("rank", m.rank);
  v("source", m.source);
  v("window_ns", m.window_ns);
  v("compute_ns", m.compute_ns);
  v("communication_ns", m.communication_ns);
  v("memory_ns", m.memory_ns);
  v("idle_ns", m.idle_ns);
  v("compute_pct", m.compute_pct);
  v("non_compute_pct", m.non_compute_pct);
  v("idle_pct", m.idle_pct);
  v("overlap_pct", m.overlap_pct);
}
MAINBOARD_DEFINE_JSON(TimeBreakdown)

template <class V>
void fields(V& v, ProcessInfo& m) {
  v("index", m.index);
  v("pid", m.pid);
  v("command", m.command);
  v("node", m.node);
  v("rank", m.rank);
  v("written_by", m.written_by);
  v("offset_ns", m.offset_ns);
  v("alignment", m.alignment);
  v("start_ns", m.start_ns);
  v("end_ns", m.end_ns);
  v("span_stats", m.span_stats);
  v("samples", m.samples);
  v("lost_samples", m.lost_samples);
  v("dropped_spans", m.dropped_spans);
  v("breakdown", m.breakdown);
}
MAINBOARD_DEFINE_JSON(ProcessInfo)

template <class V>
void fields(V& v, RankSpread& m) {
  v("path", m.path);
  v("wait", m.wait);
  v("total_ns", m.total_ns);
  v("min_ns", m.min_ns);
  v("median_ns", m.median_ns);
  v("max_ns", m.max_ns);
  v("slowest_rank", m.slowest_rank);
  v("over_median_ns", m.over_median_ns);
}
MAINBOARD_DEFINE_JSON(RankSpread)

template <class V>
void fields(V& v, StepLag& m) {
  v("index", m.index);
  v("slowest_rank", m.slowest_rank);
  v("lag_ns", m.lag_ns);
  v("median_work_ns", m.median_work_ns);
}
MAINBOARD_DEFINE_JSON(StepLag)

template <class V>
void fields(V& v, RankSummary& m) {
  v("rank", m.rank);
  v("node", m.node);
  v("pid", m.pid);
  v("work_ns", m.work_ns);
  v("wait_ns", m.wait_ns);
  v("samples", m.samples);
  v("collective_samples", m.collective_samples);
  v("waits_for", m.waits_for);
  v("slowest_steps", m.slowest_steps);
  v("alignment", m.alignment);
}
MAINBOARD_DEFINE_JSON(RankSummary)

template <class V>
void fields(V& v, Straggler& m) {
  v("rank", m.rank);
  v("node", m.node);
  v("phase", m.phase);
  v("phase_kind", m.phase_kind);
  v("phase_excess_ns", m.phase_excess_ns);
  v("lag_ns", m.lag_ns);
  v("lag_pct", m.lag_pct);
  v("wait_phase", m.wait_phase);
  v("others_wait_ns", m.others_wait_ns);
  v("slowest_steps", m.slowest_steps);
  v("steps", m.steps);
}
MAINBOARD_DEFINE_JSON(Straggler)

template <class V>
void fields(V& v, RankReport& m) {
  v("verdict", m.verdict);
  v("straggler", m.straggler);
  v("ranks", m.ranks);
  v("world_size", m.world_size);
  v("missing_ranks", m.missing_ranks);
  v("step", m.step);
  v("spans", m.spans);
  v("steps", m.steps);
  v("warnings", m.warnings);
  v("breakdown", m.breakdown);
}
MAINBOARD_DEFINE_JSON(RankReport)

template <class V>
void fields(V& v, DeviceSample& m) {
  v("t_ns", m.t_ns);
  v("gpu", m.gpu);
  v("process_memory_bytes", m.process_memory_bytes);
  v("device_memory_used_bytes", m.device_memory_used_bytes);
  v("utilization_pct", m.utilization_pct);
  v("memory_utilization_pct", m.memory_utilization_pct);
}
MAINBOARD_DEFINE_JSON(DeviceSample)

template <class V>
void fields(V& v, IdleGap& m) {
  v("start_ns", m.start_ns);
  v("end_ns", m.end_ns);
  v("open_span", m.open_span);
}
MAINBOARD_DEFINE_JSON(IdleGap)

template <class V>
void fields(V& v, Timeline& m) {
  v("source", m.source);
  v("start_ns", m.start_ns);
  v("end_ns", m.end_ns);
  v("busy_ns", m.busy_ns);
  v("idle_ns", m.idle_ns);
  v("gaps", m.gaps);
}
MAINBOARD_DEFINE_JSON(Timeline)

template <class V>
void fields(V& v, Change& m) {
  v("kind", m.kind);
  v("baseline_calls", m.baseline_calls);
  v("calls", m.calls);
  v("baseline_total_ns", m.baseline_total_ns);
  v("total_ns", m.total_ns);
}
MAINBOARD_DEFINE_JSON(Change)

template <class V>
void fields(V& v, RegionDiff& m) {
  v("path", m.path);
  fields(v, static_cast<Change&>(m));
  v("baseline_avg_ns", m.baseline_avg_ns);
  v("avg_ns", m.avg_ns);
}
MAINBOARD_DEFINE_JSON(RegionDiff)

const char* to_string(GpuActivity::Kind kind) {
  return detail::name_of(kind);
}

MAINBOARD_DEFINE_ENUM_JSON(GpuActivity::Kind)

template <class V>
void fields(V& v, KernelDiff& m) {
  v("name", m.name);
  fields(v, static_cast<Change&>(m));
}
MAINBOARD_DEFINE_JSON(KernelDiff)

template <class V>
void fields(V& v, FunctionDiff& m) {
  v("function", m.function);
  v("module", m.module);
  v("file", m.file);
  v("kind", m.kind);
  v("baseline_self_pct", m.baseline_self_pct);
  v("self_pct", m.self_pct);
  v("baseline_total_pct", m.baseline_total_pct);
  v("total_pct", m.total_pct);
}
MAINBOARD_DEFINE_JSON(FunctionDiff)

template <class V>
void fields(V& v, ProfileDiff& m) {
  v("regions", m.regions);
  v("kernels", m.kernels);
  v("functions", m.functions);
}
MAINBOARD_DEFINE_JSON(ProfileDiff)

// Stored spans are the bulk of a profile: written as [path, thread, start, end] arrays, a
// third of the size of objects.
void to_json(nlohmann::json& j, const SpanEvent& e) {
  j = {e.path, e.thread, e.start_ns, e.end_ns};
}
void from_json(const nlohmann::json& j, SpanEvent& e) {
  if (!j.is_array() || j.size() != 4 || !j[0].is_number_unsigned() || !j[1].is_number_unsigned() ||
      !j[2].is_number_integer() || !j[3].is_number_integer())
    throw Error("SpanEvent: expected [path, thread, start_ns, end_ns]");
  auto path = j[0].get<std::uint64_t>(), thread = j[1].get<std::uint64_t>();
  if (path > 0xffffffffu || thread > 0xffffffffu) throw Error("SpanEvent: index out of range");
  e = {static_cast<std::uint32_t>(path), static_cast<std::uint32_t>(thread),
       j[2].get<std::int64_t>(), j[3].get<std::int64_t>()};
}

MAINBOARD_DEFINE_JSON(LaunchShape)
MAINBOARD_DEFINE_JSON(KernelSummary)

template <class V>
void fields(V& v, RegionGpuTime& m) {
  v("path", m.path);
  v("kernel_ns", m.kernel_ns);
  v("copy_ns", m.copy_ns);
  v("activities", m.activities);
  v("share_pct", m.share_pct);
}
MAINBOARD_DEFINE_JSON(RegionGpuTime)

template <class V>
void fields(V& v, TraceReport& m) {
  v("kernel_ns", m.kernel_ns);
  v("copy_ns", m.copy_ns);
  v("kernel_count", m.kernel_count);
  v("copy_count", m.copy_count);
  v("copy_bytes", m.copy_bytes);
  v("kernels", m.kernels);
  v("regions", m.regions);
}
MAINBOARD_DEFINE_JSON(TraceReport)

template <class V>
void fields(V& v, KernelEfficiency& m) {
  fields(v, static_cast<KernelSummary&>(m));
  v("waves", m.waves);
  v("last_wave_fill_pct", m.last_wave_fill_pct);
  v("achieved_gbs", m.achieved_gbs);
  v("bandwidth_pct", m.bandwidth_pct);
}
MAINBOARD_DEFINE_JSON(KernelEfficiency)

template <class V>
void fields(V& v, KernelCounters& m) {
  fields(v, static_cast<KernelSummary&>(m));
  v("sm_throughput_pct", m.sm_throughput_pct);
  v("dram_throughput_pct", m.dram_throughput_pct);
  v("achieved_occupancy_pct", m.achieved_occupancy_pct);
}
MAINBOARD_DEFINE_JSON(KernelCounters)

// Activity records can number millions: one array each, in this order (docs/profile.md).
//   [kind, name, start_ns, end_ns, device, stream, correlation, grid_x, grid_y, grid_z,
//    block_x, block_y, block_z, registers_per_thread, static_shared, dynamic_shared, bytes]
void to_json(nlohmann::json& j, const GpuActivity& a) {
  j = nlohmann::json::array({to_string(a.kind), a.name, a.start_ns, a.end_ns, a.device, a.stream,
                             a.correlation, a.grid[0], a.grid[1], a.grid[2], a.block[0], a.block[1],
                             a.block[2], a.registers_per_thread, a.static_shared_bytes,
                             a.dynamic_shared_bytes, a.bytes});
}
void from_json(const nlohmann::json& j, GpuActivity& a) {
  constexpr std::size_t kFields = 17;
  if (!j.is_array() || j.size() != kFields)
    throw Error("GpuActivity: expected an array of 17 values");
  from_json(j[0], a.kind);
  auto u32 = [&](std::size_t i) -> std::uint32_t {
    if (!j[i].is_number_unsigned() || j[i].get<std::uint64_t>() > 0xffffffffu)
      throw Error("GpuActivity: value " + std::to_string(i) + " is not a 32-bit count");
    return static_cast<std::uint32_t>(j[i].get<std::uint64_t>());
  };
  auto i64 = [&](std::size_t i) -> std::int64_t {
    if (!j[i].is_number_integer() ||
        (j[i].is_number_unsigned() && j[i].get<std::uint64_t>() > INT64_MAX))
      throw Error("GpuActivity: value " + std::to_string(i) + " is not a time");
    return j[i].get<std::int64_t>();
  };
  a.name = u32(1);
  a.start_ns = i64(2);
  a.end_ns = i64(3);
  a.device = u32(4);
  a.stream = u32(5);
  a.correlation = u32(6);
  for (std::size_t k = 0; k < 3; ++k) {
    a.grid[k] = u32(7 + k);
    a.block[k] = u32(10 + k);
  }
  a.registers_per_thread = u32(13);
  a.static_shared_bytes = u32(14);
  a.dynamic_shared_bytes = u32(15);
  if (!j[16].is_number_unsigned()) throw Error("GpuActivity: value 16 is not a byte count");
  a.bytes = j[16].get<std::uint64_t>();
}

template <class V>
void fields(V& v, StackFrame& m) {
  v("function", m.function);
  v("module", m.module);
  v("file", m.file);
  v("line", m.line);
  v("inlined", m.inlined);
}
MAINBOARD_DEFINE_JSON(StackFrame)

template <class V>
void fields(V& v, FunctionStat& m) {
  v("function", m.function);
  v("module", m.module);
  v("file", m.file);
  v("self_samples", m.self_samples);
  v("total_samples", m.total_samples);
  v("self_pct", m.self_pct);
  v("total_pct", m.total_pct);
}
MAINBOARD_DEFINE_JSON(FunctionStat)

template <class V>
void fields(V& v, StackStat& m) {
  v("frames", m.frames);
  v("samples", m.samples);
  v("pct", m.pct);
}
MAINBOARD_DEFINE_JSON(StackStat)

// Samples are many: [t_ns, thread, stack] arrays.
void to_json(nlohmann::json& j, const StackSample& s) {
  j = {s.t_ns, s.thread, s.stack};
}
void from_json(const nlohmann::json& j, StackSample& s) {
  if (!j.is_array() || j.size() != 3 || !j[0].is_number_integer() || !j[1].is_number_unsigned() ||
      !j[2].is_number_unsigned())
    throw Error("StackSample: expected [t_ns, thread, stack]");
  auto thread = j[1].get<std::uint64_t>(), stack = j[2].get<std::uint64_t>();
  if (thread > 0xffffffffu || stack > 0xffffffffu) throw Error("StackSample: index out of range");
  s = {j[0].get<std::int64_t>(), static_cast<std::uint32_t>(thread),
       static_cast<std::uint32_t>(stack)};
}

template <class V>
void fields(V& v, Profile& m) {
  v("schema_version", m.schema_version);
  v("pid", m.pid);
  v("command", m.command);
  v("start_ns", m.start_ns);
  v("end_ns", m.end_ns);
  v("paths", m.paths);
  v("span_stats", m.span_stats);
  v("spans", m.spans);
  v("dropped_spans", m.dropped_spans);
  v("threads", m.threads);
  v("device_samples", m.device_samples);
  v("activity_names", m.activity_names);
  v("activities", m.activities);
  v("dropped_activities", m.dropped_activities);
  v("counters", m.counters);
  v("frames", m.frames);
  v("stacks", m.stacks);
  v("samples", m.samples);
  v("sample_hz", m.sample_hz);
  v("span_clock", m.span_clock);
  v("span_clock_hz", m.span_clock_hz);
  v("lost_samples", m.lost_samples);
  v("unavailable", m.unavailable);
  v("function_maps", m.function_maps);
  v("machine", m.machine);
  v("energy", m.energy);
  v("node", m.node);
  v("rank", m.rank);
  v("clock", m.clock);
  v("written_by", m.written_by);
  v("target_exit", m.target_exit);
  v("processes", m.processes);
  v("source", m.source);
}
void to_json(nlohmann::json& j, const Profile& value) {
  json_detail::write_model(j, value);
}
void from_json(const nlohmann::json& j, Profile& value) {
  json_detail::read_model(j, value, "Profile");
}

namespace {

std::atomic<detail::ProfileReader> g_reader{nullptr};
std::atomic<detail::TraceLoader> g_trace_loader{nullptr};

void validate(const Profile& p, const std::string& origin) {
  auto bad = [&](const std::string& what) { throw Error(origin + ": " + what); };
  auto n = [](auto v) { return std::to_string(v); };
  if (p.span_stats.size() != p.paths.size())
    bad(n(p.span_stats.size()) + " span_stats for " + n(p.paths.size()) + " paths");
  for (std::size_t i = 0; i < p.spans.size(); ++i) {
    const auto& e = p.spans[i];
    if (e.path >= p.paths.size())
      bad("spans[" + n(i) + "] names path " + n(e.path) + " of " + n(p.paths.size()));
    if (e.thread >= p.threads.size())
      bad("spans[" + n(i) + "] names thread " + n(e.thread) + " of " + n(p.threads.size()));
    if (e.end_ns < e.start_ns) bad("spans[" + n(i) + "] ends before it starts");
  }
  for (std::size_t i = 0; i < p.activities.size(); ++i) {
    const auto& a = p.activities[i];
    if (a.name >= p.activity_names.size())
      bad("activities[" + n(i) + "] names " + n(a.name) + " of " + n(p.activity_names.size()) +
          " activity names");
    if (a.end_ns < a.start_ns) bad("activities[" + n(i) + "] ends before it starts");
  }
  for (std::size_t i = 0; i < p.stacks.size(); ++i)
    for (auto f : p.stacks[i])
      if (f >= p.frames.size())
        bad("stacks[" + n(i) + "] names frame " + n(f) + " of " + n(p.frames.size()));
  for (std::size_t i = 0; i < p.samples.size(); ++i) {
    const auto& x = p.samples[i];
    if (x.stack >= p.stacks.size())
      bad("samples[" + n(i) + "] names stack " + n(x.stack) + " of " + n(p.stacks.size()));
    if (x.thread >= p.threads.size())
      bad("samples[" + n(i) + "] names thread " + n(x.thread) + " of " + n(p.threads.size()));
  }
  for (std::size_t i = 0; i < p.threads.size(); ++i)
    if (p.threads[i].process != 0 && p.threads[i].process >= p.processes.size())
      bad("threads[" + n(i) + "] names process " + n(p.threads[i].process) + " of " +
          n(p.processes.size()));
  if (p.end_ns < p.start_ns) bad("the profile ends before it starts");
}

/// The text of a profile, read key by key of its top-level object: the stored spans and the stack
/// samples (millions of rows of a few integers, most of a large profile's bytes) straight into
/// their vectors; every other value parsed by the JSON library into `doc`. One pass over the
/// bytes; the nesting of each value is bounded before the library (which recurses once a level)
/// sees it.
class ProfileText {
 public:
  ProfileText(std::string_view text, const std::string& origin) : t_(text), origin_(origin) {}

  nlohmann::json doc;
  std::vector<SpanEvent> spans;
  std::vector<StackSample> samples;

  void read() {
    skip_space();
    if (at_end() || t_[i_] != '{') {  // not an object: read whole, for the caller to refuse
      doc = value();
      skip_space();
      if (!at_end()) invalid(i_);
      return;
    }
    doc = nlohmann::json::object();
    ++i_;
    skip_space();
    if (!at_end() && t_[i_] == '}') {
      ++i_;
    } else {
      for (;;) {
        if (at_end() || t_[i_] != '"') invalid(i_);
        std::size_t from = i_;
        i_ = string_end(i_);
        std::string key = parse(from, i_).get<std::string>();
        skip_space();
        if (at_end() || t_[i_] != ':') invalid(i_);
        ++i_;
        skip_space();
        if (key == "spans" && !at_end() && t_[i_] == '[') {
          spans.clear();
          // Room for as many rows as the bytes left could hold (a row is some 30 to 60 bytes):
          // only the pages written are memory, and the vector is never copied to grow.
          room(spans, 16);
          rows<4>(
              "SpanEvent: expected [path, thread, start_ns, end_ns]",
              [&](const std::array<std::int64_t, 4>& v, const std::array<bool, 4>& u) {
                if (!u[0] || !u[1]) return false;
                spans.push_back({index(v[0], "SpanEvent"), index(v[1], "SpanEvent"), v[2], v[3]});
                return true;
              });
          doc[key] = nlohmann::json::array();
        } else if (key == "samples" && !at_end() && t_[i_] == '[') {
          samples.clear();
          room(samples, 12);
          rows<3>(
              "StackSample: expected [t_ns, thread, stack]",
              [&](const std::array<std::int64_t, 3>& v, const std::array<bool, 3>& u) {
                if (!u[1] || !u[2]) return false;
                samples.push_back({v[0], index(v[1], "StackSample"), index(v[2], "StackSample")});
                return true;
              });
          doc[key] = nlohmann::json::array();
        } else {
          doc[key] = value();
        }
        if (another('}')) continue;
        break;
      }
    }
    skip_space();
    if (!at_end()) invalid(i_);
  }

 private:
  static constexpr std::size_t kDeepest = 64;  ///< arrays and objects within each other

  bool at_end() const { return i_ >= t_.size(); }
  /// Capacity for a row every `bytes_per_row` of the bytes left, where the address space allows
  /// (a limit on it, `ulimit -v`, or strict overcommit): otherwise the vector grows as it fills.
  template <class Row>
  void room(std::vector<Row>& rows, std::size_t bytes_per_row) const {
    try {
      rows.reserve((t_.size() - i_) / bytes_per_row);
    } catch (const std::bad_alloc&) {
    } catch (const std::length_error&) {
    }
  }
  void skip_space() {
    while (!at_end() && static_cast<unsigned char>(t_[i_]) <= ' ' &&
           (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t'))
      ++i_;
  }
  /// After a value of an array or object: true at a ',' (passed, with the space after it),
  /// false at `close` (passed); anything else is not JSON.
  bool another(char close) {
    skip_space();
    if (at_end()) invalid(i_);
    if (t_[i_] == ',') {
      ++i_;
      skip_space();
      return true;
    }
    if (t_[i_] != close) invalid(i_);
    ++i_;
    return false;
  }
  [[noreturn]] void fail(const std::string& what) const { throw Error(origin_ + ": " + what); }
  /// Not JSON at byte `at`: past the end, the file was cut short.
  [[noreturn]] void invalid(std::size_t at) const {
    fail(std::string("not valid JSON (") + (at >= t_.size() ? "truncated" : "corrupt") +
         " at byte " + std::to_string(std::min(at, t_.size())) + ")");
  }
  /// Where the string opening at `from` ends (past its closing quote).
  std::size_t string_end(std::size_t from) const {
    for (std::size_t k = from + 1; k < t_.size(); ++k) {
      if (t_[k] == '\\')
        ++k;
      else if (t_[k] == '"')
        return k + 1;
    }
    invalid(t_.size());
  }
  /// The bytes [from, to) — one whole JSON value — parsed by the library.
  nlohmann::json parse(std::size_t from, std::size_t to) const {
    try {
      return nlohmann::json::parse(t_.substr(from, to - from));
    } catch (const nlohmann::json::parse_error& e) {
      invalid(from + (e.byte > 0 ? e.byte - 1 : 0));
    } catch (const nlohmann::json::exception& e) {
      // A number too large for any type (found by the fuzzer) and the like.
      fail(std::string("not a readable profile (") + e.what() + ")");
    }
  }
  /// The value starting here, found whole (its nesting bounded) and parsed.
  nlohmann::json value() {
    if (at_end()) invalid(i_);
    std::size_t from = i_;
    char first = t_[i_];
    if (first == '"') {
      i_ = string_end(i_);
    } else if (first == '[' || first == '{') {
      for (std::size_t depth = 0;; ++i_) {
        if (at_end()) invalid(i_);
        char c = t_[i_];
        if (c == '"') {
          i_ = string_end(i_) - 1;
        } else if (c == '[' || c == '{') {
          if (++depth > kDeepest) fail("nested too deeply to be a profile");
        } else if ((c == ']' || c == '}') && --depth == 0) {
          ++i_;
          break;
        }
      }
    } else {  // a number, true, false or null (or bytes that are not JSON): to a delimiter
      for (; !at_end(); ++i_) {
        char c = t_[i_];
        if (c == ',' || c == ']' || c == '}' || c == ' ' || c == '\n' || c == '\r' || c == '\t')
          break;
      }
    }
    return parse(from, i_);
  }
  std::uint32_t index(std::int64_t v, const char* what) const {
    if (v > 0xffffffffll) fail(std::string(what) + ": index out of range");
    return static_cast<std::uint32_t>(v);
  }
  /// An array of rows of N integers at `i_`, each handed to `add` (which says whether its
  /// values are of the right signs); a row of another shape is refused with `expected`.
  template <std::size_t N, class Add>
  void rows(const char* expected, Add add) {
    auto wrong = [&]() {
      // Something JSON that is not an integer where one belongs, or bytes that are not JSON.
      if (at_end()) invalid(i_);
      char c = t_[i_];
      if (c == '"' || c == '[' || c == '{' || c == 't' || c == 'f' || c == 'n' || c == '-' ||
          c == '.' || c == 'e' || c == 'E' || c == ',' || c == ']' || (c >= '0' && c <= '9'))
        fail(expected);
      invalid(i_);
    };
    ++i_;  // the '['
    skip_space();
    if (!at_end() && t_[i_] == ']') {
      ++i_;
      return;
    }
    std::array<std::int64_t, N> v{};
    std::array<bool, N> is_unsigned{};
    for (;;) {
      if (at_end() || t_[i_] != '[') wrong();
      ++i_;
      skip_space();
      std::size_t k = 0;
      if (!at_end() && t_[i_] == ']') wrong();
      for (;;) {
        if (at_end()) invalid(i_);
        if (k == N) wrong();
        const char* first = t_.data() + i_;
        const char* last = t_.data() + t_.size();
        bool negative = *first == '-';
        const char* digits = first + (negative ? 1 : 0);
        const char* end = digits;
        std::uint64_t magnitude = 0;
        while (end != last && end - digits < 18 && *end >= '0' && *end <= '9')
          magnitude = magnitude * 10 + static_cast<unsigned>(*end++ - '0');
        if (end == digits) wrong();
        if (*digits == '0' && end - digits > 1)
          invalid(static_cast<std::size_t>(digits - t_.data()) + 1);  // a leading zero
        if (end != last && *end >= '0' && *end <= '9') {
          // 19 digits or more: the library's bounds (2^63 - 1 is the most a time may be).
          auto [past, ec] = std::from_chars(first, last, v[k]);
          if (ec == std::errc::result_out_of_range) {
            i_ = static_cast<std::size_t>(digits - t_.data());
            wrong();
          }
          end = past;
        } else {
          v[k] = negative ? -static_cast<std::int64_t>(magnitude)
                          : static_cast<std::int64_t>(magnitude);
        }
        i_ = static_cast<std::size_t>(end - t_.data());
        if (!at_end() && (t_[i_] == '.' || t_[i_] == 'e' || t_[i_] == 'E')) wrong();
        is_unsigned[k++] = !negative;
        if (another(']')) continue;
        break;
      }
      if (k != N || !add(v, is_unsigned)) fail(expected);
      if (another(']')) continue;
      return;
    }
  }

  std::string_view t_;
  const std::string& origin_;
  std::size_t i_ = 0;
};

}  // namespace

void detail::install_profile_reader(ProfileReader reader) noexcept {
  g_reader.store(reader, std::memory_order_release);
}

void detail::install_trace_loader(TraceLoader loader) noexcept {
  g_trace_loader.store(loader, std::memory_order_release);
}

Profile Profile::parse(std::string_view text, const std::string& origin) {
  if (text.empty()) throw Error(origin + ": empty file");
  if (auto what = core::describe_bytes(text.substr(0, 4096)); !what.empty())
    throw Error(origin + ": not a profile: " + what);
  ProfileText read(text, origin);
  read.read();
  nlohmann::json& j = read.doc;
  if (!j.is_object()) throw Error(origin + ": not a profile (expected a JSON object)");
  auto version = j.find("schema_version");
  if (version == j.end() || !version->is_number_integer())
    throw Error(origin + ": not a profile (no schema_version)");
  auto v = version->get<std::int64_t>();
  if (v < 1 || v > kProfileSchemaVersion)
    throw Error(origin + ": schema_version " + version->dump() +
                " is not supported (this build reads 1 to " +
                std::to_string(kProfileSchemaVersion) + ")");
  if (v < kProfileSchemaVersion) {
    // Older layouts lack what came later (2: GPU activity, 3: stack samples, 4: the maps of
    // auto-instrumented functions): the same profile with none of it.
    if (v < 2) {
      for (const char* key : {"activity_names", "activities", "counters"})
        j[key] = nlohmann::json::array();
      j["dropped_activities"] = 0;
    }
    if (v < 3) {
      for (const char* key : {"frames", "stacks", "samples"})
        j[key] = nlohmann::json::array();
      j["sample_hz"] = 0;
      j["lost_samples"] = 0;
    }
    if (v < 4) j["function_maps"] = nlohmann::json::array();
    if (v < 5) j["command"] = "";     // 5: the command's name
    if (v < 6) j["span_clock"] = "";  // 6: the span clock and its rate
    if (v < 7) {  // 7: node, rank, clock reference, version; a merged job's processes
      j["node"] = "";
      j["written_by"] = "";
      j["processes"] = nlohmann::json::array();
      if (auto threads = j.find("threads"); threads != j.end() && threads->is_array())
        for (auto& t : *threads)
          if (t.is_object()) t["process"] = 0;
    }
    // Counters were their own shape until 4: duration_ns, no summary statistics or shape.
    if (auto counters = j.find("counters"); v < 4 && counters != j.end() && counters->is_array())
      for (auto& c : *counters) {
        if (!c.is_object()) continue;
        if (c.contains("duration_ns")) c["total_ns"] = c["duration_ns"];
        for (const char* key :
             {"total_ns", "min_ns", "max_ns", "registers_per_thread", "shared_bytes"})
          if (!c.contains(key)) c[key] = 0;
        if (!c.contains("share_pct")) c["share_pct"] = 0.0;
        for (const char* key : {"grid", "block"})
          if (!c.contains(key)) c[key] = {0, 0, 0};
      }
    j["schema_version"] = kProfileSchemaVersion;
  }
  Profile p;
  try {
    p = j.get<Profile>();
    if (!read.spans.empty()) p.spans = std::move(read.spans);
    if (!read.samples.empty()) p.samples = std::move(read.samples);
  } catch (const Error& e) {
    throw Error(origin + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw Error(origin + ": " + e.what());
  }
  validate(p, origin);
  if (auto reader = g_reader.load(std::memory_order_acquire)) reader(p);
  return p;
}

Profile Profile::load(const std::filesystem::path& path) {
  {
    // A trace or a gzipped file is read by the loader mainboard::mainboard installs.
    std::string head(4096, '\0');
    std::ifstream in(path, std::ios::binary);
    if (in) {
      in.read(head.data(), static_cast<std::streamsize>(head.size()));
      head.resize(static_cast<std::size_t>(in.gcount()));
      bool gzip = head.size() >= 2 && head[0] == '\x1f' && head[1] == '\x8b';
      if (gzip || detail::looks_like_trace(head)) {
        if (auto loader = g_trace_loader.load(std::memory_order_acquire)) {
          if (auto p = loader(path, head)) {
            if (auto reader = g_reader.load(std::memory_order_acquire)) reader(*p);
            return std::move(*p);
          }
        } else if (!gzip) {
          throw Error(path.string() +
                      ": a trace (Chrome trace events, a PyTorch profiler's): the mainboard "
                      "command and Python package read it, the span library alone does not");
        }
      }
    }
  }
  // Read whole: the 207 MiB of a merged job of 5 million spans and 2.6 million samples take
  // 0.36 GiB at the peak (the text, then the vectors; some 2 bytes a byte, 3 allowed for).
  auto text = core::read_input(path, {1ull << 30, "a profile", 3});
  try {
    return parse(text, path.string());
  } catch (const std::bad_alloc&) {
    // A limit on the address space (ulimit -v) or strict overcommit, below what the file needs.
    throw Error(path.string() + ": not enough memory to read it (" +
                std::to_string(text.size() >> 20) + " MiB of JSON take about three times that)");
  }
}

namespace {

void append_number(std::string& out, std::int64_t v) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
  out.append(digits, end);
}

/// `rows` (each a few integers, as `fields` gives them) as a JSON array of arrays, put in
/// `text` where the string `"\u0001NAME\u0001"` is (a mark no value holds).
template <class Row, class Fields>
void put_rows(std::string& text, const char* name, const std::vector<Row>& rows,
              std::size_t bytes_per_row, Fields fields) {
  std::string bulk;
  bulk.reserve(rows.size() * bytes_per_row + 2);
  bulk += '[';
  for (std::size_t i = 0; i < rows.size(); ++i) {
    bulk += i ? ",[" : "[";
    bool first = true;
    for (std::int64_t v : fields(rows[i])) {
      if (!first) bulk += ',';
      first = false;
      append_number(bulk, v);
    }
    bulk += ']';
  }
  bulk += ']';
  std::string mark = std::string("\"\\u0001") + name + "\\u0001\"";
  if (auto at = text.find(mark); at != std::string::npos) text.replace(at, mark.size(), bulk);
}

}  // namespace

void Profile::save(const std::filesystem::path& path) const {
  // The stored spans and the stack samples are written as text, as from_json reads them; the
  // rest through the model (a document node per span would be most of the time and memory).
  Profile head = *this;
  head.spans.clear();
  head.spans.shrink_to_fit();
  head.samples.clear();
  head.samples.shrink_to_fit();
  nlohmann::json j = head;
  j["spans"] = "\x01spans\x01";
  j["samples"] = "\x01samples\x01";
  std::string text = j.dump();
  put_rows(text, "spans", spans, 48, [](const SpanEvent& e) {
    return std::array<std::int64_t, 4>{e.path, e.thread, e.start_ns, e.end_ns};
  });
  put_rows(text, "samples", samples, 32, [](const StackSample& x) {
    return std::array<std::int64_t, 3>{x.t_ns, x.thread, x.stack};
  });
  text += '\n';
  core::write_file_atomic(path, text);
}

}  // namespace mainboard
