// PyTorch profiler traces read as profiles.
//
// Two shapes, told apart by their content:
//   Kineto's object:  {"schemaVersion": 1, "deviceProperties": [...], "distributedInfo": {...},
//                      "traceEvents": [...], "baseTimeNanoseconds": ...}
//   without Kineto:   [{"name": ..., "ph": "X", "ts": ..., "dur": ..., "tid": 1,
//                       "pid": "CPU functions", "args": {}}, ...]
// Events are read one at a time as the parser finishes each (a trace of a gigabyte is never a
// document in memory): complete events ("ph": "X") of CPU operators, annotations, steps and CUDA
// runtime calls become spans, nested by time on their thread; kernels, copies and sets become
// GPU activity; metadata events name processes and threads. Times are microseconds (with three
// decimals in Kineto's) and kept in nanoseconds on the trace's own clock.

#include "traces/kineto.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <unordered_map>

#include "core/input_file.hpp"
#include "core/text.hpp"
#include "core/zlib.hpp"
#include "mainboard/error.hpp"
#include "profile/reader_hook.hpp"

namespace mainboard::traces {

namespace {

using nlohmann::json;

std::string truncate(const std::string& s, std::size_t n) {
  return s.size() <= n ? s : s.substr(0, n) + "…";
}

/// zlib's reader as a stream: gzip and plain files alike (gzread passes plain bytes through).
class GzStream : public std::streambuf {
 public:
  explicit GzStream(gzFile f) : f_(f) {}
  ~GzStream() override { core::zlib().gzclose(f_); }
  GzStream(const GzStream&) = delete;
  GzStream& operator=(const GzStream&) = delete;
  std::string error;  ///< zlib's, when the compressed data broke off or is corrupt
  std::uint64_t bytes = 0;

 protected:
  int_type underflow() override {
    const auto& z = core::zlib();
    int n = z.gzread(f_, buf_, sizeof buf_);
    if (n < 0) {
      int code = 0;
      error = z.gzerror(f_, &code);
      return traits_type::eof();
    }
    if (n == 0) return traits_type::eof();
    bytes += static_cast<std::uint64_t>(n);
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(buf_[0]);
  }

 private:
  gzFile f_;
  char buf_[1 << 16];
};

gzFile open_gz(const std::filesystem::path& path) {
  const auto& z = core::zlib();
  gzFile f = z.gzopen(path.c_str(), "rb");
  if (!f) throw Error(path.string() + ": cannot be read");
  z.gzbuffer(f, 1 << 17);
  return f;
}

/// A CPU event before it is nested.
struct RawSpan {
  std::uint32_t thread;
  std::uint32_t name;  ///< index into the names met
  std::int64_t start, end;
};

struct Reader {
  const std::string& origin;
  std::uint64_t index = 0;  ///< of the event being read, in traceEvents
  std::vector<std::string> names;
  std::unordered_map<std::string, std::uint32_t> name_ids;
  std::map<std::string, std::uint32_t> thread_ids;  // "pid\x1ftid" → thread
  struct Thread {
    json pid, tid;
  };
  std::vector<Thread> threads;
  std::map<std::string, std::string> process_names, thread_names;  // by pid, by "pid\x1ftid"
  std::vector<RawSpan> spans;
  Profile out;
  std::unordered_map<std::string, std::uint32_t> activity_ids;
  std::uint64_t python_events = 0, gpu_annotations = 0, unsupported = 0, kineto_only = 0;
  std::map<std::int64_t, std::uint64_t> pids;  // numeric pids of CPU events, counted

  [[noreturn]] void fail(const json& e, const std::string& what) const {
    std::string name;
    if (auto n = e.find("name"); n != e.end() && n->is_string())
      name = " (\"" + truncate(n->get<std::string>(), 60) + "\")";
    throw Error(origin + ": trace event " + std::to_string(index) + name + ": " + what);
  }
  const json& need(const json& e, const char* key) const {
    auto it = e.find(key);
    if (it == e.end()) fail(e, std::string("no \"") + key + "\" field");
    return *it;
  }
  double number(const json& e, const char* key) const {
    const json& v = need(e, key);
    if (!v.is_number()) fail(e, std::string("field \"") + key + "\" is not a number: " + v.dump());
    double d = v.get<double>();
    if (!std::isfinite(d) || std::fabs(d) > 9e12)  // 9e12 µs: a time of 285 years
      fail(e, std::string("field \"") + key + "\" is out of range: " + v.dump());
    return d;
  }
  static std::int64_t ns(double us) { return std::llround(us * 1000.0); }
  /// An optional whole number in `args`; a value of another type is garbage.
  std::optional<std::int64_t> arg_int(const json& e, const json* args, const char* key) const {
    if (!args) return std::nullopt;
    auto it = args->find(key);
    if (it == args->end() || it->is_null()) return std::nullopt;
    if (!it->is_number_integer())
      fail(e, std::string("field \"args.") + key + "\" is not a whole number: " + it->dump());
    return it->get<std::int64_t>();
  }
  std::uint32_t intern(const std::string& name) {
    auto [it, added] = name_ids.emplace(name, static_cast<std::uint32_t>(names.size()));
    if (added) names.push_back(name);
    return it->second;
  }
  std::uint32_t thread_of(const json& pid, const json& tid) {
    auto key = pid.dump() + '\x1f' + tid.dump();
    auto [it, added] = thread_ids.emplace(key, static_cast<std::uint32_t>(threads.size()));
    if (added) threads.push_back({pid, tid});
    return it->second;
  }

  void event(const json& e) {
    if (!e.is_object()) {
      std::string what = e.is_array() ? "an array" : e.is_string() ? "a string" : e.dump();
      throw Error(origin + ": trace event " + std::to_string(index) + " is not an object but " +
                  truncate(what, 60));
    }
    const json& ph = need(e, "ph");
    if (!ph.is_string()) fail(e, "field \"ph\" is not a string: " + ph.dump());
    auto phase = ph.get_ref<const std::string&>();
    const json* args = nullptr;
    if (auto a = e.find("args"); a != e.end()) {
      if (!a->is_object() && !a->is_null()) fail(e, "field \"args\" is not an object");
      if (a->is_object()) args = &*a;
    }
    if (phase == "M") {
      const json& name = need(e, "name");
      if (!name.is_string()) fail(e, "field \"name\" is not a string");
      if (!args) return;
      auto n = args->find("name");
      if (n == args->end() || !n->is_string()) return;
      if (name == "process_name") process_names[e.value("pid", json()).dump()] = *n;
      if (name == "thread_name")
        thread_names[e.value("pid", json()).dump() + '\x1f' + e.value("tid", json()).dump()] = *n;
      return;
    }
    if (phase != "X") {
      // Flows (s, f: a kernel tied to its launch), instants, counters: nothing to keep. Begin
      // and end pairs torch does not write.
      if (phase == "B" || phase == "E") ++unsupported;
      return;
    }
    const json& name = need(e, "name");
    if (!name.is_string()) fail(e, "field \"name\" is not a string: " + name.dump());
    double ts = number(e, "ts");
    double dur = number(e, "dur");
    if (dur < 0) fail(e, "field \"dur\" is negative: " + need(e, "dur").dump());
    const json& pid = need(e, "pid");
    const json& tid = need(e, "tid");
    if (!pid.is_number_integer() && !pid.is_string())
      fail(e, "field \"pid\" is neither a number nor a string: " + pid.dump());
    if (!tid.is_number_integer() && !tid.is_string())
      fail(e, "field \"tid\" is neither a number nor a string: " + tid.dump());
    std::string cat;
    if (auto c = e.find("cat"); c != e.end()) {
      if (!c->is_string()) fail(e, "field \"cat\" is not a string: " + c->dump());
      cat = core::to_lower(c->get_ref<const std::string&>());
    }
    auto start = ns(ts), end = ns(ts) + ns(dur);
    if (cat == "python_function") {
      ++python_events;
      return;
    }
    if (cat == "gpu_user_annotation") {
      ++gpu_annotations;
      return;
    }
    if (cat == "trace") return;  // Kineto's own spans of the profiling window ("pid": "Spans")
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      GpuActivity a;
      a.kind = cat == "kernel"       ? GpuActivity::Kind::kernel
               : cat == "gpu_memcpy" ? GpuActivity::Kind::memcpy
                                     : GpuActivity::Kind::memset;
      const auto& n = name.get_ref<const std::string&>();
      auto [it, added] =
          activity_ids.emplace(n, static_cast<std::uint32_t>(out.activity_names.size()));
      if (added) out.activity_names.push_back(n);
      a.name = it->second;
      a.start_ns = start;
      a.end_ns = end;
      auto small = [&](std::optional<std::int64_t> v, std::int64_t fallback) {
        auto x = v.value_or(fallback);
        return static_cast<std::uint32_t>(std::clamp<std::int64_t>(x, 0, 0xffffffff));
      };
      a.device =
          small(arg_int(e, args, "device"), pid.is_number_integer() ? pid.get<std::int64_t>() : 0);
      a.stream =
          small(arg_int(e, args, "stream"), tid.is_number_integer() ? tid.get<std::int64_t>() : 0);
      a.correlation = small(arg_int(e, args, "correlation"), 0);
      a.registers_per_thread = small(arg_int(e, args, "registers per thread"), 0);
      a.static_shared_bytes = small(arg_int(e, args, "shared memory"), 0);
      a.bytes = static_cast<std::uint64_t>(
          std::max<std::int64_t>(arg_int(e, args, "bytes").value_or(0), 0));
      for (auto [key, dims] : {std::pair{"grid", &a.grid}, std::pair{"block", &a.block}}) {
        if (!args) break;
        auto g = args->find(key);
        if (g == args->end()) continue;
        if (!g->is_array() || g->size() != 3 ||
            !std::all_of(g->begin(), g->end(), [](const json& x) { return x.is_number_integer(); }))
          fail(e, std::string("field \"args.") + key +
                      "\" is not three whole numbers: " + truncate(g->dump(), 60));
        for (std::size_t k = 0; k < 3; ++k)
          (*dims)[k] = small((*g)[k].get<std::int64_t>(), 0);
      }
      out.activities.push_back(a);
      return;
    }
    if (pid.is_number_integer()) ++pids[pid.get<std::int64_t>()];
    spans.push_back({thread_of(pid, tid), intern(name.get_ref<const std::string&>()), start, end});
  }
};

/// "ProfilerStep#12" is every step's span: one path, "ProfilerStep". A '/' would split a path:
/// it is written as the division slash.
std::string span_name(const std::string& raw) {
  static constexpr std::string_view kStep = "ProfilerStep#";
  if (core::starts_with(raw, kStep) && raw.size() > kStep.size() &&
      std::all_of(raw.begin() + static_cast<std::ptrdiff_t>(kStep.size()), raw.end(),
                  [](char c) { return c >= '0' && c <= '9'; }))
    return "ProfilerStep";
  std::string out;
  out.reserve(raw.size());
  for (char c : raw) {
    if (c == '/')
      out += "\u2215";
    else
      out += c;
  }
  return out;
}

/// The spans nested by time on each thread, their paths interned and their statistics counted.
/// A thread without steps of its own (gloo's and NCCL's workers, the autograd engine's) has its
/// outermost spans that start inside a step of the process put under that step: the step's
/// collectives and backward pass are in it, as Holistic Trace Analysis counts them.
void nest(Reader& r) {
  Profile& p = r.out;
  // Each name met, as a span is named (every step's "ProfilerStep#N" is one name).
  std::vector<std::string> display;
  std::vector<std::uint32_t> shown(r.names.size());
  std::vector<bool> is_step(r.names.size());
  {
    std::unordered_map<std::string, std::uint32_t> ids;
    for (std::size_t i = 0; i < r.names.size(); ++i) {
      auto d = span_name(r.names[i]);
      is_step[i] = d == "ProfilerStep";
      auto [it, added] = ids.emplace(d, static_cast<std::uint32_t>(display.size()));
      if (added) display.push_back(std::move(d));
      shown[i] = it->second;
    }
  }
  std::sort(r.spans.begin(), r.spans.end(), [](const RawSpan& a, const RawSpan& b) {
    if (a.thread != b.thread) return a.thread < b.thread;
    if (a.start != b.start) return a.start < b.start;
    return a.end > b.end;  // the enclosing one first
  });
  std::vector<bool> has_steps(r.threads.size());
  std::vector<std::pair<std::int64_t, std::int64_t>> steps;
  for (const auto& s : r.spans)
    if (is_step[s.name]) {
      has_steps[s.thread] = true;
      steps.emplace_back(s.start, s.end);
    }
  std::sort(steps.begin(), steps.end());
  auto in_step = [&](std::int64_t t) {
    auto it = std::upper_bound(steps.begin(), steps.end(),
                               std::pair{t, std::numeric_limits<std::int64_t>::max()});
    return it != steps.begin() && t < std::prev(it)->second;
  };

  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> path_ids;  // (parent+1, name)
  auto path_of = [&](std::uint32_t parent, std::uint32_t name) {  // parent: UINT32_MAX for none
    auto [it, added] =
        path_ids.emplace(std::pair{parent + 1, name}, static_cast<std::uint32_t>(p.paths.size()));
    if (added) {
      p.paths.push_back(parent == UINT32_MAX ? display[name]
                                             : p.paths[parent] + "/" + display[name]);
      SpanStat s;
      s.path = p.paths.back();
      s.name = display[name];
      p.span_stats.push_back(s);
    }
    return it->second;
  };
  std::uint32_t step_path = UINT32_MAX;
  for (std::size_t i = 0; i < r.names.size(); ++i)
    if (is_step[i]) {
      step_path = path_of(UINT32_MAX, shown[i]);
      break;
    }
  p.spans.reserve(r.spans.size());
  struct Open {
    std::int64_t end;
    std::uint32_t path;
    std::size_t stat;
  };
  std::vector<Open> open;
  std::vector<std::int64_t> child_ns;  // per open span: its children's time
  std::uint32_t thread = UINT32_MAX;
  for (const auto& s : r.spans) {
    if (s.thread != thread) {
      open.clear();
      child_ns.clear();
      thread = s.thread;
    }
    // Close what ended before this one starts; one that started inside but ends after its
    // enclosing span (torch nests them, but a hand-made trace may not) closes that one.
    while (!open.empty() && (open.back().end <= s.start || s.end > open.back().end)) {
      auto& st = p.span_stats[open.back().stat];
      st.self_ns -= child_ns.back();
      open.pop_back();
      child_ns.pop_back();
    }
    std::uint32_t parent = UINT32_MAX;
    if (!open.empty())
      parent = open.back().path;
    else if (!has_steps[s.thread] && step_path != UINT32_MAX && !is_step[s.name] &&
             in_step(s.start))
      parent = step_path;
    auto path = path_of(parent, shown[s.name]);
    auto dur = s.end - s.start;
    auto& st = p.span_stats[path];
    st.min_ns = st.calls ? std::min(st.min_ns, dur) : dur;
    st.max_ns = st.calls ? std::max(st.max_ns, dur) : dur;
    ++st.calls;
    st.total_ns += dur;
    st.self_ns += dur;
    if (!open.empty()) child_ns.back() += dur;
    open.push_back({s.end, path, path});
    child_ns.push_back(0);
    p.spans.push_back({path, s.thread, s.start, s.end});
  }
  while (!open.empty()) {
    p.span_stats[open.back().stat].self_ns -= child_ns.back();
    open.pop_back();
    child_ns.pop_back();
  }
  std::stable_sort(p.spans.begin(), p.spans.end(),
                   [](const SpanEvent& a, const SpanEvent& b) { return a.start_ns < b.start_ns; });
  r.spans.clear();
  r.spans.shrink_to_fit();
}

std::optional<RankInfo> distributed_info(const json& d, const std::string& origin) {
  if (!d.is_object())
    throw Error(origin + ": field \"distributedInfo\" is not an object: " + truncate(d.dump(), 60));
  auto whole = [&](const char* key) -> std::optional<std::int64_t> {
    auto it = d.find(key);
    if (it == d.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0)
      throw Error(origin + ": field \"distributedInfo." + key +
                  "\" is not a whole number: " + truncate(it->dump(), 60));
    return it->get<std::int64_t>();
  };
  auto rank = whole("rank");
  if (!rank) return std::nullopt;
  RankInfo info;
  info.rank = *rank;
  info.world_size = whole("world_size");
  info.source = "distributedInfo";
  if (auto b = d.find("backend"); b != d.end() && b->is_string())
    info.source += " (" + b->get<std::string>() + ")";
  return info;
}

}  // namespace

Profile parse_trace(std::streambuf& bytes, const std::string& origin) {
  Reader r{origin};
  auto* stream = dynamic_cast<GzStream*>(&bytes);  // a file's: what zlib said, how far it read
  std::istream in(&bytes);

  bool root_array = false, in_events = false, kineto = false;
  std::string key;                  // the root object's key being read
  std::optional<json> distributed;  // what the root object holds besides its events
  bool events_seen = false;
  auto callback = [&](int depth, json::parse_event_t ev, json& parsed) -> bool {
    using E = json::parse_event_t;
    if (depth == 0) {
      if (ev == E::array_start) root_array = in_events = events_seen = true;
      return true;
    }
    if (!root_array && depth == 1) {
      if (ev == E::key) {
        key = parsed.get<std::string>();
        if (key == "schemaVersion" || key == "deviceProperties" || key == "distributedInfo" ||
            key == "baseTimeNanoseconds")
          kineto = true;
        // Only the events and the rank are kept; the rest (device properties, Kineto's own
        // fields) is read past.
        return key == "traceEvents" || key == "distributedInfo";
      }
      if (ev == E::array_start && key == "traceEvents") in_events = events_seen = true;
      if (ev == E::array_end && key == "traceEvents") {
        in_events = false;
        parsed = json::array();  // nothing was kept in it
      }
      if (key == "distributedInfo" && (ev == E::object_end || ev == E::array_end || ev == E::value))
        distributed = parsed;
      return true;
    }
    const int event_depth = root_array ? 1 : 2;
    if (!in_events || depth != event_depth) return true;
    if (ev == E::object_start) return true;
    if (ev == E::array_start)  // not an event: said before what it holds is read
      throw Error(origin + ": trace event " + std::to_string(r.index) +
                  " is not an object but an array");
    if (ev == E::object_end || ev == E::array_end || ev == E::value) {
      r.event(parsed);
      ++r.index;
      return false;  // handled: not kept
    }
    return true;
  };
  try {
    json doc = json::parse(in, callback, true, false);
    if (!doc.is_array() && !doc.is_object())
      throw Error(origin + ": not a trace (neither an array nor an object of events)");
  } catch (const json::parse_error& e) {
    if (stream && !stream->error.empty())
      throw Error(origin + ": the gzip data is damaged or cut short (" + stream->error +
                  ") after " + std::to_string(stream->bytes) + " bytes");
    if (std::string(e.what()).find("end of input") != std::string::npos)
      throw Error(origin + ": the trace is cut short after " + std::to_string(e.byte - 1) +
                  " bytes (event " + std::to_string(r.index) + " is incomplete)");
    throw Error(origin + ": not valid JSON at byte " + std::to_string(e.byte) +
                " (in trace event " + std::to_string(r.index) + ")");
  } catch (const json::exception& e) {
    // A number past what a double holds (406), a key or value nlohmann refuses: not a trace.
    throw Error(origin + ": not a readable trace (in trace event " + std::to_string(r.index) +
                "): " + e.what());
  }
  if (!events_seen) throw Error(origin + ": a trace without a \"traceEvents\" field");

  Profile& p = r.out;
  p.source =
      kineto ? "torch.profiler (Kineto)"
      : root_array && std::any_of(r.threads.begin(), r.threads.end(),
                                  [](const Reader::Thread& t) { return t.pid == "CPU functions"; })
          ? "torch.profiler (without Kineto)"
          : "Chrome trace events";
  if (distributed) p.rank = distributed_info(*distributed, origin);
  if (!r.pids.empty())
    p.pid = std::max_element(r.pids.begin(), r.pids.end(), [](const auto& a, const auto& b) {
              return a.second < b.second;
            })->first;
  if (auto it = r.process_names.find(json(p.pid).dump()); p.pid && it != r.process_names.end())
    p.command = it->second;
  for (std::size_t i = 0; i < r.threads.size(); ++i) {
    ThreadInfo t;
    t.index = static_cast<std::uint32_t>(i);
    const auto& tid = r.threads[i].tid;
    t.tid = tid.is_number_integer() ? tid.get<std::int64_t>() : static_cast<std::int64_t>(i);
    auto thread_key = r.threads[i].pid.dump() + '\x1f' + tid.dump();
    if (auto n = r.thread_names.find(thread_key); n != r.thread_names.end())
      t.name = n->second;
    else
      t.name = tid.is_string() ? tid.get<std::string>() : "thread " + tid.dump();
    p.threads.push_back(t);
  }
  nest(r);
  std::sort(p.activities.begin(), p.activities.end(),
            [](const GpuActivity& a, const GpuActivity& b) { return a.start_ns < b.start_ns; });
  bool any = false;
  auto cover = [&](std::int64_t s, std::int64_t e) {
    p.start_ns = any ? std::min(p.start_ns, s) : s;
    p.end_ns = any ? std::max(p.end_ns, e) : e;
    any = true;
  };
  for (const auto& s : p.spans)
    cover(s.start_ns, s.end_ns);
  for (const auto& a : p.activities)
    cover(a.start_ns, a.end_ns);

  p.unavailable.push_back(
      "samples: a PyTorch profiler trace records operators, not stack samples (profile the run "
      "with `mainboard profile run` for those)");
  p.unavailable.push_back(
      "device: a PyTorch profiler trace carries no GPU telemetry (utilization, memory, power)");
  if (r.python_events)
    p.unavailable.push_back("stacks: the trace's " + std::to_string(r.python_events) +
                            " Python function events (with_stack) are not read as stacks");
  if (r.gpu_annotations)
    p.unavailable.push_back("trace: " + std::to_string(r.gpu_annotations) +
                            " GPU annotations (gpu_user_annotation) are left out: their "
                            "kernels are read");
  if (r.unsupported)
    p.unavailable.push_back("trace: " + std::to_string(r.unsupported) +
                            " begin/end events (\"ph\": \"B\"/\"E\") are not read; only complete "
                            "events (\"X\")");
  if (!p.rank)
    p.unavailable.push_back(
        std::string("rank: the trace names none (") +
        (kineto ? "no distributedInfo" : "torch without Kineto writes no distributedInfo") + ")");
  return std::move(r.out);
}

std::optional<std::int64_t> rank_from_name(const std::string& file_name,
                                           const std::string& pattern) {
  std::regex re;
  try {
    re = std::regex(pattern, std::regex::ECMAScript | std::regex::icase);
  } catch (const std::regex_error& e) {
    throw Error("--rank-from " + pattern + ": not a regular expression (" + e.what() + ")");
  }
  std::smatch m;
  if (!std::regex_search(file_name, m, re)) return std::nullopt;
  std::string digits = m.size() > 1 && m[1].matched ? m[1].str() : m[0].str();
  std::int64_t v = 0;
  if (digits.empty() || digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  for (char c : digits)
    v = v * 10 + (c - '0');
  return v;
}

bool name_rank_from_file(Profile& profile, const std::filesystem::path& file,
                         const std::string& pattern) {
  if (!profile.source) return false;
  if (profile.rank && profile.rank->source != "file name") return false;
  auto name = file.filename().string();
  auto rank = rank_from_name(name, pattern);
  auto& u = profile.unavailable;
  u.erase(std::remove_if(u.begin(), u.end(),
                         [](const std::string& s) { return core::starts_with(s, "rank: "); }),
          u.end());
  if (!rank) {
    profile.rank.reset();
    u.push_back("rank: the trace names none, nor does its file name " + name + " (by " + pattern +
                ")");
    return false;
  }
  RankInfo info;
  info.rank = *rank;
  info.source = "file name";
  profile.rank = info;
  u.push_back("rank: " + std::to_string(*rank) + ", from the file name " + name + " (by " +
              pattern + "): the trace names none");
  return true;
}

std::optional<Profile> load_trace(const std::filesystem::path& path, std::string_view head) {
  bool gzip = head.size() >= 2 && head[0] == '\x1f' && head[1] == '\x8b';
  std::string inner(head);
  if (gzip) {
    auto s = std::make_unique<GzStream>(open_gz(path));
    inner.assign(4096, '\0');
    std::istream in(s.get());
    in.read(inner.data(), static_cast<std::streamsize>(inner.size()));
    inner.resize(static_cast<std::size_t>(in.gcount()));
    if (inner.empty())
      throw Error(path.string() + ": the gzip data is empty or damaged" +
                  (s->error.empty() ? "" : " (" + s->error + ")"));
  }
  if (detail::looks_like_trace(inner)) {
    auto file = std::make_unique<GzStream>(open_gz(path));
    auto p = parse_trace(*file, path.string());
    name_rank_from_file(p, path, kRankFromName);
    return p;
  }
  if (!gzip) return std::nullopt;
  // A gzipped profile: decompressed whole, within the bound a plain one is read by.
  constexpr std::uint64_t kMax = 1ull << 30;
  auto s = std::make_unique<GzStream>(open_gz(path));
  std::string text;
  std::vector<char> buf(1 << 16);
  for (;;) {
    auto n = s->sgetn(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (n <= 0) break;
    text.append(buf.data(), static_cast<std::size_t>(n));
    if (text.size() > kMax)
      throw Error(path.string() + ": decompressed, it is past the 1 GiB a profile may be");
  }
  if (!s->error.empty())
    throw Error(path.string() + ": the gzip data is damaged or cut short (" + s->error + ")");
  return Profile::parse(text, path.string());
}

}  // namespace mainboard::traces
