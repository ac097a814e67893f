// What a Profile says: statistics ordering, busy/idle accounting, diffs and the text report.
// Pure functions of the evidence; nothing here reads the system.
#include <fmt/color.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "mainboard/profile.hpp"
#include "profiling/analysis_util.hpp"
#include "view/format.hpp"

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
std::vector<Interval> merge(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
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

std::optional<double> RegionDiff::total_change_pct() const {
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
    std::unordered_map<std::uint32_t, std::vector<const SpanEvent*>> by_thread;
    for (const auto& e : spans)
      by_thread[e.thread].push_back(&e);
    for (auto& [thread, events] : by_thread) {
      std::sort(events.begin(), events.end(), [](const SpanEvent* a, const SpanEvent* b) {
        return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->end_ns > b->end_ns;
      });
      for (std::size_t i = 0; i < events.size(); ++i) {
        // Spans on one thread nest: the next one to start either starts inside this one (a
        // child) or after it ends.
        bool leaf = i + 1 == events.size() || events[i + 1]->start_ns >= events[i]->end_ns;
        if (leaf) busy.push_back({events[i]->start_ns, events[i]->end_ns});
      }
    }
  } else {
    return t;
  }
  auto merged = merge(std::move(busy));
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

ProfileDiff Profile::diff(const Profile& baseline) const {
  std::map<std::string, const SpanStat*> before, after;
  for (const auto& s : baseline.span_stats)
    before[s.path] = &s;
  for (const auto& s : span_stats)
    after[s.path] = &s;
  ProfileDiff d;
  for (const auto& [path, now] : after) {
    RegionDiff r;
    r.path = path;
    r.calls = now->calls;
    r.total_ns = now->total_ns;
    r.avg_ns = now->avg_ns();
    auto it = before.find(path);
    if (it == before.end()) {
      r.kind = RegionDiff::Kind::added;
    } else {
      r.baseline_calls = it->second->calls;
      r.baseline_total_ns = it->second->total_ns;
      r.baseline_avg_ns = it->second->avg_ns();
    }
    d.regions.push_back(r);
  }
  for (const auto& [path, was] : before) {
    if (after.count(path)) continue;
    RegionDiff r;
    r.path = path;
    r.kind = RegionDiff::Kind::removed;
    r.baseline_calls = was->calls;
    r.baseline_total_ns = was->total_ns;
    r.baseline_avg_ns = was->avg_ns();
    d.regions.push_back(r);
  }
  std::stable_sort(d.regions.begin(), d.regions.end(),
                   [](const RegionDiff& a, const RegionDiff& b) {
                     return std::llabs(a.total_change_ns()) > std::llabs(b.total_change_ns());
                   });

  std::map<std::string, KernelSummary> kernels_before, kernels_after;
  for (auto& k : baseline.kernel_summaries())
    kernels_before[k.name] = k;
  for (auto& k : kernel_summaries())
    kernels_after[k.name] = k;
  for (const auto& [name, now] : kernels_after) {
    KernelDiff k;
    k.name = name;
    k.calls = now.calls;
    k.total_ns = now.total_ns;
    auto it = kernels_before.find(name);
    if (it == kernels_before.end()) {
      k.kind = KernelDiff::Kind::added;
    } else {
      k.baseline_calls = it->second.calls;
      k.baseline_total_ns = it->second.total_ns;
    }
    d.kernels.push_back(std::move(k));
  }
  for (const auto& [name, was] : kernels_before) {
    if (kernels_after.count(name)) continue;
    KernelDiff k;
    k.name = name;
    k.kind = KernelDiff::Kind::removed;
    k.baseline_calls = was.calls;
    k.baseline_total_ns = was.total_ns;
    d.kernels.push_back(std::move(k));
  }
  std::stable_sort(d.kernels.begin(), d.kernels.end(),
                   [](const KernelDiff& a, const KernelDiff& b) {
                     return std::llabs(a.total_change_ns()) > std::llabs(b.total_change_ns());
                   });
  return d;
}

namespace {

/// One table of changes: regions and kernels share the layout.
template <class Row, class Kind>
void diff_table(std::string& out, const char* title, std::size_t width,
                const std::vector<Row>& rows, const std::string& (*label)(const Row&)) {
  out += fmt::format("{:<{}} {:>9} {:>11} {:>11} {:>11} {:>9}\n", title, width, "calls", "baseline",
                     "total", "change", "change");
  for (const auto& r : rows) {
    std::string pct;
    if (r.kind == Kind::added)
      pct = "new";
    else if (r.kind == Kind::removed)
      pct = "gone";
    else if (auto p = r.total_change_pct())
      pct = fmt::format("{:+.1f} %", *p);
    std::string calls = r.kind == Kind::changed && r.calls != r.baseline_calls
                            ? fmt::format("{}→{}", r.baseline_calls, r.calls)
                            : std::to_string(r.kind == Kind::removed ? r.baseline_calls : r.calls);
    out += fmt::format("{:<{}} {:>9} {:>11} {:>11} {:>11} {:>9}\n", detail::clip(label(r), width),
                       width, calls, r.kind == Kind::added ? "-" : duration(r.baseline_total_ns),
                       r.kind == Kind::removed ? "-" : duration(r.total_ns),
                       (r.total_change_ns() >= 0 ? "+" : "") + duration(r.total_change_ns()), pct);
  }
}

const std::string& region_label(const RegionDiff& r) {
  return r.path;
}
const std::string& kernel_label(const KernelDiff& k) {
  return k.name;
}

}  // namespace

std::string ProfileDiff::report() const {
  if (regions.empty() && kernels.empty()) return "no regions or kernels in either profile\n";
  std::string out;
  if (!regions.empty())
    diff_table<RegionDiff, RegionDiff::Kind>(out, "region", 40, regions, region_label);
  if (!kernels.empty()) {
    if (!out.empty()) out += "\n";
    diff_table<KernelDiff, KernelDiff::Kind>(out, "kernel", 52, kernels, kernel_label);
  }
  return out;
}

std::string Profile::report(std::size_t top_regions) const {
  std::string out;
  auto wall = end_ns - start_ns;
  out += fmt::format("Profile: {} wall, {} thread{}, {} region{}, {} span{} stored", duration(wall),
                     threads.size(), threads.size() == 1 ? "" : "s", span_stats.size(),
                     span_stats.size() == 1 ? "" : "s", spans.size(), spans.size() == 1 ? "" : "s");
  if (dropped_spans) out += fmt::format(" ({} more not stored: max_spans reached)", dropped_spans);
  out += "\n";

  if (!span_stats.empty()) {
    out += "\nRegions (slowest total first)\n";
    out += fmt::format("  {:<44} {:>8} {:>10} {:>10} {:>10} {:>10} {:>7}\n", "path", "calls",
                       "total", "avg", "max", "self", "share");
    auto rows = stats();
    std::size_t more = rows.size() > top_regions ? rows.size() - top_regions : 0;
    if (more) rows.resize(top_regions);
    for (const auto& s : rows) {
      double share =
          wall > 0 ? 100.0 * static_cast<double>(s.total_ns) / static_cast<double>(wall) : 0.0;
      out += fmt::format("  {:<44} {:>8} {:>10} {:>10} {:>10} {:>10} {:>6.1f}%\n", s.path, s.calls,
                         duration(s.total_ns), duration(static_cast<std::int64_t>(s.avg_ns())),
                         duration(s.max_ns), duration(s.self_ns), share);
    }
    if (more) out += fmt::format("  … {} more region{}\n", more, more == 1 ? "" : "s");
  }
  if (!device_samples.empty()) {
    std::uint64_t peak_process = 0, peak_device = 0;
    double util_sum = 0, util_peak = 0;
    int util_n = 0;
    for (const auto& s : device_samples) {
      peak_process = std::max(peak_process, s.process_memory_bytes.value_or(0));
      peak_device = std::max(peak_device, s.device_memory_used_bytes.value_or(0));
      if (s.utilization_pct) {
        util_sum += *s.utilization_pct;
        util_peak = std::max(util_peak, *s.utilization_pct);
        ++util_n;
      }
    }
    out += fmt::format("\nDevice (GPU {})\n  {} samples · this process peak {} · device peak {}",
                       device_samples.front().gpu, device_samples.size(), view::bytes(peak_process),
                       view::bytes(peak_device));
    if (util_n)
      out +=
          fmt::format(" · utilization avg {:.0f} %, peak {:.0f} %", util_sum / util_n, util_peak);
    out += "\n";
  }
  if (!activities.empty() || dropped_activities) {
    auto tr = trace_report(10);
    out += fmt::format("\nGPU activity ({} record{}", activities.size(),
                       activities.size() == 1 ? "" : "s");
    if (dropped_activities) out += fmt::format(", {} lost", dropped_activities);
    out += ")\n" + tr.report();
    if (dropped_spans && !spans.empty())
      out +=
          "  (spans past max_spans are not stored, so their GPU time counts toward their "
          "parents)\n";
    // Launch shapes against the SMs of the GPU that ran the hottest kernel, when the profile's
    // machine snapshot knows them.
    if (!tr.kernels.empty() && machine) {
      std::uint32_t device = 0;
      for (const auto& a : activities)
        if (a.kind == GpuActivity::Kind::kernel && a.name < activity_names.size() &&
            activity_names[a.name] == tr.kernels.front().name) {
          device = a.device;
          break;
        }
      if (device < machine->gpus.size() && machine->gpus[device].info.sm_count) {
        EfficiencyOptions o;
        o.sm_count = *machine->gpus[device].info.sm_count;
        o.top = 5;
        out += fmt::format("  {:<52} {:>15} {:>12} {:>5} {:>7} {:>10}\n",
                           fmt::format("launch shape on {} SMs (1 block per SM)", o.sm_count),
                           "grid", "block", "regs", "waves", "last wave");
        for (const auto& e : efficiency(o))
          out += fmt::format("  {:<52} {:>15} {:>12} {:>5} {:>7.2f} {:>9.0f}%\n",
                             detail::clip(e.name, 52),
                             fmt::format("{}×{}×{}", e.grid[0], e.grid[1], e.grid[2]),
                             fmt::format("{}×{}×{}", e.block[0], e.block[1], e.block[2]),
                             e.registers_per_thread, e.waves, e.last_wave_fill_pct);
      }
    }
  }
  if (!samples.empty() || lost_samples) {
    std::size_t sampled_threads = 0;
    {
      std::vector<bool> seen(threads.size(), false);
      for (const auto& x : samples)
        if (x.thread < seen.size() && !seen[x.thread]) {
          seen[x.thread] = true;
          ++sampled_threads;
        }
    }
    out += fmt::format("\nStack samples ({} at {} Hz on {} thread{}", samples.size(), sample_hz,
                       sampled_threads, sampled_threads == 1 ? "" : "s");
    if (lost_samples) out += fmt::format(", {} lost", lost_samples);
    out += ")\n";
    auto hot = hot_functions(15);
    if (!hot.empty()) {
      out += fmt::format("  {:<56} {:>7} {:>7} {:>8} {:>8}  {}\n", "function", "self", "total",
                         "self %", "total %", "module");
      for (const auto& f : hot)
        out += fmt::format("  {:<56} {:>7} {:>7} {:>7.1f}% {:>7.1f}%  {}\n",
                           detail::clip(f.function, 56), f.self_samples, f.total_samples,
                           f.self_pct, f.total_pct, f.module);
    }
    auto stacks_top = hot_stacks(3);
    for (std::size_t i = 0; i < stacks_top.size(); ++i) {
      out += fmt::format("  stack #{} ({:.1f} %, {} samples):\n", i + 1, stacks_top[i].pct,
                         stacks_top[i].samples);
      const auto& fr = stacks_top[i].frames;
      std::size_t from = fr.size() > 12 ? fr.size() - 12 : 0;  // the leaf end, where the time is
      if (from) out += fmt::format("    … {} outer frames\n", from);
      for (std::size_t k = from; k < fr.size(); ++k)
        out += "    " + detail::clip(fr[k], 100) + "\n";
    }
  }
  if (!counters.empty()) {
    out += "\nCounter bottlenecks\n";
    out += fmt::format("  {:<52} {:>10} {:>7} {:>7} {:>9}\n", "kernel", "time", "SM", "DRAM",
                       "limiter");
    auto pct = [](const std::optional<double>& v) {
      return v ? fmt::format("{:.0f}%", *v) : std::string("-");
    };
    for (const auto& c : counter_bottlenecks(10))
      out += fmt::format("  {:<52} {:>10} {:>7} {:>7} {:>9}\n", detail::clip(c.name, 52),
                         duration(c.duration_ns), pct(c.sm_throughput_pct),
                         pct(c.dram_throughput_pct), c.limiter());
  }
  auto t = timeline(5);
  if (!t.source.empty()) {
    out += fmt::format("\nTimeline ({})\n  busy {:.1f} % of {}, idle {}\n", t.source, t.busy_pct(),
                       duration(t.end_ns - t.start_ns), duration(t.idle_ns));
    for (const auto& g : t.gaps)
      out += fmt::format("  idle {:>10} at +{}{}\n", duration(g.duration_ns()),
                         duration(g.start_ns - start_ns),
                         g.open_span.empty() ? "" : " in " + g.open_span);
  }
  if (!unavailable.empty()) {
    out += "\nNot collected\n";
    for (const auto& u : unavailable)
      out += "  " + u + "\n";
  }
  return out;
}

void Profile::show(bool color) const {
  auto text = report();
  if (color) {
    // Section titles in bold; the table stays plain so it aligns everywhere.
    std::string painted;
    std::size_t start = 0;
    while (start < text.size()) {
      auto end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      std::string line = text.substr(start, end - start);
      bool title = !line.empty() && line[0] != ' ';
      painted += (title ? fmt::format(fmt::emphasis::bold, "{}", line) : line) + "\n";
      start = end + 1;
    }
    text = painted;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace mainboard
