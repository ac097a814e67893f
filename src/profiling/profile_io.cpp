// A Profile on disk: JSON with a schema version, written atomically, read defensively (a profile
// file may be truncated, corrupt or hostile), and the Chrome/Perfetto trace-event export.
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/atomic_file.hpp"
#include "core/fs.hpp"
#include "json/fields.hpp"
#include "mainboard/error.hpp"
#include "mainboard/profile.hpp"

namespace mainboard {

const char* to_string(DiffKind kind) {
  switch (kind) {
    case DiffKind::changed: return "changed";
    case DiffKind::added: return "added";
    case DiffKind::removed: return "removed";
  }
  return "changed";
}
MAINBOARD_DEFINE_ENUM_JSON(DiffKind, DiffKind::changed, DiffKind::added, DiffKind::removed)

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
}
MAINBOARD_DEFINE_JSON(ThreadInfo)

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
void fields(V& v, RegionDiff& m) {
  v("path", m.path);
  v("kind", m.kind);
  v("baseline_calls", m.baseline_calls);
  v("calls", m.calls);
  v("baseline_total_ns", m.baseline_total_ns);
  v("total_ns", m.total_ns);
  v("baseline_avg_ns", m.baseline_avg_ns);
  v("avg_ns", m.avg_ns);
}
MAINBOARD_DEFINE_JSON(RegionDiff)

const char* to_string(GpuActivity::Kind kind) {
  switch (kind) {
    case GpuActivity::Kind::kernel: return "kernel";
    case GpuActivity::Kind::memcpy: return "memcpy";
    case GpuActivity::Kind::memset: return "memset";
    case GpuActivity::Kind::synchronization: return "synchronization";
    case GpuActivity::Kind::overhead: return "overhead";
  }
  return "kernel";
}

MAINBOARD_DEFINE_ENUM_JSON(GpuActivity::Kind, GpuActivity::Kind::kernel, GpuActivity::Kind::memcpy,
                           GpuActivity::Kind::memset, GpuActivity::Kind::synchronization,
                           GpuActivity::Kind::overhead)

template <class V>
void fields(V& v, KernelDiff& m) {
  v("name", m.name);
  v("kind", m.kind);
  v("baseline_calls", m.baseline_calls);
  v("calls", m.calls);
  v("baseline_total_ns", m.baseline_total_ns);
  v("total_ns", m.total_ns);
}
MAINBOARD_DEFINE_JSON(KernelDiff)

template <class V>
void fields(V& v, ProfileDiff& m) {
  v("regions", m.regions);
  v("kernels", m.kernels);
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

template <class V>
void fields(V& v, KernelSummary& m) {
  v("name", m.name);
  v("calls", m.calls);
  v("total_ns", m.total_ns);
  v("min_ns", m.min_ns);
  v("max_ns", m.max_ns);
  v("share_pct", m.share_pct);
}
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
  v("name", m.name);
  v("calls", m.calls);
  v("total_ns", m.total_ns);
  v("avg_ns", m.avg_ns);
  v("grid", m.grid);
  v("block", m.block);
  v("registers_per_thread", m.registers_per_thread);
  v("shared_bytes", m.shared_bytes);
  v("blocks", m.blocks);
  v("waves", m.waves);
  v("last_wave_fill_pct", m.last_wave_fill_pct);
  v("achieved_gbs", m.achieved_gbs);
  v("bandwidth_pct", m.bandwidth_pct);
}
MAINBOARD_DEFINE_JSON(KernelEfficiency)

template <class V>
void fields(V& v, KernelCounters& m) {
  v("name", m.name);
  v("calls", m.calls);
  v("duration_ns", m.duration_ns);
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
  v("lost_samples", m.lost_samples);
  v("unavailable", m.unavailable);
  v("machine", m.machine);
}
void to_json(nlohmann::json& j, const Profile& value) {
  json_detail::write_model(j, value);
}
void from_json(const nlohmann::json& j, Profile& value) {
  json_detail::read_model(j, value, "Profile");
}

namespace {

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
  if (p.span_stats.size() != p.paths.size())
    bad(fmt::format("{} span_stats for {} paths", p.span_stats.size(), p.paths.size()));
  for (std::size_t i = 0; i < p.spans.size(); ++i) {
    const auto& e = p.spans[i];
    if (e.path >= p.paths.size())
      bad(fmt::format("spans[{}] names path {} of {}", i, e.path, p.paths.size()));
    if (e.thread >= p.threads.size())
      bad(fmt::format("spans[{}] names thread {} of {}", i, e.thread, p.threads.size()));
    if (e.end_ns < e.start_ns) bad(fmt::format("spans[{}] ends before it starts", i));
  }
  for (std::size_t i = 0; i < p.activities.size(); ++i) {
    const auto& a = p.activities[i];
    if (a.name >= p.activity_names.size())
      bad(fmt::format("activities[{}] names {} of {} activity names", i, a.name,
                      p.activity_names.size()));
    if (a.end_ns < a.start_ns) bad(fmt::format("activities[{}] ends before it starts", i));
  }
  for (std::size_t i = 0; i < p.stacks.size(); ++i)
    for (auto f : p.stacks[i])
      if (f >= p.frames.size())
        bad(fmt::format("stacks[{}] names frame {} of {}", i, f, p.frames.size()));
  for (std::size_t i = 0; i < p.samples.size(); ++i) {
    const auto& x = p.samples[i];
    if (x.stack >= p.stacks.size())
      bad(fmt::format("samples[{}] names stack {} of {}", i, x.stack, p.stacks.size()));
    if (x.thread >= p.threads.size())
      bad(fmt::format("samples[{}] names thread {} of {}", i, x.thread, p.threads.size()));
  }
  if (p.end_ns < p.start_ns) bad("the profile ends before it starts");
}

}  // namespace

Profile Profile::parse(std::string_view text, const std::string& origin) {
  if (text.empty()) throw Error(origin + ": empty file");
  if (nesting(text) > 64) throw Error(origin + ": nested too deeply to be a profile");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
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
    // Older layouts lack what came later (2: GPU activity, 3: stack samples): the same profile
    // with none of it.
    if (v < 2) {
      for (const char* key : {"activity_names", "activities", "counters"})
        j[key] = nlohmann::json::array();
      j["dropped_activities"] = 0;
    }
    for (const char* key : {"frames", "stacks", "samples"})
      j[key] = nlohmann::json::array();
    j["sample_hz"] = 0;
    j["lost_samples"] = 0;
    j["schema_version"] = kProfileSchemaVersion;
  }
  Profile p;
  try {
    p = j.get<Profile>();
  } catch (const Error& e) {
    throw Error(origin + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw Error(origin + ": " + e.what());
  }
  validate(p, origin);
  return p;
}

Profile Profile::load(const std::filesystem::path& path) {
  // Bounded: a profile of ten million spans is well under this.
  constexpr std::size_t kMaxBytes = 2ull << 30;
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) throw Error("cannot read " + path.string() + ": " + ec.message());
  if (size > kMaxBytes)
    throw Error(path.string() + ": too large to be a profile (" + std::to_string(size) + " bytes)");
  auto text = core::Fs("/").read(std::filesystem::absolute(path).string(), kMaxBytes);
  if (!text) throw Error("cannot read " + path.string());
  return parse(*text, path.string());
}

void Profile::save(const std::filesystem::path& path) const {
  nlohmann::json j = *this;
  core::write_file_atomic(path, j.dump() + "\n");
}

// --- Chrome / Perfetto trace events -----------------------------------------------------------

namespace {

void escape(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<int>(c));
        else
          out += c;
    }
  }
}

/// Trace-event time in 1/1024 µs (≈ 1 ns). Trace viewers keep microseconds as doubles and end an
/// event at ts + dur: with decimal nanoseconds that sum can round past the end of the enclosing
/// span (19804.096 + 100.06 > 19304.036 + 600.12 in binary), and the viewer then drops or
/// misnests the inner span. Binary fractions are exact, so every sum is too, and rounding to them
/// keeps the order of every boundary.
std::int64_t ticks_1024(std::int64_t ns) {
  auto scaled = static_cast<__int128>(ns) * 1024;
  return static_cast<std::int64_t>(scaled >= 0 ? (scaled + 500) / 1000 : (scaled - 500) / 1000);
}

/// Writes ticks / 1024 exactly: up to ten decimals (1/1024 = 0.0009765625), trailing zeros off.
void micros_exact(std::string& out, std::int64_t ticks) {
  if (ticks < 0) {
    out += '-';
    ticks = -ticks;
  }
  fmt::format_to(std::back_inserter(out), "{}", ticks >> 10);
  if (auto frac = static_cast<std::uint64_t>(ticks & 1023) * 9765625u) {
    char digits[10];
    std::size_t n = 10;
    for (std::size_t i = 10; i-- > 0; frac /= 10)
      digits[i] = static_cast<char>('0' + frac % 10);
    while (digits[n - 1] == '0')
      --n;
    out += '.';
    out.append(digits, n);
  }
}

/// A time from the profile's start.
void micros(std::string& out, std::int64_t ns) {
  micros_exact(out, ticks_1024(ns));
}

/// The duration of [start, end) such that ts + dur lands exactly on micros(end).
void duration(std::string& out, std::int64_t start_ns, std::int64_t end_ns) {
  micros_exact(out, ticks_1024(end_ns) - ticks_1024(start_ns));
}

}  // namespace

std::string Profile::perfetto_json() const {
  std::string out;
  out.reserve(256 + spans.size() * 120 + device_samples.size() * 160 + activities.size() * 220);
  auto process = pid ? pid : 1;
  out += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  fmt::format_to(std::back_inserter(out),
                 "{{\"ph\":\"M\",\"pid\":{},\"tid\":0,\"name\":\"process_name\",\"args\":{{"
                 "\"name\":\"profiled process {}\"}}}}",
                 process, process);
  for (const auto& t : threads) {
    fmt::format_to(
        std::back_inserter(out),
        ",\n{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":\"",
        process, t.tid ? t.tid : t.index);
    escape(out, t.name.empty() ? "thread " + std::to_string(t.index) : t.name);
    out += "\"}}";
  }
  // Names of the last path component; the full path is in args.
  std::vector<std::string> names(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    auto slash = paths[i].rfind('/');
    names[i].clear();
    escape(names[i], slash == std::string::npos ? paths[i] : paths[i].substr(slash + 1));
  }
  std::vector<std::string> escaped_paths(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i)
    escape(escaped_paths[i], paths[i]);
  for (const auto& e : spans) {
    auto tid =
        e.thread < threads.size() && threads[e.thread].tid ? threads[e.thread].tid : e.thread;
    fmt::format_to(
        std::back_inserter(out),
        ",\n{{\"ph\":\"X\",\"cat\":\"span\",\"pid\":{},\"tid\":{},\"name\":\"{}\",\"ts\":", process,
        tid, names[e.path]);
    micros(out, e.start_ns - start_ns);
    out += ",\"dur\":";
    duration(out, e.start_ns - start_ns, e.end_ns - start_ns);
    fmt::format_to(std::back_inserter(out), ",\"args\":{{\"path\":\"{}\"}}}}",
                   escaped_paths[e.path]);
  }
  for (const auto& s : device_samples) {
    auto counter = [&](const char* name, const char* key, double value) {
      fmt::format_to(std::back_inserter(out),
                     ",\n{{\"ph\":\"C\",\"pid\":{},\"tid\":0,\"name\":\"GPU {} {}\",\"ts\":",
                     process, s.gpu, name);
      micros(out, s.t_ns - start_ns);
      fmt::format_to(std::back_inserter(out), ",\"args\":{{\"{}\":{}}}}}", key, value);
    };
    if (s.process_memory_bytes)
      counter("process memory", "bytes", static_cast<double>(*s.process_memory_bytes));
    if (s.device_memory_used_bytes)
      counter("memory used", "bytes", static_cast<double>(*s.device_memory_used_bytes));
    if (s.utilization_pct) counter("utilization", "percent", *s.utilization_pct);
  }
  // GPU activity: a track per device and stream, under a pseudo-process per device (trace pids
  // above any real pid_max).
  constexpr std::int64_t kGpuPid = 2'000'000'000;
  std::set<std::pair<std::uint32_t, std::uint32_t>> tracks;
  for (const auto& a : activities)
    tracks.emplace(a.device, a.stream);
  std::set<std::uint32_t> devices;
  for (const auto& [device, stream] : tracks) {
    if (devices.insert(device).second)
      fmt::format_to(std::back_inserter(out),
                     ",\n{{\"ph\":\"M\",\"pid\":{},\"tid\":0,\"name\":\"process_name\",\"args\":{{"
                     "\"name\":\"GPU {}\"}}}}",
                     kGpuPid + device, device);
    fmt::format_to(std::back_inserter(out),
                   ",\n{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_name\",\"args\":{{"
                   "\"name\":\"stream {}\"}}}}",
                   kGpuPid + device, stream, stream);
  }
  std::vector<std::string> activity_labels(activity_names.size());
  for (std::size_t i = 0; i < activity_names.size(); ++i)
    escape(activity_labels[i], activity_names[i]);
  for (const auto& a : activities) {
    fmt::format_to(
        std::back_inserter(out),
        ",\n{{\"ph\":\"X\",\"cat\":\"gpu_{}\",\"pid\":{},\"tid\":{},\"name\":\"{}\",\"ts\":",
        to_string(a.kind), kGpuPid + a.device, a.stream,
        a.name < activity_labels.size() ? activity_labels[a.name] : std::string("(unnamed)"));
    micros(out, a.start_ns - start_ns);
    out += ",\"dur\":";
    duration(out, a.start_ns - start_ns, a.end_ns - start_ns);
    if (a.kind == GpuActivity::Kind::kernel)
      fmt::format_to(std::back_inserter(out),
                     ",\"args\":{{\"grid\":\"{}x{}x{}\",\"block\":\"{}x{}x{}\",\"registers_per_"
                     "thread\":{},\"shared_bytes\":{},\"correlation\":{}}}}}",
                     a.grid[0], a.grid[1], a.grid[2], a.block[0], a.block[1], a.block[2],
                     a.registers_per_thread, a.static_shared_bytes + a.dynamic_shared_bytes,
                     a.correlation);
    else if (a.bytes)
      fmt::format_to(std::back_inserter(out), ",\"args\":{{\"bytes\":{},\"correlation\":{}}}}}",
                     a.bytes, a.correlation);
    else
      fmt::format_to(std::back_inserter(out), ",\"args\":{{\"correlation\":{}}}}}", a.correlation);
  }
  // Stack samples: an instant event per sample on its thread's track, named by the leaf
  // function, with the whole stack (root first) in its arguments.
  std::vector<std::string> stack_text(stacks.size());
  for (std::size_t i = 0; i < stacks.size(); ++i) {
    std::string text;
    for (auto it = stacks[i].rbegin(); it != stacks[i].rend(); ++it)
      if (*it < frames.size()) {
        if (!text.empty()) text += "\n";
        text += frames[*it].function;
      }
    escape(stack_text[i], text);
  }
  std::vector<std::string> leaf(stacks.size());
  for (std::size_t i = 0; i < stacks.size(); ++i)
    escape(leaf[i], !stacks[i].empty() && stacks[i][0] < frames.size()
                        ? frames[stacks[i][0]].function
                        : "[unknown]");
  for (const auto& x : samples) {
    if (x.stack >= stacks.size()) continue;
    auto tid =
        x.thread < threads.size() && threads[x.thread].tid ? threads[x.thread].tid : x.thread;
    fmt::format_to(std::back_inserter(out),
                   ",\n{{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"sample\",\"pid\":{},\"tid\":{},"
                   "\"name\":\"{}\",\"ts\":",
                   process, tid, leaf[x.stack]);
    micros(out, x.t_ns - start_ns);
    fmt::format_to(std::back_inserter(out), ",\"args\":{{\"stack\":\"{}\"}}}}",
                   stack_text[x.stack]);
  }
  out += "\n],\"metadata\":";
  nlohmann::json meta = {{"producer", "mainboard"},
                         {"dropped_spans", dropped_spans},
                         {"dropped_activities", dropped_activities},
                         {"sample_hz", sample_hz},
                         {"lost_samples", lost_samples},
                         {"start_ns", start_ns},
                         {"end_ns", end_ns}};
  if (machine) meta["machine"] = *machine;
  out += meta.dump();
  out += "}\n";
  return out;
}

void Profile::perfetto(const std::filesystem::path& path) const {
  core::write_file_atomic(path, perfetto_json());
}

}  // namespace mainboard
