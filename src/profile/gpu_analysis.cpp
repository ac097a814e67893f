// What the GPU activity of a Profile says: kernels ranked, GPU time attributed to spans, launch
// efficiency and counter bottlenecks. Pure functions of the evidence, like analysis.cpp.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "mainboard/profile.hpp"
#include "profile/text_util.hpp"

namespace mainboard {

std::string KernelCounters::limiter() const {
  if (!sm_throughput_pct && !dram_throughput_pct) return "";
  double sm = sm_throughput_pct.value_or(0), dram = dram_throughput_pct.value_or(0);
  if (sm < 60 && dram < 60) return "latency";
  return dram >= sm ? "memory" : "compute";
}

namespace {

const std::string& activity_name(const Profile& p, const GpuActivity& a) {
  static const std::string unknown = "(unnamed)";
  return a.name < p.activity_names.size() ? p.activity_names[a.name] : unknown;
}

bool is_copy(const GpuActivity& a) {
  return a.kind == GpuActivity::Kind::memcpy || a.kind == GpuActivity::Kind::memset;
}

}  // namespace

std::vector<KernelSummary> Profile::kernel_summaries() const {
  std::unordered_map<std::uint32_t, KernelSummary> by_name;
  std::int64_t all = 0;
  for (const auto& a : activities) {
    if (a.kind != GpuActivity::Kind::kernel) continue;
    auto d = a.duration_ns();
    auto [it, fresh] = by_name.try_emplace(a.name);
    auto& k = it->second;
    if (fresh) {
      k.name = activity_name(*this, a);
      k.min_ns = d;
    }
    ++k.calls;
    k.total_ns += d;
    k.min_ns = std::min(k.min_ns, d);
    k.max_ns = std::max(k.max_ns, d);
    // Activities are by start time: the last launch seen sets the shape.
    k.shape = {a.grid, a.block, a.registers_per_thread,
               a.static_shared_bytes + a.dynamic_shared_bytes};
    all += d;
  }
  std::vector<KernelSummary> out;
  out.reserve(by_name.size());
  for (auto& [_, k] : by_name) {
    k.share_pct =
        all > 0 ? 100.0 * static_cast<double>(k.total_ns) / static_cast<double>(all) : 0.0;
    out.push_back(std::move(k));
  }
  std::sort(out.begin(), out.end(), [](const KernelSummary& a, const KernelSummary& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  return out;
}

TraceReport Profile::trace_report(std::size_t top) const {
  TraceReport r;
  for (const auto& a : activities) {
    if (a.kind == GpuActivity::Kind::kernel) {
      r.kernel_ns += a.duration_ns();
      ++r.kernel_count;
    } else if (is_copy(a)) {
      r.copy_ns += a.duration_ns();
      ++r.copy_count;
      r.copy_bytes += a.bytes;
    }
  }
  r.kernels = kernel_summaries();
  if (r.kernels.size() > top) r.kernels.resize(top);

  // Attribution: sweep span boundaries and activity starts in time order, keeping the open spans
  // ordered by (depth, start); the innermost is the last. Ends sort before starts at the same
  // instant, so a span [a, b) does not hold an activity that starts at b.
  enum Type { kEnd = 0, kStart = 1, kActivity = 2 };
  std::vector<std::tuple<std::int64_t, int, std::size_t>> points;
  points.reserve(spans.size() * 2 + activities.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    points.emplace_back(spans[i].start_ns, kStart, i);
    points.emplace_back(spans[i].end_ns, kEnd, i);
  }
  for (std::size_t i = 0; i < activities.size(); ++i)
    if (activities[i].occupies_device()) points.emplace_back(activities[i].start_ns, kActivity, i);
  std::sort(points.begin(), points.end());
  std::vector<std::size_t> depth(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i)
    depth[i] = detail::path_depth(paths[i]);
  std::set<std::tuple<std::size_t, std::int64_t, std::size_t>> open;  // depth, start, span index
  std::map<std::string, RegionGpuTime> regions;
  static const std::string outside = "(outside spans)";
  for (const auto& [t, type, i] : points) {
    if (type == kStart || type == kEnd) {
      const auto& e = spans[i];
      auto key = std::make_tuple(e.path < depth.size() ? depth[e.path] : 0, e.start_ns, i);
      if (type == kStart)
        open.insert(key);
      else
        open.erase(key);
      continue;
    }
    const auto& a = activities[i];
    const std::string& path =
        open.empty() ? outside : paths[spans[std::get<2>(*open.rbegin())].path];
    auto& g = regions[path];
    g.path = path;
    ++g.activities;
    (a.kind == GpuActivity::Kind::kernel ? g.kernel_ns : g.copy_ns) += a.duration_ns();
  }
  auto gpu_ns = r.kernel_ns + r.copy_ns;
  for (auto& [_, g] : regions) {
    g.share_pct = gpu_ns > 0 ? 100.0 * static_cast<double>(g.kernel_ns + g.copy_ns) /
                                   static_cast<double>(gpu_ns)
                             : 0.0;
    r.regions.push_back(std::move(g));
  }
  std::stable_sort(r.regions.begin(), r.regions.end(),
                   [](const RegionGpuTime& a, const RegionGpuTime& b) {
                     return a.kernel_ns + a.copy_ns > b.kernel_ns + b.copy_ns;
                   });
  if (r.regions.size() > top) r.regions.resize(top);
  return r;
}

std::vector<KernelEfficiency> Profile::efficiency(const EfficiencyOptions& o) const {
  std::vector<KernelEfficiency> out;
  std::uint32_t sm_count = o.sm_count;
  if (sm_count == 0 && machine && !machine->gpus.empty()) {
    // The GPU most of the kernels ran on, as the machine snapshot describes it.
    std::map<std::uint32_t, std::size_t> launches;
    for (const auto& a : activities)
      if (a.kind == GpuActivity::Kind::kernel) ++launches[a.device];
    std::uint32_t device = 0;
    std::size_t most = 0;
    for (const auto& [d, n] : launches)
      if (n > most) {
        most = n;
        device = d;
      }
    for (const auto& g : machine->gpus)
      if (g.info.index == device && g.info.sm_count) sm_count = *g.info.sm_count;
  }
  std::uint64_t slots = std::uint64_t{sm_count} * std::max<std::uint32_t>(o.blocks_per_sm, 1);
  for (auto& summary : kernel_summaries()) {  // most time first
    if (out.size() >= o.top) break;
    KernelEfficiency k;
    static_cast<KernelSummary&>(k) = std::move(summary);
    auto blocks = k.shape.blocks();
    if (slots > 0 && blocks > 0) {
      k.waves = static_cast<double>(blocks) / static_cast<double>(slots);
      auto rest = blocks % slots;
      k.last_wave_fill_pct =
          rest == 0 ? 100.0 : 100.0 * static_cast<double>(rest) / static_cast<double>(slots);
    }
    if (o.bytes_moved > 0 && k.avg_ns() > 0) {
      k.achieved_gbs =
          static_cast<double>(o.bytes_moved) / static_cast<double>(k.avg_ns());  // bytes/ns = GB/s
      if (o.peak_bandwidth_gbs > 0)
        k.bandwidth_pct = 100.0 * *k.achieved_gbs / o.peak_bandwidth_gbs;
    }
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<KernelCounters> Profile::counter_bottlenecks(std::size_t top) const {
  auto out = counters;
  std::stable_sort(out.begin(), out.end(), [](const KernelCounters& a, const KernelCounters& b) {
    return a.total_ns > b.total_ns;
  });
  if (out.size() > top) out.resize(top);
  return out;
}

}  // namespace mainboard
