// What a Profile says: statistics ordering, busy/idle accounting and diffs. Pure functions of the
// evidence; nothing here reads the system or formats text (the report is in view/).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include "mainboard/profile.hpp"
#include "profile/text_util.hpp"

namespace mainboard {

namespace {

using detail::duration;
std::size_t depth_of(const std::string& path) {
  return detail::path_depth(path);
}

struct Interval {
  std::int64_t start, end;
};

/// Sorted, merged intervals.
std::vector<Interval> merged_intervals(std::vector<Interval> v) {
  auto earlier = [](const Interval& a, const Interval& b) { return a.start < b.start; };
  if (!std::is_sorted(v.begin(), v.end(), earlier)) std::sort(v.begin(), v.end(), earlier);
  std::vector<Interval> out;
  for (const auto& i : v) {
    if (i.end <= i.start) continue;
    if (!out.empty() && i.start <= out.back().end)
      out.back().end = std::max(out.back().end, i.end);
    else
      out.push_back(i);
  }
  return out;
}

}  // namespace

std::optional<double> Change::total_change_pct() const {
  if (kind != Kind::changed || baseline_total_ns == 0) return std::nullopt;
  return 100.0 * static_cast<double>(total_ns - baseline_total_ns) /
         static_cast<double>(baseline_total_ns);
}

std::vector<SpanStat> Profile::stats() const {
  auto out = span_stats;
  std::stable_sort(out.begin(), out.end(),
                   [](const SpanStat& a, const SpanStat& b) { return a.total_ns > b.total_ns; });
  return out;
}

std::vector<SpanStat> Profile::bottlenecks(std::size_t top) const {
  auto out = stats();
  if (out.size() > top) out.resize(top);
  return out;
}

Timeline Profile::timeline(std::size_t top_gaps) const {
  Timeline t;
  t.start_ns = start_ns;
  t.end_ns = end_ns;
  std::vector<Interval> busy;

  bool have_activity = std::any_of(activities.begin(), activities.end(),
                                   [](const GpuActivity& a) { return a.occupies_device(); });
  bool have_utilization =
      std::any_of(device_samples.begin(), device_samples.end(),
                  [](const DeviceSample& s) { return s.utilization_pct.has_value(); });
  if (have_activity) {
    // The device works while a kernel, copy or set runs: exact, from the activity records.
    t.source = "gpu activity";
    for (const auto& a : activities)
      if (a.occupies_device()) busy.push_back({a.start_ns, a.end_ns});
  } else if (have_utilization) {
    // A utilization figure covers the sample period before it: busy when above zero.
    t.source = "device samples";
    std::int64_t previous = start_ns;
    for (const auto& s : device_samples) {
      if (s.utilization_pct && *s.utilization_pct > 0)
        busy.push_back({std::max(previous, start_ns), s.t_ns});
      previous = s.t_ns;
    }
  } else if (!spans.empty()) {
    // The innermost spans are the work; a gap between them, even inside a parent span, is time
    // nothing annotated was running.
    t.source = "spans";
    // In order of start (a merged profile's are; a recorded one's are in order of end), each
    // thread's latest span is held until the thread's next one says whether it has a child.
    std::vector<std::uint32_t> order;
    auto by_start = [&](std::uint32_t a, std::uint32_t b) {
      return spans[a].start_ns < spans[b].start_ns;
    };
    if (!std::is_sorted(spans.begin(), spans.end(), [](const SpanEvent& a, const SpanEvent& b) {
          return a.start_ns < b.start_ns;
        })) {
      order.resize(spans.size());
      std::iota(order.begin(), order.end(), 0u);
      std::sort(order.begin(), order.end(), by_start);
    }
    constexpr std::uint32_t none = UINT32_MAX;
    std::vector<std::uint32_t> held(threads.size() + 1, none);
    std::vector<bool> leaf(spans.size(), false);
    for (std::size_t k = 0; k < spans.size(); ++k) {
      auto i = order.empty() ? static_cast<std::uint32_t>(k) : order[k];
      const auto& e = spans[i];
      auto& h = held[std::min<std::size_t>(e.thread, threads.size())];
      if (h == none) {
        h = i;
        continue;
      }
      const auto& prior = spans[h];
      if (e.start_ns == prior.start_ns && e.end_ns > prior.end_ns) continue;  // its parent
      // Spans on one thread nest: the next one starts inside the held one (a child) or after.
      leaf[h] = e.start_ns >= prior.end_ns;
      h = i;
    }
    for (auto h : held)
      if (h != none) leaf[h] = true;
    busy.reserve(static_cast<std::size_t>(std::count(leaf.begin(), leaf.end(), true)));
    for (std::size_t k = 0; k < spans.size(); ++k) {
      auto i = order.empty() ? k : order[k];
      if (leaf[i]) busy.push_back({spans[i].start_ns, spans[i].end_ns});
    }
  } else {
    return t;
  }
  auto merged = merged_intervals(std::move(busy));
  std::vector<IdleGap> gaps;
  std::int64_t cursor = start_ns;
  for (const auto& b : merged) {
    auto s = std::max(b.start, start_ns), e = std::min(b.end, end_ns);
    if (e <= s) continue;
    t.busy_ns += e - s;
    if (s > cursor) gaps.push_back({cursor, s, ""});
    cursor = std::max(cursor, e);
  }
  if (end_ns > cursor) gaps.push_back({cursor, end_ns, ""});
  t.idle_ns = (end_ns - start_ns) - t.busy_ns;
  std::sort(gaps.begin(), gaps.end(),
            [](const IdleGap& a, const IdleGap& b) { return a.duration_ns() > b.duration_ns(); });
  if (gaps.size() > top_gaps) gaps.resize(top_gaps);
  // What was open during each gap: the deepest stored span around its middle.
  for (auto& g : gaps) {
    std::int64_t mid = g.start_ns + g.duration_ns() / 2;
    std::size_t best_depth = 0;
    for (const auto& e : spans) {
      if (e.start_ns > mid) break;  // spans are sorted by start
      if (e.end_ns <= mid) continue;
      const auto& path = paths[e.path];
      if (g.open_span.empty() || depth_of(path) >= best_depth) {
        g.open_span = path;
        best_depth = depth_of(path);
      }
    }
  }
  t.gaps = std::move(gaps);
  return t;
}

namespace {

/// Baseline against now, by name: one Diff per name in either, with the calls and totals of
/// each side (fill() adds what a kind of diff has beyond them), largest absolute change first.
template <class Diff, class Stat, class Fill>
std::vector<Diff> changes(const std::map<std::string, const Stat*>& before,
                          const std::map<std::string, const Stat*>& after, Fill fill) {
  std::vector<Diff> out;
  auto add = [&](const std::string& name, const Stat* was, const Stat* now) {
    Diff d;
    d.kind = !was ? DiffKind::added : !now ? DiffKind::removed : DiffKind::changed;
    if (was) {
      d.baseline_calls = was->calls;
      d.baseline_total_ns = was->total_ns;
    }
    if (now) {
      d.calls = now->calls;
      d.total_ns = now->total_ns;
    }
    fill(d, name, was, now);
    out.push_back(std::move(d));
  };
  for (const auto& [name, now] : after) {
    auto it = before.find(name);
    add(name, it == before.end() ? nullptr : it->second, now);
  }
  for (const auto& [name, was] : before)
    if (!after.count(name)) add(name, was, nullptr);
  std::stable_sort(out.begin(), out.end(), [](const Diff& a, const Diff& b) {
    return std::llabs(a.total_change_ns()) > std::llabs(b.total_change_ns());
  });
  return out;
}

}  // namespace

ProfileDiff Profile::diff(const Profile& baseline) const {
  std::map<std::string, const SpanStat*> regions_before, regions_after;
  for (const auto& s : baseline.span_stats)
    regions_before[s.path] = &s;
  for (const auto& s : span_stats)
    regions_after[s.path] = &s;
  auto kernels_was = baseline.kernel_summaries(), kernels_now = kernel_summaries();
  std::map<std::string, const KernelSummary*> kernels_before, kernels_after;
  for (const auto& k : kernels_was)
    kernels_before[k.name] = &k;
  for (const auto& k : kernels_now)
    kernels_after[k.name] = &k;
  ProfileDiff d;
  d.regions = changes<RegionDiff>(
      regions_before, regions_after,
      [](RegionDiff& r, const std::string& path, const SpanStat* was, const SpanStat* now) {
        r.path = path;
        if (was) r.baseline_avg_ns = was->avg_ns();
        if (now) r.avg_ns = now->avg_ns();
      });
  d.kernels = changes<KernelDiff>(kernels_before, kernels_after,
                                  [](KernelDiff& k, const std::string& name, const KernelSummary*,
                                     const KernelSummary*) { k.name = name; });
  // Functions: every one of either profile's samples, by the key hot_functions uses.
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, FunctionDiff> functions;
  auto key = [](const FunctionStat& f) { return Key{f.function, f.module, f.file}; };
  for (const auto& f : baseline.hot_functions(std::numeric_limits<std::size_t>::max())) {
    auto& e = functions[key(f)];
    e.baseline_self_pct = f.self_pct;
    e.baseline_total_pct = f.total_pct;
    e.kind = DiffKind::removed;
  }
  for (const auto& f : hot_functions(std::numeric_limits<std::size_t>::max())) {
    auto [it, fresh] = functions.try_emplace(key(f));
    auto& e = it->second;
    e.self_pct = f.self_pct;
    e.total_pct = f.total_pct;
    e.kind = fresh ? DiffKind::added : DiffKind::changed;
  }
  for (auto& [k, e] : functions) {
    std::tie(e.function, e.module, e.file) = k;
    d.functions.push_back(std::move(e));
  }
  std::stable_sort(d.functions.begin(), d.functions.end(),
                   [](const FunctionDiff& a, const FunctionDiff& b) {
                     if (std::abs(a.self_change()) != std::abs(b.self_change()))
                       return std::abs(a.self_change()) > std::abs(b.self_change());
                     return std::abs(a.total_change()) > std::abs(b.total_change());
                   });
  return d;
}

}  // namespace mainboard
