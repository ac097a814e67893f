// Profile::perfetto: the Chrome / Perfetto trace-event JSON of a profile, written by hand for
// speed (a million spans in well under a second) and checked by the Chrome DevTools trace engine
// in the tests.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "core/atomic_file.hpp"
#include "export/flame.hpp"
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

/// The trace's pid of thread `index`: the profiled process's, or in a merged job one per rank,
/// numbered from 1 in rank order so that the ranks are drawn one under another.
std::int64_t trace_pid(const Profile& p, std::size_t index) {
  if (p.processes.empty() || index >= p.threads.size()) return p.pid ? p.pid : 1;
  return 1 + static_cast<std::int64_t>(p.threads[index].process);
}

/// A time from the profile's start.
void micros(std::string& out, std::int64_t ns) {
  micros_exact(out, ticks_1024(ns));
}

/// The duration of [start, end) such that ts + dur lands exactly on micros(end).
void duration(std::string& out, std::int64_t start_ns, std::int64_t end_ns) {
  micros_exact(out, ticks_1024(end_ns) - ticks_1024(start_ns));
}

/// The samples' stacks as one call tree, frames merged by function, module and file (lines
/// apart): node 0 is the root, each other node a frame under its parent. Each stack ends at
/// the node of its leaf.
struct CallTree {
  struct Node {
    std::uint32_t parent = 0;
    std::uint32_t frame = 0;  ///< a Profile::frames index (the first seen of its kind)
  };
  std::vector<Node> nodes{Node{}};
  std::vector<std::uint32_t> leaf_of_stack;  ///< per Profile::stacks entry

  static CallTree of(const Profile& p) {
    CallTree t;
    // The frame kinds: one per function, module and file.
    std::map<std::tuple<std::string_view, std::string_view, std::string_view>, std::uint32_t> kinds;
    std::vector<std::uint32_t> kind_of(p.frames.size());
    for (std::size_t i = 0; i < p.frames.size(); ++i) {
      const auto& f = p.frames[i];
      kind_of[i] = kinds.try_emplace({f.function, f.module, f.file}, static_cast<std::uint32_t>(i))
                       .first->second;
    }
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> children;
    t.leaf_of_stack.reserve(p.stacks.size());
    for (const auto& stack : p.stacks) {
      std::uint32_t node = 0;
      for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
        if (*it >= p.frames.size()) continue;
        auto frame = kind_of[*it];
        auto [pos, added] =
            children.try_emplace({node, frame}, static_cast<std::uint32_t>(t.nodes.size()));
        if (added) t.nodes.push_back({node, frame});
        node = pos->second;
      }
      t.leaf_of_stack.push_back(node);
    }
    return t;
  }
};

/// What a trace viewer shows as a frame's name: the function, and where it comes from.
std::string trace_frame_name(const StackFrame& f) {
  return f.function.empty() ? "[unknown]" : f.function;
}

/// A frame's name in a sample's instant event: at most `limit` bytes, cut on a character
/// boundary with "..." after it.
std::string_view capped(std::string_view name, std::size_t limit, std::string& buffer) {
  if (name.size() <= limit) return name;
  std::size_t end = limit - 3;
  while (end > 0 && (static_cast<unsigned char>(name[end]) & 0xC0) == 0x80)
    --end;
  buffer.assign(name.substr(0, end));
  buffer += "...";
  return buffer;
}

/// Stack samples as trace events, two ways:
///  - per thread, a "Profile" and a "ProfileChunk" event (the CPU profile the Chrome DevTools
///    performance panel draws as a flame chart under the thread's spans);
///  - an instant event per sample on its thread's track, named by its leaf, with the whole stack
///    in its arguments (what Perfetto's JSON importer shows).
/// `whole`: the profile before its deep stacks were cut, whose stacks the events name.
void stack_sample_events(std::string& out, const Profile& p, const CallTree& tree,
                         const Profile& whole) {
  if (p.samples.empty()) return;
  std::vector<std::string> labels(p.frames.size());
  for (std::size_t i = 0; i < p.frames.size(); ++i)
    escape(labels[i], trace_frame_name(p.frames[i]));
  // Per thread: its samples (by time) and the nodes they need, ancestors included.
  std::map<std::uint32_t, std::vector<const StackSample*>> by_thread;
  for (const auto& x : p.samples)
    if (x.stack < p.stacks.size()) by_thread[x.thread].push_back(&x);
  std::uint32_t profile_id = 0;
  for (auto& [thread, list] : by_thread) {
    std::stable_sort(list.begin(), list.end(),
                     [](const StackSample* a, const StackSample* b) { return a->t_ns < b->t_ns; });
    auto tid = trace_tid(p.threads, thread);
    auto process = trace_pid(p, thread);
    ++profile_id;
    // The whole profile's time as one slice on the thread: the flame chart's place in DevTools
    // (it draws samples only under trace events), and every span of the thread fits inside it.
    fmt::format_to(std::back_inserter(out),
                   ",\n{{\"ph\":\"X\",\"cat\":\"sample\",\"pid\":{},\"tid\":{},"
                   "\"name\":\"stack samples\",\"ts\":0,\"dur\":",
                   process, tid);
    duration(out, 0, std::max<std::int64_t>(p.end_ns - p.start_ns, list.back()->t_ns - p.start_ns));
    fmt::format_to(std::back_inserter(out), ",\"args\":{{\"samples\":{},\"hz\":{}}}}}", list.size(),
                   p.sample_hz);
    std::int64_t first = ticks_1024(list.front()->t_ns - p.start_ns);
    fmt::format_to(
        std::back_inserter(out),
        ",\n{{\"ph\":\"P\",\"cat\":\"sample\",\"name\":\"Profile\",\"pid\":{},\"tid\":{},"
        "\"id\":\"0x{:x}\",\"ts\":",
        process, tid, profile_id);
    micros_exact(out, first);
    out += ",\"args\":{\"data\":{\"startTime\":";
    micros_exact(out, first);
    out += "}}}";
    std::vector<bool> used(tree.nodes.size());
    for (const auto* x : list)
      for (auto n = tree.leaf_of_stack[x->stack]; !used[n]; n = tree.nodes[n].parent) {
        used[n] = true;
        if (n == 0) break;
      }
    fmt::format_to(std::back_inserter(out),
                   ",\n{{\"ph\":\"P\",\"cat\":\"sample\",\"name\":\"ProfileChunk\",\"pid\":{},"
                   "\"tid\":{},\"id\":\"0x{:x}\",\"ts\":",
                   process, tid, profile_id);
    micros_exact(out, first);
    // Node ids are the tree's plus one (the root, "(root)", is 1).
    out += ",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":[";
    bool comma = false;
    for (std::size_t n = 0; n < tree.nodes.size(); ++n) {
      if (!used[n]) continue;
      if (comma) out += ',';
      comma = true;
      if (n == 0) {
        out +=
            "{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\",\"url\":\"\",\"scriptId\":0,"
            "\"lineNumber\":-1,\"columnNumber\":-1}}";
        continue;
      }
      const auto& f = p.frames[tree.nodes[n].frame];
      fmt::format_to(std::back_inserter(out),
                     "{{\"id\":{},\"parent\":{},\"callFrame\":{{\"functionName\":\"{}\",\"url\":\"",
                     n + 1, tree.nodes[n].parent + 1, labels[tree.nodes[n].frame]);
      escape(out, f.file.empty() ? f.module : f.file);
      out += "\",\"scriptId\":0,\"lineNumber\":-1,\"columnNumber\":-1}}";
    }
    out += "],\"samples\":[";
    for (std::size_t i = 0; i < list.size(); ++i)
      fmt::format_to(std::back_inserter(out), "{}{}", i ? "," : "",
                     tree.leaf_of_stack[list[i]->stack] + 1);
    // Deltas in microseconds; the first from startTime. Whole ticks keep their sum exact.
    out += "]},\"timeDeltas\":[";
    std::int64_t previous = first;
    for (std::size_t i = 0; i < list.size(); ++i) {
      auto t = ticks_1024(list[i]->t_ns - p.start_ns);
      if (i) out += ',';
      micros_exact(out, t - previous);
      previous = t;
    }
    out += "]}}}";
  }
  // Each sample's stack in its arguments, root first: its innermost kEventFrames frames at most,
  // each name at most kEventName bytes, so that a deep stack sampled often is not repeated whole
  // with each sample (the call tree above has it all, once).
  constexpr std::size_t kEventFrames = 64, kEventName = 256;
  std::vector<std::string> stack_text(whole.stacks.size());
  for (std::size_t i = 0; i < whole.stacks.size(); ++i) {
    const auto& stack = whole.stacks[i];
    std::string text;
    std::size_t shown = std::min(stack.size(), kEventFrames);
    if (shown < stack.size()) text = fmt::format("[{} frames not shown]", stack.size() - shown);
    for (std::size_t k = shown; k-- > 0;)
      if (stack[k] < whole.frames.size()) {
        if (!text.empty()) text += "\n";
        std::string buffer;
        text.append(capped(whole.frames[stack[k]].function, kEventName, buffer));
      }
    escape(stack_text[i], text);
  }
  std::vector<std::string> event_names(p.frames.size());
  for (std::size_t i = 0; i < p.frames.size(); ++i) {
    std::string buffer;
    escape(event_names[i], capped(trace_frame_name(p.frames[i]), kEventName, buffer));
  }
  for (const auto& x : p.samples) {
    if (x.stack >= p.stacks.size()) continue;
    const auto& stack = p.stacks[x.stack];
    fmt::format_to(
        std::back_inserter(out),
        ",\n{{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"sample\",\"pid\":{},\"tid\":{},"
        "\"name\":\"{}\",\"ts\":",
        trace_pid(p, x.thread), trace_tid(p.threads, x.thread),
        !stack.empty() && stack[0] < event_names.size() ? event_names[stack[0]] : "[unknown]");
    micros(out, x.t_ns - p.start_ns);
    fmt::format_to(std::back_inserter(out), ",\"args\":{{\"stack\":\"{}\"}}}}",
                   stack_text[x.stack]);
  }
}

/// The trace-event format's own sample records (its "stackFrames" and "samples" dictionaries,
/// read by chrome://tracing and speedscope): one stack frame per call-tree node, one sample per
/// stack sample pointing at its leaf.
void stack_frames_and_samples(std::string& out, const Profile& p, const CallTree& tree) {
  if (p.samples.empty()) return;
  out += ",\"stackFrames\":{";
  for (std::size_t n = 1; n < tree.nodes.size(); ++n) {
    const auto& f = p.frames[tree.nodes[n].frame];
    fmt::format_to(std::back_inserter(out), "{}\n\"{}\":{{\"name\":\"", n > 1 ? "," : "", n);
    escape(out, trace_frame_name(f));
    out += "\",\"category\":\"";
    escape(out, f.module);
    out += '"';
    if (tree.nodes[n].parent)
      fmt::format_to(std::back_inserter(out), ",\"parent\":\"{}\"", tree.nodes[n].parent);
    out += '}';
  }
  out += "},\"samples\":[";
  bool comma = false;
  for (const auto& x : p.samples) {
    if (x.stack >= p.stacks.size() || tree.leaf_of_stack[x.stack] == 0) continue;
    fmt::format_to(std::back_inserter(out),
                   "{}\n{{\"pid\":{},\"tid\":{},\"name\":\"sample\",\"weight\":1,\"sf\":\"{}\","
                   "\"ts\":",
                   comma ? "," : "", trace_pid(p, x.thread), trace_tid(p.threads, x.thread),
                   tree.leaf_of_stack[x.stack]);
    micros(out, x.t_ns - p.start_ns);
    out += '}';
    comma = true;
  }
  out += "]";
}

}  // namespace

std::string Profile::perfetto_json() const {
  std::string out;
  out.reserve(256 + spans.size() * 120 + device_samples.size() * 160 + activities.size() * 220);
  auto process = pid ? pid : 1;
  out += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  if (processes.empty()) {
    fmt::format_to(std::back_inserter(out),
                   "{{\"ph\":\"M\",\"pid\":{},\"tid\":0,\"name\":\"process_name\",\"args\":{{"
                   "\"name\":\"profiled process {}\"}}}}",
                   process, process);
  } else {
    // A merged job: a process per rank, named and sorted by its rank.
    for (const auto& pr : processes) {
      std::string name = pr.rank ? "rank " + std::to_string(pr.rank->rank) : "process";
      name += " (" + (pr.node.empty() ? std::string() : pr.node + ", ") + "pid " +
              std::to_string(pr.pid) + ")";
      fmt::format_to(std::back_inserter(out),
                     "{}{{\"ph\":\"M\",\"pid\":{},\"tid\":0,\"name\":\"process_name\","
                     "\"args\":{{\"name\":\"",
                     pr.index ? ",\n" : "", pr.index + 1);
      escape(out, name);
      fmt::format_to(std::back_inserter(out),
                     "\"}}}},\n{{\"ph\":\"M\",\"pid\":{},\"tid\":0,\"name\":\"process_sort_index\","
                     "\"args\":{{\"sort_index\":{}}}}}",
                     pr.index + 1, pr.index);
    }
  }
  for (const auto& t : threads) {
    fmt::format_to(
        std::back_inserter(out),
        ",\n{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":\"",
        trace_pid(*this, t.index), trace_tid(threads, t.index));
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
        ",\n{{\"ph\":\"X\",\"cat\":\"span\",\"pid\":{},\"tid\":{},\"name\":\"{}\",\"ts\":",
        trace_pid(*this, e.thread), tid, names[e.path]);
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
  // Stacks deeper than detail::kDeepStack frames are cut (the metadata says how many).
  std::optional<Profile> storage;
  detail::StacksCut cut;
  const Profile& sampled = detail::cut_deep_stacks(*this, storage, &cut);
  const auto tree = CallTree::of(sampled);
  stack_sample_events(out, sampled, tree, *this);
  out += "\n],\"metadata\":";
  nlohmann::json meta = {{"producer", "mainboard"},
                         {"dropped_spans", dropped_spans},
                         {"dropped_activities", dropped_activities},
                         {"sample_hz", sample_hz},
                         {"lost_samples", lost_samples},
                         {"start_ns", start_ns},
                         {"end_ns", end_ns}};
  meta["stacks_cut"] = {{"stacks", cut.stacks},
                        {"deepest", cut.deepest},
                        {"kept_outermost", detail::kKeptOuter},
                        {"kept_innermost", detail::kKeptInner}};
  if (machine) meta["machine"] = *machine;
  out += meta.dump();
  stack_frames_and_samples(out, sampled, tree);
  out += "}\n";
  return out;
}

void Profile::perfetto(const std::filesystem::path& path) const {
  core::write_file_atomic(path, perfetto_json());
}

}  // namespace mainboard
