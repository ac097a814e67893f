// Profiles joined: the pieces of one run (Profile::merge) and the ranks of a distributed job
// (Profile::merge_ranks, with each rank's times moved onto one axis). One merger serves both:
// it appends every piece, re-indexed, and sorts once at the end.
#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

#include "core/text.hpp"
#include "mainboard/error.hpp"
#include "mainboard/profile.hpp"
#include "mainboard/version.hpp"
#include "profile/text_util.hpp"

namespace mainboard {

namespace {

struct FrameKey {
  const StackFrame* f;
  bool operator==(const FrameKey& o) const { return *f == *o.f; }
};
struct FrameHash {
  std::size_t operator()(const FrameKey& k) const {
    auto h = std::hash<std::string>{}(k.f->function);
    h = h * 31 + std::hash<std::string>{}(k.f->module);
    h = h * 31 + std::hash<std::string>{}(k.f->file);
    return h * 31 + k.f->line * 2 + (k.f->inlined ? 1 : 0);
  }
};
struct StackHash {
  std::size_t operator()(const std::vector<std::uint32_t>& s) const {
    std::size_t h = s.size();
    for (auto f : s)
      h = h * 1000003 + f;
    return h;
  }
};

/// Appends profiles into one, re-indexing their threads, paths, names, frames and stacks
/// (frames and stacks are shared: the ranks of one job run the same code); sorts the
/// time-ordered lists once, in finish().
class Merger {
 public:
  explicit Merger(Profile& into) : into_(into) {
    empty_ = into.paths.empty() && into.threads.empty() && into.activities.empty() &&
             into.samples.empty();
    for (const auto& t : into.threads)
      if (t.tid != 0) threads_.emplace(std::pair{t.process, t.tid}, t.index);
    for (std::size_t i = 0; i < into.paths.size(); ++i)
      paths_.emplace(into.paths[i], static_cast<std::uint32_t>(i));
    for (std::size_t i = 0; i < into.activity_names.size(); ++i)
      names_.emplace(into.activity_names[i], static_cast<std::uint32_t>(i));
    into.frames.reserve(into.frames.size() + 1024);  // the keys point into it: intern_frame()
    for (std::size_t i = 0; i < into.frames.size(); ++i)
      frames_.emplace(FrameKey{&into.frames[i]}, static_cast<std::uint32_t>(i));
    for (std::size_t i = 0; i < into.stacks.size(); ++i)
      stacks_.emplace(into.stacks[i], static_cast<std::uint32_t>(i));
  }

  void add(const Profile& from) {
    if (empty_ || from.start_ns < into_.start_ns) into_.start_ns = from.start_ns;
    into_.end_ns = std::max(empty_ ? from.end_ns : into_.end_ns, from.end_ns);
    empty_ = false;
    if (!into_.pid) into_.pid = from.pid;
    if (into_.command.empty()) into_.command = from.command;

    // Threads, joined by process and tid.
    std::vector<std::uint32_t> thread(from.threads.size());
    for (std::size_t i = 0; i < from.threads.size(); ++i) {
      const auto& t = from.threads[i];
      auto found = t.tid != 0 ? threads_.find({t.process, t.tid}) : threads_.end();
      if (found == threads_.end()) {
        ThreadInfo copy = t;
        copy.index = static_cast<std::uint32_t>(into_.threads.size());
        into_.threads.push_back(copy);
        if (t.tid != 0) threads_.emplace(std::pair{t.process, t.tid}, copy.index);
        thread[i] = copy.index;
      } else {
        auto& known = into_.threads[found->second];
        if (known.name.empty()) known.name = t.name;
        thread[i] = known.index;
      }
    }

    // Regions, joined by path.
    std::vector<std::uint32_t> path(from.paths.size());
    for (std::size_t i = 0; i < from.paths.size(); ++i) {
      auto [it, fresh] =
          paths_.emplace(from.paths[i], static_cast<std::uint32_t>(into_.paths.size()));
      path[i] = it->second;
      const auto& src = from.span_stats[i];
      if (fresh) {
        into_.paths.push_back(from.paths[i]);
        into_.span_stats.push_back(src);
        continue;
      }
      auto& dst = into_.span_stats[it->second];
      dst.min_ns = dst.calls ? std::min(dst.min_ns, src.min_ns) : src.min_ns;
      dst.max_ns = std::max(dst.max_ns, src.max_ns);
      dst.calls += src.calls;
      dst.total_ns += src.total_ns;
      dst.self_ns += src.self_ns;
    }
    for (auto e : from.spans) {
      e.path = path[e.path];
      e.thread = thread[e.thread];
      into_.spans.push_back(e);
    }
    into_.dropped_spans += from.dropped_spans;
    into_.device_samples.insert(into_.device_samples.end(), from.device_samples.begin(),
                                from.device_samples.end());

    // GPU activity.
    std::vector<std::uint32_t> name(from.activity_names.size());
    for (std::size_t i = 0; i < from.activity_names.size(); ++i) {
      auto [it, fresh] = names_.emplace(from.activity_names[i],
                                        static_cast<std::uint32_t>(into_.activity_names.size()));
      if (fresh) into_.activity_names.push_back(from.activity_names[i]);
      name[i] = it->second;
    }
    for (auto a : from.activities) {
      a.name = name[a.name];
      into_.activities.push_back(a);
    }
    into_.dropped_activities += from.dropped_activities;
    into_.counters.insert(into_.counters.end(), from.counters.begin(), from.counters.end());

    // Stack samples: frames and stacks interned.
    std::vector<std::uint32_t> frame(from.frames.size());
    for (std::size_t i = 0; i < from.frames.size(); ++i)
      frame[i] = intern_frame(from.frames[i]);
    std::vector<std::uint32_t> stack(from.stacks.size());
    for (std::size_t i = 0; i < from.stacks.size(); ++i) {
      auto s = from.stacks[i];
      for (auto& f : s)
        f = frame[f];
      auto [it, fresh] = stacks_.emplace(s, static_cast<std::uint32_t>(into_.stacks.size()));
      if (fresh) into_.stacks.push_back(std::move(s));
      stack[i] = it->second;
    }
    for (auto x : from.samples) {
      x.stack = stack[x.stack];
      x.thread = thread[x.thread];
      into_.samples.push_back(x);
    }
    if (!into_.sample_hz) into_.sample_hz = from.sample_hz;
    into_.lost_samples += from.lost_samples;

    for (const auto& u : from.unavailable)
      if (std::find(into_.unavailable.begin(), into_.unavailable.end(), u) ==
          into_.unavailable.end())
        into_.unavailable.push_back(u);
    // Unnamed auto-instrumented functions keep the maps that name them (profiles read through
    // mainboard::mainboard arrive named, with none).
    for (const auto& line : from.function_maps)
      if (std::find(into_.function_maps.begin(), into_.function_maps.end(), line) ==
          into_.function_maps.end())
        into_.function_maps.push_back(line);
    if (into_.span_clock.empty()) {
      into_.span_clock = from.span_clock;
      into_.span_clock_hz = from.span_clock_hz;
    }
    if (!into_.machine) into_.machine = from.machine;
    if (!into_.energy) into_.energy = from.energy;
    if (into_.node.empty()) into_.node = from.node;
    if (!into_.rank) into_.rank = from.rank;
    if (!into_.clock) into_.clock = from.clock;
    if (into_.written_by.empty()) into_.written_by = from.written_by;
  }

  void finish() {
    std::stable_sort(
        into_.spans.begin(), into_.spans.end(),
        [](const SpanEvent& a, const SpanEvent& b) { return a.start_ns < b.start_ns; });
    std::stable_sort(into_.device_samples.begin(), into_.device_samples.end(),
                     [](const DeviceSample& a, const DeviceSample& b) { return a.t_ns < b.t_ns; });
    std::stable_sort(
        into_.activities.begin(), into_.activities.end(),
        [](const GpuActivity& a, const GpuActivity& b) { return a.start_ns < b.start_ns; });
    std::stable_sort(into_.samples.begin(), into_.samples.end(),
                     [](const StackSample& a, const StackSample& b) { return a.t_ns < b.t_ns; });
  }

 private:
  std::uint32_t intern_frame(const StackFrame& f) {
    if (auto it = frames_.find(FrameKey{&f}); it != frames_.end()) return it->second;
    // The keys point into into_.frames: when it must grow, they are rebuilt over the new one.
    if (into_.frames.size() == into_.frames.capacity()) {
      into_.frames.reserve(into_.frames.size() * 2 + 1024);
      frames_.clear();
      for (std::size_t i = 0; i < into_.frames.size(); ++i)
        frames_.emplace(FrameKey{&into_.frames[i]}, static_cast<std::uint32_t>(i));
    }
    auto index = static_cast<std::uint32_t>(into_.frames.size());
    into_.frames.push_back(f);
    frames_.emplace(FrameKey{&into_.frames.back()}, index);
    return index;
  }

  Profile& into_;
  bool empty_ = true;
  std::map<std::pair<std::uint32_t, std::int64_t>, std::uint32_t> threads_;
  std::unordered_map<std::string, std::uint32_t> paths_, names_;
  std::unordered_map<FrameKey, std::uint32_t, FrameHash> frames_;
  std::unordered_map<std::vector<std::uint32_t>, std::uint32_t, StackHash> stacks_;
};

/// `t + offset`, held at the ends of the range (a hostile file's times must not overflow).
void move(std::int64_t& t, std::int64_t offset) {
  if (__builtin_add_overflow(t, offset, &t)) t = offset > 0 ? INT64_MAX : INT64_MIN;
}

/// Every time of `p` moved by `offset`.
void shift(Profile& p, std::int64_t offset) {
  if (offset == 0) return;
  move(p.start_ns, offset);
  move(p.end_ns, offset);
  for (auto& e : p.spans) {
    move(e.start_ns, offset);
    move(e.end_ns, offset);
  }
  for (auto& d : p.device_samples)
    move(d.t_ns, offset);
  for (auto& a : p.activities) {
    move(a.start_ns, offset);
    move(a.end_ns, offset);
  }
  for (auto& s : p.samples)
    move(s.t_ns, offset);
}

/// What to add to a time of `r`'s clock to put it on `axis`'s, through the wall clock; empty
/// when the references are too far apart to be true (about 30 years).
std::optional<std::int64_t> wall_offset(const ClockReference& r, const ClockReference& axis) {
  __int128 d = (static_cast<__int128>(r.realtime_ns) - r.monotonic_ns) -
               (static_cast<__int128>(axis.realtime_ns) - axis.monotonic_ns);
  constexpr __int128 kLimit = static_cast<__int128>(1'000'000'000) * 1'000'000'000;
  if (d > kLimit || d < -kLimit) return std::nullopt;
  return static_cast<std::int64_t>(d);
}

std::string version_of(const Profile& p) {
  return p.written_by.empty() ? "a version before 0.1 (no version recorded)"
                              : "mainboard " + p.written_by;
}

/// "2, 5, 7", or the first eight and how many more of `total`.
std::string rank_list(const std::vector<std::int64_t>& ranks, std::int64_t total = -1) {
  if (total < 0) total = static_cast<std::int64_t>(ranks.size());
  std::string out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i == 8 && total > 9) return out + " and " + std::to_string(total - 8) + " more";
    out += (i ? ", " : "") + std::to_string(ranks[i]);
  }
  return out;
}

/// What a trace's ranks share, to put their clocks (each process's own) on one axis: the ends of
/// its collectives (NCCL's kernels, else gloo's and NCCL's operators: every rank leaves a
/// collective at the same moment), and the start of its first step.
struct Anchors {
  std::string kind;  ///< which collectives: "NCCL kernels", "gloo/NCCL operators", "c10d calls"
  std::vector<std::int64_t> ends;
  std::optional<std::int64_t> first_step;
};

Anchors anchors_of(const Profile& p) {
  Anchors a;
  auto lower_starts = [](const std::string& s, std::string_view prefix) {
    return core::starts_with(core::to_lower(s.substr(0, prefix.size())), prefix);
  };
  for (const auto& x : p.activities)
    if (x.kind == GpuActivity::Kind::kernel && x.name < p.activity_names.size() &&
        lower_starts(p.activity_names[x.name], "nccl"))
      a.ends.push_back(x.end_ns);
  if (!a.ends.empty()) a.kind = "NCCL kernels";
  for (const char* kind : {"gloo/NCCL operators", "c10d calls"}) {
    if (!a.ends.empty()) break;
    std::vector<bool> chosen(p.paths.size());
    for (std::size_t i = 0; i < p.paths.size(); ++i) {
      auto slash = p.paths[i].rfind('/');
      auto name = slash == std::string::npos ? p.paths[i] : p.paths[i].substr(slash + 1);
      chosen[i] = kind[0] == 'g' ? lower_starts(name, "gloo:") || lower_starts(name, "nccl:")
                                 : lower_starts(name, "c10d::");
    }
    for (const auto& e : p.spans)
      if (e.path < chosen.size() && chosen[e.path]) a.ends.push_back(e.end_ns);
    if (!a.ends.empty()) a.kind = kind;
  }
  std::sort(a.ends.begin(), a.ends.end());
  for (const auto& e : p.spans)
    if (e.path < p.paths.size() && p.paths[e.path] == "ProfilerStep") {
      a.first_step = e.start_ns;
      break;  // spans are by start
    }
  return a;
}

using Intervals = std::vector<std::pair<std::int64_t, std::int64_t>>;

/// `v` as disjoint intervals, by start.
Intervals union_of(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& [s, e] : v) {
    if (e <= s) continue;
    if (!out.empty() && s <= out.back().second)
      out.back().second = std::max(out.back().second, e);
    else
      out.emplace_back(s, e);
  }
  return out;
}
std::int64_t length(const Intervals& v) {
  std::int64_t n = 0;
  for (const auto& [s, e] : v)
    n += e - s;
  return n;
}
/// The time two disjoint lists share.
std::int64_t shared(const Intervals& a, const Intervals& b) {
  std::int64_t n = 0;
  for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    auto lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (hi > lo) n += hi - lo;
    (a[i].second < b[j].second ? i : j)++;
  }
  return n;
}
Intervals joined(const Intervals& a, const Intervals& b) {
  Intervals v = a;
  v.insert(v.end(), b.begin(), b.end());
  return union_of(std::move(v));
}

/// Holistic Trace Analysis's temporal breakdown of one rank: over its GPU kernels, copies and
/// sets (communication: NCCL's kernels), else, for a trace, over its outermost CPU operators
/// within its steps (communication: gloo's and NCCL's operators).
std::optional<TimeBreakdown> breakdown_of(const Profile& p) {
  Intervals compute, comm, memory;
  TimeBreakdown b;
  std::int64_t lo = 0, hi = 0;
  bool any = false;
  auto cover = [&](std::int64_t s, std::int64_t e) {
    lo = any ? std::min(lo, s) : s;
    hi = any ? std::max(hi, e) : e;
    any = true;
  };
  for (const auto& a : p.activities) {
    if (!a.occupies_device()) continue;
    cover(a.start_ns, a.end_ns);
    if (a.kind != GpuActivity::Kind::kernel)
      memory.emplace_back(a.start_ns, a.end_ns);
    else if (a.name < p.activity_names.size() &&
             core::to_lower(p.activity_names[a.name]).find("nccl") != std::string::npos)
      comm.emplace_back(a.start_ns, a.end_ns);
    else
      compute.emplace_back(a.start_ns, a.end_ns);
  }
  if (any) {
    b.source = "gpu kernels";
  } else if (p.source) {
    // The outermost operators: a step's children (another thread's within it included), or the
    // roots where the trace has no steps; the window, the steps' (or the operators').
    bool steps = std::find(p.paths.begin(), p.paths.end(), "ProfilerStep") != p.paths.end();
    std::vector<signed char> kind(p.paths.size(), -1);  // -1: not outermost, 0 compute, 1 comm
    for (std::size_t i = 0; i < p.paths.size(); ++i) {
      const auto& path = p.paths[i];
      auto depth = detail::path_depth(path);
      if (steps ? !(depth == 1 && core::starts_with(path, "ProfilerStep/")) : depth != 0) continue;
      auto name = core::to_lower(path.substr(path.rfind('/') + 1));
      kind[i] = name.rfind("gloo:", 0) == 0 || name.rfind("nccl:", 0) == 0 ? 1 : 0;
    }
    for (const auto& e : p.spans) {
      if (e.path >= p.paths.size()) continue;
      if (steps && p.paths[e.path] == "ProfilerStep") cover(e.start_ns, e.end_ns);
      if (kind[e.path] < 0) continue;
      if (!steps) cover(e.start_ns, e.end_ns);
      (kind[e.path] ? comm : compute).emplace_back(e.start_ns, e.end_ns);
    }
    if (!any) return std::nullopt;
    b.source = "cpu operators";
  } else {
    return std::nullopt;
  }
  auto C = union_of(std::move(compute)), M = union_of(std::move(comm)),
       Mem = union_of(std::move(memory));
  auto CM = joined(C, M);
  auto all = joined(CM, Mem);
  b.window_ns = hi - lo;
  b.compute_ns = length(C);
  b.communication_ns = length(M) - shared(M, C);
  b.memory_ns = length(Mem) - shared(Mem, CM);
  b.idle_ns = std::max<std::int64_t>(b.window_ns - length(all), 0);
  auto pct = [&](std::int64_t v) {
    return b.window_ns > 0 ? 100.0 * static_cast<double>(v) / static_cast<double>(b.window_ns)
                           : 0.0;
  };
  b.compute_pct = pct(b.compute_ns);
  b.non_compute_pct = pct(b.communication_ns + b.memory_ns);
  b.idle_pct = pct(b.idle_ns);
  if (auto m = length(M); m > 0)
    b.overlap_pct = 100.0 * static_cast<double>(shared(M, C)) / static_cast<double>(m);
  return b;
}

/// What to add to `r`'s times to put them on `ref`'s axis, and how it was found; empty when the
/// two share nothing. `spread` is how far apart the anchors still are after it (collectives).
struct ContentOffset {
  std::int64_t offset = 0;
  std::string how;
  std::int64_t spread = 0;
  std::size_t matched = 0;
};
std::optional<ContentOffset> content_offset(const Anchors& r, const Anchors& ref) {
  ContentOffset c;
  if (!r.ends.empty() && r.kind == ref.kind) {
    // Each collective end of `r` against the nearest of `ref`'s once both are moved by a first
    // guess: the first steps' difference where both have steps (the ranks' profilers start
    // together, within a step), else the first ends'. Matched by nearness, not by order, a
    // collective one trace lacks (one ended as the profiler stopped) shifts nothing.
    std::int64_t guess = r.first_step && ref.first_step ? *ref.first_step - *r.first_step
                                                        : ref.ends.front() - r.ends.front();
    std::vector<std::int64_t> d;
    d.reserve(r.ends.size());
    for (auto e : r.ends) {
      auto want = e + guess;
      auto it = std::lower_bound(ref.ends.begin(), ref.ends.end(), want);
      std::int64_t best = it != ref.ends.end() ? *it : ref.ends.back();
      if (it != ref.ends.begin() && (it == ref.ends.end() || want - *std::prev(it) < *it - want))
        best = *std::prev(it);
      d.push_back(best - e);
    }
    std::sort(d.begin(), d.end());
    c.offset = d[d.size() / 2];
    // How far the matched ends still differ: the middle half's spread (an end matched to a
    // collective the other trace lacks is an outlier, not a disagreement of clocks).
    c.spread = d[d.size() * 3 / 4] - d[d.size() / 4];
    c.matched = d.size();
    c.how = "collective ends";
    return c;
  }
  if (r.first_step && ref.first_step) {
    c.offset = *ref.first_step - *r.first_step;
    c.how = "first step";
    return c;
  }
  return std::nullopt;
}

}  // namespace

void Profile::merge(const Profile& from) {
  Merger m(*this);
  m.add(from);
  m.finish();
}

Profile Profile::merge_ranks(std::vector<Profile> ranks, const std::vector<std::string>& names) {
  if (ranks.empty()) throw Error("nothing to merge: no rank profiles");
  auto name_of = [&](std::size_t i) {
    return i < names.size() && !names[i].empty() ? names[i] : "profile " + std::to_string(i + 1);
  };
  for (std::size_t i = 0; i < ranks.size(); ++i)
    if (!ranks[i].processes.empty())
      throw Error(name_of(i) + " is already a merged job (" +
                  std::to_string(ranks[i].processes.size()) +
                  " processes): merge the ranks' own profiles");

  // By rank; profiles that name none after them, as given.
  std::vector<std::size_t> order(ranks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto &ra = ranks[a].rank, &rb = ranks[b].rank;
    if (ra.has_value() != rb.has_value()) return ra.has_value();
    return ra && rb && ra->rank < rb->rank;
  });

  std::vector<std::string> warnings;
  // The job's axis is the clock of the first rank that has a reference.
  std::size_t reference = ranks.size();
  for (auto i : order)
    if (ranks[i].clock) {
      reference = i;
      break;
    }
  const std::optional<ClockReference> axis =
      reference < ranks.size() ? ranks[reference].clock : std::nullopt;
  auto axis_start = reference < ranks.size() ? ranks[reference].start_ns : ranks[order[0]].start_ns;
  const std::string first_version = ranks[order[0]].written_by;
  // Traces (a PyTorch profiler's) carry no clock reference: each is aligned with the first
  // trace by what they share.
  std::size_t trace_reference = ranks.size();
  for (auto i : order)
    if (ranks[i].source && !ranks[i].clock) {
      trace_reference = i;
      break;
    }
  const Anchors trace_anchors =
      trace_reference < ranks.size() ? anchors_of(ranks[trace_reference]) : Anchors{};
  const std::string trace_reference_name =
      trace_reference < ranks.size() && ranks[trace_reference].rank
          ? "rank " + std::to_string(ranks[trace_reference].rank->rank)
          : name_of(trace_reference);
  std::int64_t trace_reference_offset = 0;
  std::vector<std::string> aligned;  // "rank 1 by +3.98 ms"
  std::string aligned_how;
  std::int64_t aligned_spread = 0;
  std::size_t aligned_matched = 0;

  Profile job;
  job.clock = axis;
  job.written_by = kVersion;
  std::size_t total_spans = 0, total_samples = 0;
  for (const auto& r : ranks) {
    total_spans += r.spans.size();
    total_samples += r.samples.size();
  }
  job.spans.reserve(total_spans);
  job.samples.reserve(total_samples);
  Merger merger(job);
  std::map<std::int64_t, std::vector<std::string>> seen;
  std::map<std::int64_t, std::size_t> world_sizes;
  std::vector<std::string> unranked, other_versions;
  for (auto i : order) {
    Profile& r = ranks[i];
    ProcessInfo proc;
    proc.index = static_cast<std::uint32_t>(job.processes.size());
    proc.pid = r.pid;
    proc.command = r.command;
    proc.node = !r.node.empty() ? r.node : r.machine ? r.machine->hostname : "";
    proc.rank = r.rank;
    proc.written_by = r.written_by;
    std::optional<ContentOffset> by_content;
    if (i != reference && i != trace_reference && r.source && !r.clock &&
        trace_reference < ranks.size())
      by_content = content_offset(anchors_of(r), trace_anchors);
    if (i == reference) {
      proc.alignment = "reference";
    } else if (i == trace_reference && !axis && i == order[0]) {
      proc.alignment = "reference";
    } else if (by_content) {
      proc.alignment = by_content->how;
      proc.offset_ns = trace_reference_offset + by_content->offset;
      aligned.push_back((r.rank ? "rank " + std::to_string(r.rank->rank) : name_of(i)) + " by " +
                        (by_content->offset >= 0 ? "+" : "-") +
                        detail::duration(std::abs(by_content->offset)));
      if (aligned_how.empty() || by_content->how == "first step") aligned_how = by_content->how;
      aligned_spread = std::max(aligned_spread, by_content->spread);
      aligned_matched =
          aligned_matched ? std::min(aligned_matched, by_content->matched) : by_content->matched;
    } else if (!r.clock || !axis ||
               (r.clock->boot_id != axis->boot_id && !wall_offset(*r.clock, *axis))) {
      proc.alignment = "unaligned";
      if (__builtin_sub_overflow(axis_start, r.start_ns, &proc.offset_ns)) proc.offset_ns = 0;
      warnings.push_back("merge: " + name_of(i) +
                         (r.source ? " is a trace that shares no collective and no step with "
                                     "the first trace"
                          : r.clock
                              ? " has a clock reference too far from the first rank's to be true"
                              : " has no clock reference (written by " + version_of(r) + ")") +
                         ": its times are placed at the job's start, not on a shared axis");
    } else if (!r.clock->boot_id.empty() && r.clock->boot_id == axis->boot_id) {
      proc.alignment = "boot id";
    } else {
      proc.alignment = "wall clock";
      proc.offset_ns = *wall_offset(*r.clock, *axis);
    }
    if (i == trace_reference) trace_reference_offset = proc.offset_ns;
    if (r.written_by != first_version && !r.source)
      other_versions.push_back(name_of(i) + " (" + version_of(r) + ")");
    if (r.rank) {
      seen[r.rank->rank].push_back(name_of(i));
      if (r.rank->world_size) ++world_sizes[*r.rank->world_size];
    } else {
      unranked.push_back(name_of(i));
    }
    proc.breakdown = breakdown_of(r);
    if (proc.breakdown) proc.breakdown->rank = r.rank ? r.rank->rank : proc.index;
    shift(r, proc.offset_ns);
    proc.start_ns = r.start_ns;
    proc.end_ns = r.end_ns;
    proc.span_stats = r.span_stats;
    proc.samples = r.samples.size();
    proc.lost_samples = r.lost_samples;
    proc.dropped_spans = r.dropped_spans;
    for (auto& t : r.threads)
      t.process = proc.index;
    // What one rank could not collect is said of that rank.
    std::string who = r.rank ? "rank " + std::to_string(r.rank->rank) : name_of(i);
    for (auto& u : r.unavailable)
      u = who + ": " + u;
    job.processes.push_back(std::move(proc));
    merger.add(r);
    r = Profile{};  // its evidence is in the job now: free it
  }
  merger.finish();
  job.rank.reset();
  job.node.clear();

  if (!aligned.empty()) {
    std::string list;
    for (const auto& a : aligned)
      list += (list.empty() ? "" : ", ") + a;
    warnings.push_back("merge: the traces' clocks are each process's own; aligned with " +
                       trace_reference_name + "'s by " +
                       (aligned_how == "collective ends"
                            ? "the ends of their collectives (" + trace_anchors.kind + ", " +
                                  std::to_string(aligned_matched) +
                                  " matched by nearness; after it, half of them lie within " +
                                  detail::duration(aligned_spread) + " of each other)"
                            : std::string("the start of their first step (ProfilerStep)")) +
                       ": " + list);
  }
  if (!other_versions.empty()) {
    std::string list;
    for (const auto& v : other_versions)
      list += (list.empty() ? "" : ", ") + v;
    warnings.push_back("merge: profiles of different mainboard versions: the first rank's by " +
                       (first_version.empty() ? std::string("a version before 0.1")
                                              : "mainboard " + first_version) +
                       ", other: " + list + "; their fields are read alike, compare with care");
  }
  for (const auto& [rank, files] : seen)
    if (files.size() > 1) {
      std::string list;
      for (const auto& f : files)
        list += (list.empty() ? "" : ", ") + f;
      warnings.push_back("merge: rank " + std::to_string(rank) + " has " +
                         std::to_string(files.size()) + " profiles (" + list +
                         "): each is kept as a process");
    }
  if (!unranked.empty()) {
    std::string list;
    for (const auto& f : unranked)
      list += (list.empty() ? "" : ", ") + f;
    warnings.push_back("merge: " + list +
                       (unranked.size() == 1 ? " names no rank" : " name no rank") +
                       " (no launcher variable was set): kept as processes after the ranks");
  }
  if (!world_sizes.empty()) {
    auto common =
        std::max_element(world_sizes.begin(), world_sizes.end(), [](const auto& a, const auto& b) {
          return a.second < b.second;
        })->first;
    if (world_sizes.size() > 1)
      warnings.push_back("merge: the ranks disagree on the world size; most say " +
                         std::to_string(common));
    // Counted, and the first thousand listed (a world size from a hostile file can be huge).
    std::vector<std::int64_t> missing, beyond;
    std::int64_t present = 0;
    for (const auto& [rank, files] : seen)
      if (rank >= 0 && rank < common) ++present;
    for (std::int64_t r = 0; r < common && missing.size() < 1000; ++r)
      if (!seen.count(r)) missing.push_back(r);
    for (const auto& [rank, files] : seen)
      if (rank < 0 || rank >= common) beyond.push_back(rank);
    if (!missing.empty())
      warnings.push_back(
          "merge: " + std::to_string(common - present) + " of " + std::to_string(common) +
          " ranks have no profile: " + (missing.size() == 1 ? "rank " : "ranks ") +
          rank_list(missing, common - present) + " (ended before writing one, or not given)");
    if (!beyond.empty())
      warnings.push_back("merge: " + std::string(beyond.size() == 1 ? "rank " : "ranks ") +
                         rank_list(beyond) + " outside the world size " + std::to_string(common));
  }
  job.unavailable.insert(job.unavailable.begin(), warnings.begin(), warnings.end());
  return job;
}

}  // namespace mainboard
