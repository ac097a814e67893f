// A Profile on disk: JSON with a schema version, written atomically, read defensively (a profile
// file may be truncated, corrupt or hostile), and the Chrome/Perfetto trace-event export.
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/fs.hpp"
#include "json/fields.hpp"
#include "mainboard/error.hpp"
#include "mainboard/profile.hpp"

namespace mainboard {

const char* to_string(RegionDiff::Kind kind) {
  switch (kind) {
    case RegionDiff::Kind::changed: return "changed";
    case RegionDiff::Kind::added: return "added";
    case RegionDiff::Kind::removed: return "removed";
  }
  return "changed";
}
MAINBOARD_DEFINE_ENUM_JSON(RegionDiff::Kind, RegionDiff::Kind::changed, RegionDiff::Kind::added,
                           RegionDiff::Kind::removed)

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

template <class V>
void fields(V& v, ProfileDiff& m) {
  v("regions", m.regions);
}
MAINBOARD_DEFINE_JSON(ProfileDiff)

// Stored spans are the bulk of a profile: written as [path, thread, start, end] arrays, a
// third of the size of objects.
void to_json(nlohmann::json& j, const SpanEvent& e) { j = {e.path, e.thread, e.start_ns, e.end_ns}; }
void from_json(const nlohmann::json& j, SpanEvent& e) {
  if (!j.is_array() || j.size() != 4 || !j[0].is_number_unsigned() || !j[1].is_number_unsigned() ||
      !j[2].is_number_integer() || !j[3].is_number_integer())
    throw Error("SpanEvent: expected [path, thread, start_ns, end_ns]");
  auto path = j[0].get<std::uint64_t>(), thread = j[1].get<std::uint64_t>();
  if (path > 0xffffffffu || thread > 0xffffffffu) throw Error("SpanEvent: index out of range");
  e = {static_cast<std::uint32_t>(path), static_cast<std::uint32_t>(thread), j[2].get<std::int64_t>(),
       j[3].get<std::int64_t>()};
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
  v("unavailable", m.unavailable);
  v("machine", m.machine);
}
void to_json(nlohmann::json& j, const Profile& value) { json_detail::write_model(j, value); }
void from_json(const nlohmann::json& j, Profile& value) { json_detail::read_model(j, value, "Profile"); }

namespace {

/// Deepest nesting of arrays and objects, counted without parsing (strings skipped). The JSON
/// parser recurses once per level, so a hostile "[[[[…" must be refused before it runs.
std::size_t nesting(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    else if ((c == ']' || c == '}') && depth > 0) --depth;
  }
  return deepest;
}

void validate(const Profile& p, const std::string& origin) {
  auto bad = [&](const std::string& what) { throw Error(origin + ": " + what); };
  if (p.span_stats.size() != p.paths.size())
    bad(fmt::format("{} span_stats for {} paths", p.span_stats.size(), p.paths.size()));
  for (std::size_t i = 0; i < p.spans.size(); ++i) {
    const auto& e = p.spans[i];
    if (e.path >= p.paths.size()) bad(fmt::format("spans[{}] names path {} of {}", i, e.path, p.paths.size()));
    if (e.thread >= p.threads.size())
      bad(fmt::format("spans[{}] names thread {} of {}", i, e.thread, p.threads.size()));
    if (e.end_ns < e.start_ns) bad(fmt::format("spans[{}] ends before it starts", i));
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
  if (version->get<std::int64_t>() != kProfileSchemaVersion)
    throw Error(origin + ": schema_version " + version->dump() + " is not supported (this build reads " +
                std::to_string(kProfileSchemaVersion) + ")");
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
  if (size > kMaxBytes) throw Error(path.string() + ": too large to be a profile (" + std::to_string(size) + " bytes)");
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
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<int>(c));
        else out += c;
    }
  }
}

/// Trace-event time: microseconds from the profile's start, with nanosecond decimals.
void micros(std::string& out, std::int64_t ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  fmt::format_to(std::back_inserter(out), "{}.{:03}", ns / 1000, ns % 1000);
}

}  // namespace

std::string Profile::perfetto_json() const {
  std::string out;
  out.reserve(256 + spans.size() * 120 + device_samples.size() * 160);
  auto process = pid ? pid : 1;
  out += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  fmt::format_to(std::back_inserter(out),
                 "{{\"ph\":\"M\",\"pid\":{},\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":\"profiled process {}\"}}}}",
                 process, process);
  for (const auto& t : threads) {
    fmt::format_to(std::back_inserter(out), ",\n{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":\"", process,
                   t.tid ? t.tid : t.index);
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
  for (std::size_t i = 0; i < paths.size(); ++i) escape(escaped_paths[i], paths[i]);
  for (const auto& e : spans) {
    auto tid = e.thread < threads.size() && threads[e.thread].tid ? threads[e.thread].tid : e.thread;
    fmt::format_to(std::back_inserter(out), ",\n{{\"ph\":\"X\",\"cat\":\"span\",\"pid\":{},\"tid\":{},\"name\":\"{}\",\"ts\":", process, tid,
                   names[e.path]);
    micros(out, e.start_ns - start_ns);
    out += ",\"dur\":";
    micros(out, e.end_ns - e.start_ns);
    fmt::format_to(std::back_inserter(out), ",\"args\":{{\"path\":\"{}\"}}}}", escaped_paths[e.path]);
  }
  for (const auto& s : device_samples) {
    auto counter = [&](const char* name, const char* key, double value) {
      fmt::format_to(std::back_inserter(out), ",\n{{\"ph\":\"C\",\"pid\":{},\"tid\":0,\"name\":\"GPU {} {}\",\"ts\":", process, s.gpu, name);
      micros(out, s.t_ns - start_ns);
      fmt::format_to(std::back_inserter(out), ",\"args\":{{\"{}\":{}}}}}", key, value);
    };
    if (s.process_memory_bytes) counter("process memory", "bytes", static_cast<double>(*s.process_memory_bytes));
    if (s.device_memory_used_bytes) counter("memory used", "bytes", static_cast<double>(*s.device_memory_used_bytes));
    if (s.utilization_pct) counter("utilization", "percent", *s.utilization_pct);
  }
  out += "\n],\"metadata\":";
  nlohmann::json meta = {{"producer", "mainboard"}, {"dropped_spans", dropped_spans},
                         {"start_ns", start_ns}, {"end_ns", end_ns}};
  if (machine) meta["machine"] = *machine;
  out += meta.dump();
  out += "}\n";
  return out;
}

void Profile::perfetto(const std::filesystem::path& path) const { core::write_file_atomic(path, perfetto_json()); }

}  // namespace mainboard
