// Profile::perfetto: the Chrome / Perfetto trace-event JSON of a profile, written by hand for
// speed (a million spans in well under a second) and checked by the Chrome DevTools trace engine
// in the tests.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "core/atomic_file.hpp"
#include "mainboard/json.hpp"
#include "mainboard/profile.hpp"

namespace mainboard {

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

/// The trace's tid of thread `index`: its own, or for a track of no thread of the system (an
/// asyncio task's spans, a profile that did not record tids) one above Linux's largest pid.
std::int64_t trace_tid(const std::vector<ThreadInfo>& threads, std::size_t index) {
  constexpr std::int64_t kAboveAnyPid = std::int64_t{1} << 22;
  if (index < threads.size() && threads[index].tid) return threads[index].tid;
  return kAboveAnyPid + static_cast<std::int64_t>(index);
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
        process, trace_tid(threads, t.index));
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
    auto tid = trace_tid(threads, e.thread);
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
    auto tid = trace_tid(threads, x.thread);
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
