// The text of a profile: the report of Profile::report and show(), the GPU section
// (TraceReport::report), the diff table (ProfileDiff::report) and the verdict of profile(fn)
// (ProfileReport::report). Formatting only; the numbers come from the analyses in profile/.
#include <fmt/color.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "mainboard/profile.hpp"
#include "mainboard/profile_report.hpp"
#include "profile/text_util.hpp"
#include "view/energy_text.hpp"
#include "view/format.hpp"

namespace mainboard {

using detail::duration;

namespace {

/// A grid or block as "264×1×1".
std::string dims(const std::array<std::uint32_t, 3>& d) {
  return fmt::format("{}×{}×{}", d[0], d[1], d[2]);
}

}  // namespace

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
  if (regions.empty() && kernels.empty() && functions.empty())
    return "nothing to compare: no regions, kernels or stack samples in either profile\n";
  std::string out;
  if (!regions.empty())
    diff_table<RegionDiff, RegionDiff::Kind>(out, "region", 40, regions, region_label);
  if (!kernels.empty()) {
    if (!out.empty()) out += "\n";
    diff_table<KernelDiff, KernelDiff::Kind>(out, "kernel", 52, kernels, kernel_label);
  }
  if (!functions.empty()) {
    // As perf diff: each function's share of its profile's samples, then and now.
    if (!out.empty()) out += "\n";
    out += fmt::format("{:<44} {:>9} {:>9} {:>9} {:>10} {:>9} {:>9}\n", "function (stack samples)",
                       "base self", "self", "change", "base total", "total", "change");
    constexpr std::size_t kRows = 30;
    std::size_t shown = 0;
    for (const auto& f : functions) {
      if (shown++ == kRows) break;
      std::string name = f.function;
      if (f.module == "[python]" && !f.file.empty()) {
        auto slash = f.file.rfind('/');
        name += " (" + (slash == std::string::npos ? f.file : f.file.substr(slash + 1)) + ")";
      } else if (!f.module.empty()) {
        name += " [" + f.module + "]";
      }
      auto pct = [](double v) { return fmt::format("{:.1f}%", v); };
      auto change = [&](double v) {
        return f.kind == DiffKind::added     ? std::string("new")
               : f.kind == DiffKind::removed ? std::string("gone")
                                             : fmt::format("{:+.1f}", v);
      };
      out += fmt::format(
          "{:<44} {:>9} {:>9} {:>9} {:>10} {:>9} {:>9}\n", detail::clip(name, 44),
          f.kind == DiffKind::added ? "-" : pct(f.baseline_self_pct),
          f.kind == DiffKind::removed ? "-" : pct(f.self_pct), change(f.self_change()),
          f.kind == DiffKind::added ? "-" : pct(f.baseline_total_pct),
          f.kind == DiffKind::removed ? "-" : pct(f.total_pct), change(f.total_change()));
    }
    if (functions.size() > kRows)
      out += fmt::format("… {} more function{} (--json lists all)\n", functions.size() - kRows,
                         functions.size() - kRows == 1 ? "" : "s");
  }
  return out;
}

std::string RankReport::report(std::size_t top) const {
  std::string out = verdict + "\n";
  if (ranks.empty()) return out;
  std::set<std::string> nodes;
  for (const auto& r : ranks)
    nodes.insert(r.node);
  out += fmt::format("\nRanks ({}{} on {} node{}", ranks.size(),
                     world_size ? fmt::format(" of {}", *world_size) : std::string(), nodes.size(),
                     nodes.size() == 1 ? "" : "s");
  if (!step.empty()) out += fmt::format("; step {}, {} on every rank", step, steps.size());
  out += ")\n";
  out += fmt::format("  {:>6} {:<16} {:>10} {:>10} {:>9} {:>11} {:>10}  {}\n", "rank", "node",
                     "work", "wait", "slowest", "collective", "waits for", "clock");
  for (const auto& r : ranks)
    out += fmt::format(
        "  {:>6} {:<16} {:>10} {:>10} {:>9} {:>11} {:>10}  {}\n", r.rank, detail::clip(r.node, 16),
        duration(r.work_ns), duration(r.wait_ns),
        steps.empty() ? std::string("-") : std::to_string(r.slowest_steps),
        r.samples ? fmt::format("{}/{}", r.collective_samples, r.samples) : std::string("-"),
        r.waits_for ? fmt::format("rank {}", *r.waits_for) : std::string(), r.alignment);
  out +=
      "  (work: time in the phases that are not waits; slowest: steps in which it had the "
      "most work; collective: stack samples in gloo, NCCL or MPI code)\n";
  if (!missing_ranks.empty()) {
    std::string list;
    for (auto r : missing_ranks)
      list += (list.empty() ? "" : ", ") + std::to_string(r);
    out += fmt::format("  missing: rank{} {}\n", missing_ranks.size() == 1 ? "" : "s", list);
  }
  if (!spans.empty()) {
    out += "\nPhases across ranks (widest spread first)\n";
    out += fmt::format("  {:<40} {:>10} {:>10} {:>10} {:>8} {:>12}\n", "path", "min", "median",
                       "max", "slowest", "over median");
    std::size_t shown = 0;
    for (const auto& s : spans) {
      if (shown++ == top) break;
      out += fmt::format("  {:<40} {:>10} {:>10} {:>10} {:>8} {:>12}\n",
                         detail::clip(s.path + (s.wait ? " (wait)" : ""), 40), duration(s.min_ns),
                         duration(s.median_ns), duration(s.max_ns), s.slowest_rank,
                         "+" + duration(s.over_median_ns));
    }
  }
  if (!breakdown.empty()) {
    out += fmt::format("\nTime breakdown ({}, as Holistic Trace Analysis reads it)\n",
                       breakdown.front().source);
    out += fmt::format("  {:>6} {:>10} {:>9} {:>12} {:>9} {:>9}\n", "rank", "window", "compute",
                       "non-compute", "idle", "overlap");
    for (const auto& b : breakdown)
      out += fmt::format("  {:>6} {:>10} {:>8.1f}% {:>11.1f}% {:>8.1f}% {:>9}\n", b.rank,
                         duration(b.window_ns), b.compute_pct, b.non_compute_pct, b.idle_pct,
                         b.overlap_pct ? fmt::format("{:.1f}%", *b.overlap_pct) : "-");
    out +=
        "  (non-compute: communication and memory copies; overlap: the share of communication "
        "time in which computation ran too)\n";
  }
  if (!steps.empty()) {
    std::vector<const StepLag*> worst;
    for (const auto& s : steps)
      worst.push_back(&s);
    std::stable_sort(worst.begin(), worst.end(),
                     [](const StepLag* a, const StepLag* b) { return a->lag_ns > b->lag_ns; });
    if (worst.size() > std::min<std::size_t>(top, 5)) worst.resize(std::min<std::size_t>(top, 5));
    out += "\nSteps with the longest lag\n";
    for (const auto* s : worst)
      out +=
          fmt::format("  step {:>5}: rank {} worked {} more than the others' median ({})\n",
                      s->index, s->slowest_rank, duration(s->lag_ns), duration(s->median_work_ns));
  }
  if (!warnings.empty()) {
    out += "\nMerge warnings\n";
    for (const auto& w : warnings)
      out += "  " + w + "\n";
  }
  return out;
}

std::string Profile::report(std::size_t top) const {
  return report(top, RankOptions{});
}

std::string Profile::report(std::size_t top, const RankOptions& rank_options) const {
  return report(top, rank_options, FunctionOrder::self);
}

std::string Profile::report(std::size_t top, const RankOptions& rank_options,
                            FunctionOrder by) const {
  const std::size_t top_regions = top;
  std::string out;
  // A target that failed says so first: what follows is what it did until then.
  if (target_exit && target_exit->failed())
    out += fmt::format("The target{} {}: the profile holds what it did until then.\n\n",
                       command.empty() ? "" : " (" + command + ")", target_exit->summary());
  if (!processes.empty()) {
    auto o = rank_options;
    o.top = std::min(top, o.top);
    out += ranks(o).report(o.top) + "\n";
  }
  auto wall = end_ns - start_ns;
  out += fmt::format("Profile: {} wall, {} thread{}, {} region{}, {} span{} stored", duration(wall),
                     threads.size(), threads.size() == 1 ? "" : "s", span_stats.size(),
                     span_stats.size() == 1 ? "" : "s", spans.size(), spans.size() == 1 ? "" : "s");
  if (dropped_spans) out += fmt::format(" ({} more not stored: max_spans reached)", dropped_spans);
  out += "\n";
  // A coarse span clock (some Arm parts count at 25 MHz) makes short spans read as 0 or a tick.
  if (!span_stats.empty() && span_clock_hz && *span_clock_hz > 0 && *span_clock_hz < 1e8)
    out += fmt::format("Span clock {} counts at {:.1f} MHz: spans are timed to {}\n", span_clock,
                       *span_clock_hz / 1e6,
                       duration(static_cast<std::int64_t>(std::llround(1e9 / *span_clock_hz))));

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
    bool over = std::any_of(rows.begin(), rows.end(),
                            [&](const SpanStat& r) { return wall > 0 && r.total_ns > wall; });
    if (over)
      out +=
          "  (share: the region's total time over the wall time; above 100 % when several "
          "threads were in it at once)\n";
  }
  if (!device_samples.empty()) {
    std::uint64_t peak_process = 0, peak_device = 0;
    bool per_process = false;
    double util_sum = 0, util_peak = 0;
    int util_n = 0;
    for (const auto& s : device_samples) {
      per_process = per_process || s.process_memory_bytes;
      peak_process = std::max(peak_process, s.process_memory_bytes.value_or(0));
      peak_device = std::max(peak_device, s.device_memory_used_bytes.value_or(0));
      if (s.utilization_pct) {
        util_sum += *s.utilization_pct;
        util_peak = std::max(util_peak, *s.utilization_pct);
        ++util_n;
      }
    }
    out += fmt::format("\nDevice (GPU {})\n  {} samples · ", device_samples.front().gpu,
                       device_samples.size());
    out += per_process ? fmt::format("this process peak {} · device peak {}",
                                     view::bytes(peak_process), view::bytes(peak_device))
                       : fmt::format("device-wide peak {} (no per-process figure from the driver)",
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
                             detail::clip(e.name, 52), dims(e.shape.grid), dims(e.shape.block),
                             e.shape.registers_per_thread, e.waves, e.last_wave_fill_pct);
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
    auto hot = hot_functions(std::min<std::size_t>(top, 15), by);
    if (!hot.empty()) {
      out += fmt::format("  {:<56} {:>7} {:>7} {:>8} {:>8}  {}\n", "function", "self", "total",
                         "self %", "total %", "module");
      for (const auto& f : hot) {
        // A Python function's module is its source file, as py-spy names it
        // ("torch/nn/modules/module.py").
        std::string where = f.module;
        if (f.module == "[python]" && !f.file.empty()) where = detail::short_python_file(f.file);
        out += fmt::format("  {:<56} {:>7} {:>7} {:>7.1f}% {:>7.1f}%  {}\n",
                           detail::clip(f.function, 56), f.self_samples, f.total_samples,
                           f.self_pct, f.total_pct, where);
      }
    }
    auto stacks_top = hot_stacks(std::min<std::size_t>(top, 3));
    for (std::size_t i = 0; i < stacks_top.size(); ++i) {
      out += fmt::format("  stack #{} ({:.1f} %, {} samples):\n", i + 1, stacks_top[i].pct,
                         stacks_top[i].samples);
      const auto& fr = stacks_top[i].frames;
      // At most 12 frames: the 4 outermost (where the program starts) and the 8 innermost
      // (where the time is), the middle cut.
      constexpr std::size_t kOuter = 4, kInner = 8;
      for (std::size_t k = 0; k < fr.size(); ++k) {
        if (fr.size() > kOuter + kInner && k == kOuter) {
          out += fmt::format("    … {} frames …\n", fr.size() - kOuter - kInner);
          k = fr.size() - kInner;
        }
        out += "    " + detail::clip(fr[k], 100) + "\n";
      }
    }
  }
  if (!counters.empty()) {
    out += "\nCounter bottlenecks\n";
    out += fmt::format("  {:<52} {:>10} {:>7} {:>7} {:>9}\n", "kernel", "time", "SM", "DRAM",
                       "limiter");
    auto pct = [](const std::optional<double>& v) {
      return v ? fmt::format("{:.0f}%", *v) : std::string("-");
    };
    for (const auto& c : counter_bottlenecks(std::min<std::size_t>(top, 10)))
      out += fmt::format("  {:<52} {:>10} {:>7} {:>7} {:>9}\n", detail::clip(c.name, 52),
                         duration(c.total_ns), pct(c.sm_throughput_pct), pct(c.dram_throughput_pct),
                         c.limiter());
  }
  auto t = timeline(std::min<std::size_t>(top, 5));
  if (!t.source.empty()) {
    out += fmt::format("\nTimeline ({})\n  busy {:.1f} % of {}, idle {}\n", t.source, t.busy_pct(),
                       duration(t.end_ns - t.start_ns), duration(t.idle_ns));
    for (const auto& g : t.gaps)
      out += fmt::format("  idle {:>10} at +{}{}\n", duration(g.duration_ns()),
                         duration(g.start_ns - start_ns),
                         g.open_span.empty() ? "" : " in " + g.open_span);
  }
  if (energy) out += "\nEnergy (host-wide)\n  " + view::energy_text(*energy) + "\n";
  // A merged job's merge warnings were said in its rank section.
  std::vector<std::string> missing;
  for (const auto& u : unavailable)
    if (processes.empty() || u.rfind("merge: ", 0) != 0) missing.push_back(u);
  if (!missing.empty()) {
    out += "\nNot collected\n";
    for (const auto& u : missing)
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

std::string TraceReport::report() const {
  using detail::duration;
  std::string out;
  auto gpu = kernel_ns + copy_ns;
  auto pct = [&](std::int64_t part) {
    return gpu > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(gpu) : 0.0;
  };
  out += fmt::format(
      "  GPU time {}: compute {} ({:.1f} %, {} kernel{}), copies {} ({:.1f} %, {} operation{}, "
      "{})\n",
      duration(gpu), duration(kernel_ns), pct(kernel_ns), kernel_count,
      kernel_count == 1 ? "" : "s", duration(copy_ns), pct(copy_ns), copy_count,
      copy_count == 1 ? "" : "s", view::bytes(copy_bytes));
  if (!kernels.empty()) {
    out += fmt::format("  {:<52} {:>8} {:>10} {:>10} {:>7}\n", "kernel", "calls", "total", "avg",
                       "share");
    for (const auto& k : kernels)
      out += fmt::format("  {:<52} {:>8} {:>10} {:>10} {:>6.1f}%\n", detail::clip(k.name, 52),
                         k.calls, duration(k.total_ns),
                         duration(k.calls ? k.total_ns / static_cast<std::int64_t>(k.calls) : 0),
                         k.share_pct);
  }
  if (!regions.empty()) {
    out += fmt::format("  {:<52} {:>10} {:>10} {:>7}\n", "GPU time by span", "compute", "copies",
                       "share");
    for (const auto& g : regions)
      out += fmt::format("  {:<52} {:>10} {:>10} {:>6.1f}%\n", detail::clip(g.path, 52),
                         duration(g.kernel_ns), duration(g.copy_ns), g.share_pct);
  }
  return out;
}

std::string ProfileReport::report() const {
  using detail::duration;
  std::string out;
  bool timed = wall.count > 0;
  // profile() on a host without a GPU: its times and stacks, and one line for the GPU.
  bool cpu_only = timed && device.empty() && kernels.empty() && total_memcpy_ns == 0;
  if (timed) {
    out += fmt::format("{} iteration{} timed", wall.count, wall.count == 1 ? "" : "s");
    if (warmup)
      out += fmt::format(" after {} warm-up run{} (not counted)", warmup, warmup == 1 ? "" : "s");
    out += "\n";
    out += fmt::format("  wall per iteration: min {} · median {} · mean {}", duration(wall.min_ns),
                       duration(wall.median_ns), duration(wall.mean_ns));
    if (wall.count > 1) out += fmt::format(" ± {}", duration(wall.stdev_ns));
    out += fmt::format(" · max {}\n", duration(wall.max_ns));
    out += fmt::format("  CPU per iteration:  min {} · median {}", duration(cpu.min_ns),
                       duration(cpu.median_ns));
    if (wall.median_ns > 0)
      out += fmt::format(" ({:.1f} CPU-seconds per second of wall time)",
                         static_cast<double>(cpu.median_ns) / static_cast<double>(wall.median_ns));
    out += "\n";
  }
  if (cpu_only) {
    out += "no GPU on this host: the times and functions are the CPU's\n";
  } else {
    std::string verdict = bound == Bound::memory    ? "MEMORY-bound"
                          : bound == Bound::compute ? "COMPUTE-bound"
                                                    : "UNKNOWN";
    out += fmt::format("{} over {} iteration{}", verdict, iterations, iterations == 1 ? "" : "s");
    if (!device.empty()) out += " on " + device;
    out += ": " + bound_reason + "\n";
  }
  if (!dominant_kernel.empty())
    out += fmt::format("dominant kernel: {} ({:.1f} % of kernel time)\n",
                       detail::clip(dominant_kernel, 80), dominant_share_pct);
  if (!cpu_only)
    out +=
        fmt::format("kernels {} · copies {}", duration(total_kernel_ns), duration(total_memcpy_ns));
  if (total_memcpy_ns > 0) {
    out += fmt::format(" · copy bandwidth {:.1f} GB/s", achieved_bandwidth_gbps);
    if (peak_bandwidth_gbps > 0)
      out +=
          fmt::format(" ({:.0f} % of the {:.0f} GB/s peak)",
                      100.0 * achieved_bandwidth_gbps / peak_bandwidth_gbps, peak_bandwidth_gbps);
  }
  if (!cpu_only) out += "\n";
  if (peak_memory_bytes)
    out += fmt::format("device memory{}: peak {}, mean {}\n",
                       memory_scope == "device"
                           ? " (whole GPU: the driver gave no figure for this process)"
                           : " (this process)",
                       view::bytes(peak_memory_bytes), view::bytes(avg_memory_bytes));
  if (!kernels.empty()) {
    out += fmt::format("{:<44} {:>7} {:>10} {:>6} {:>15} {:>12} {:>4} {:>7} {:>5}\n", "kernel",
                       "calls", "total", "share", "grid", "block", "regs", "shared", "occ");
    for (const auto& k : kernels)
      out += fmt::format("{:<44} {:>7} {:>10} {:>5.1f}% {:>15} {:>12} {:>4} {:>7} {:>4.0f}%\n",
                         detail::clip(k.name, 44), k.calls, duration(k.total_ns), k.share_pct,
                         dims(k.shape.grid), dims(k.shape.block), k.shape.registers_per_thread,
                         view::bytes(k.shape.shared_bytes), k.occupancy_pct);
  }
  if (!hot_functions.empty()) {
    out += fmt::format("hot functions ({} stack samples, by self time):\n", stack_samples);
    out += fmt::format("  {:>7} {:>7}  {:<56}  {}\n", "self %", "total %", "function", "module");
    for (const auto& f : hot_functions) {
      std::string where = f.module;
      if (f.module == "[python]" && !f.file.empty()) where = detail::short_python_file(f.file);
      out += fmt::format("  {:>6.1f}% {:>6.1f}%  {:<56}  {}\n", f.self_pct, f.total_pct,
                         detail::clip(f.function, 56), where);
    }
  }
  for (const auto& u : unavailable)
    out += (u.rfind("stacks", 0) == 0 ? "not sampled: " : "not traced: ") + u + "\n";
  return out;
}

}  // namespace mainboard
