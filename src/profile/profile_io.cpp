// A Profile on disk: JSON with a schema version, written atomically, read defensively (a profile
// file may be truncated, corrupt or hostile).
#include <array>
#include <atomic>
#include <charconv>
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
  v("node", m.node);
  v("rank", m.rank);
  v("clock", m.clock);
  v("written_by", m.written_by);
  v("processes", m.processes);
}
void to_json(nlohmann::json& j, const Profile& value) {
  json_detail::write_model(j, value);
}
void from_json(const nlohmann::json& j, Profile& value) {
  json_detail::read_model(j, value, "Profile");
}

namespace {

std::atomic<detail::ProfileReader> g_reader{nullptr};

/// Deepest nesting of arrays and objects, counted without parsing (strings skipped). The JSON
/// parser recurses once per level, so a hostile "[[[[…" must be refused before it runs.
std::size_t nesting(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '[' || c == '{')
      deepest = std::max(deepest, ++depth);
    else if ((c == ']' || c == '}') && depth > 0)
      --depth;
  }
  return deepest;
}

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

/// The parse of a profile: a document for everything but the bulk — the stored spans and the
/// stack samples, millions of small arrays that would each be a DOM node (most of the time and
/// memory of reading a large profile) — which go straight into their vectors.
class ProfileSax {
 public:
  using json = nlohmann::json;
  explicit ProfileSax(json& root) : dom_(root) {}
  std::vector<SpanEvent> spans;
  std::vector<StackSample> samples;
  std::string error;  ///< what was wrong in the bulk, when the parse stopped there

  bool null() { return bulk_ ? wrong() : dom_.null(); }
  bool boolean(bool v) { return bulk_ ? wrong() : dom_.boolean(v); }
  bool number_integer(std::int64_t v) { return bulk_ ? value(v, false) : dom_.number_integer(v); }
  bool number_unsigned(std::uint64_t v) {
    if (!bulk_) return dom_.number_unsigned(v);
    if (v > static_cast<std::uint64_t>(INT64_MAX)) return wrong();
    return value(static_cast<std::int64_t>(v), true);
  }
  bool number_float(double v, const std::string& text) {
    return bulk_ ? wrong() : dom_.number_float(v, text);
  }
  bool string(std::string& v) { return bulk_ ? wrong() : dom_.string(v); }
  bool binary(json::binary_t& v) { return bulk_ ? wrong() : dom_.binary(v); }
  bool start_object(std::size_t n) {
    ++depth_;
    return bulk_ ? wrong() : dom_.start_object(n);
  }
  bool end_object() {
    --depth_;
    return dom_.end_object();
  }
  bool key(std::string& k) {
    if (depth_ == 1) top_key_ = k;
    return dom_.key(k);
  }
  bool start_array(std::size_t n) {
    ++depth_;
    if (bulk_) {
      if (depth_ != 3) return wrong();
      arity_ = 0;
      return true;
    }
    if (depth_ == 2 && (top_key_ == "spans" || top_key_ == "samples")) {
      bulk_ = top_key_ == "spans" ? 1 : 2;
      return true;
    }
    return dom_.start_array(n);
  }
  bool end_array() {
    --depth_;
    if (!bulk_) return dom_.end_array();
    if (depth_ == 2) return element();
    bulk_ = 0;  // the bulk array itself: an empty one in the document
    return dom_.start_array(0) && dom_.end_array();
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& last, const Exception& ex) {
    return dom_.parse_error(position, last, ex);
  }

 private:
  bool wrong() {
    error = bulk_ == 1 ? "SpanEvent: expected [path, thread, start_ns, end_ns]"
                       : "StackSample: expected [t_ns, thread, stack]";
    return false;
  }
  bool value(std::int64_t v, bool is_unsigned) {
    if (depth_ != 3 || arity_ == 4) return wrong();
    values_[arity_] = v;
    unsigned_[arity_] = is_unsigned;
    ++arity_;
    return true;
  }
  /// One [..] of the bulk, checked as from_json checks it.
  bool element() {
    auto index = [&](std::size_t i) { return unsigned_[i] && values_[i] <= 0xffffffffll; };
    if (bulk_ == 1) {
      if (arity_ != 4 || !unsigned_[0] || !unsigned_[1]) return wrong();
      if (!index(0) || !index(1)) {
        error = "SpanEvent: index out of range";
        return false;
      }
      spans.push_back({static_cast<std::uint32_t>(values_[0]),
                       static_cast<std::uint32_t>(values_[1]), values_[2], values_[3]});
    } else {
      if (arity_ != 3 || !unsigned_[1] || !unsigned_[2]) return wrong();
      if (!index(1) || !index(2)) {
        error = "StackSample: index out of range";
        return false;
      }
      samples.push_back({values_[0], static_cast<std::uint32_t>(values_[1]),
                         static_cast<std::uint32_t>(values_[2])});
    }
    return true;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::size_t depth_ = 0;
  std::string top_key_;
  int bulk_ = 0;  // 1: in "spans", 2: in "samples"
  std::array<std::int64_t, 4> values_{};
  std::array<bool, 4> unsigned_{};
  std::size_t arity_ = 0;
};

}  // namespace

void detail::install_profile_reader(ProfileReader reader) noexcept {
  g_reader.store(reader, std::memory_order_release);
}

Profile Profile::parse(std::string_view text, const std::string& origin) {
  if (text.empty()) throw Error(origin + ": empty file");
  if (auto what = core::describe_bytes(text.substr(0, 4096)); !what.empty())
    throw Error(origin + ": not a profile: " + what);
  if (nesting(text) > 64) throw Error(origin + ": nested too deeply to be a profile");
  nlohmann::json j;
  ProfileSax sax(j);
  try {
    if (!nlohmann::json::sax_parse(text, &sax))
      throw Error(origin + ": " + (sax.error.empty() ? "not a readable profile" : sax.error));
  } catch (const nlohmann::json::parse_error& e) {
    // byte position tells a truncated file from a corrupt one.
    throw Error(origin + ": not valid JSON (" + (e.byte >= text.size() ? "truncated" : "corrupt") +
                " at byte " + std::to_string(e.byte) + ")");
  } catch (const nlohmann::json::exception& e) {
    // A number too large for any type (found by the fuzzer) and the like.
    throw Error(origin + ": not a readable profile (" + e.what() + ")");
  }
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
    if (!sax.spans.empty()) p.spans = std::move(sax.spans);
    if (!sax.samples.empty()) p.samples = std::move(sax.samples);
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
  // Read whole and parsed as a document: a million spans are a 34 MB file, read with 230 MB of
  // memory at the peak (about 7 bytes a byte). 1 GiB is some thirty million spans.
  auto text = core::read_input(path, {1ull << 30, "a profile", 7});
  return parse(text, path.string());
}

namespace {

void append_number(std::string& out, std::int64_t v) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
  out.append(digits, end);
}

/// `text` with the JSON string `"\u0001NAME\u0001"` (a mark no value holds) replaced by `bulk`.
void put_bulk(std::string& text, const char* name, const std::string& bulk) {
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
  std::string bulk;
  bulk.reserve(spans.size() * 48 + 2);
  bulk += '[';
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const auto& e = spans[i];
    bulk += i ? ",[" : "[";
    append_number(bulk, e.path);
    bulk += ',';
    append_number(bulk, e.thread);
    bulk += ',';
    append_number(bulk, e.start_ns);
    bulk += ',';
    append_number(bulk, e.end_ns);
    bulk += ']';
  }
  bulk += ']';
  put_bulk(text, "spans", bulk);
  bulk.clear();
  bulk.reserve(samples.size() * 32 + 2);
  bulk += '[';
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto& x = samples[i];
    bulk += i ? ",[" : "[";
    append_number(bulk, x.t_ns);
    bulk += ',';
    append_number(bulk, x.thread);
    bulk += ',';
    append_number(bulk, x.stack);
    bulk += ']';
  }
  bulk += ']';
  put_bulk(text, "samples", bulk);
  text += '\n';
  core::write_file_atomic(path, text);
}

}  // namespace mainboard
