#include "mainboard/profile.hpp"

#include <algorithm>
#include <map>

namespace mainboard {

void Profile::merge(const Profile& from) {
  Profile& into = *this;
  bool empty =
      into.paths.empty() && into.threads.empty() && into.activities.empty() && into.samples.empty();
  if (empty || from.start_ns < into.start_ns) into.start_ns = from.start_ns;
  into.end_ns = std::max(into.end_ns, from.end_ns);
  if (!into.pid) into.pid = from.pid;

  // Threads, joined by tid.
  std::vector<std::uint32_t> thread(from.threads.size());
  for (std::size_t i = 0; i < from.threads.size(); ++i) {
    const auto& t = from.threads[i];
    auto it = std::find_if(into.threads.begin(), into.threads.end(),
                           [&](const ThreadInfo& x) { return t.tid != 0 && x.tid == t.tid; });
    if (it == into.threads.end()) {
      ThreadInfo copy = t;
      copy.index = static_cast<std::uint32_t>(into.threads.size());
      into.threads.push_back(copy);
      thread[i] = copy.index;
    } else {
      if (it->name.empty()) it->name = t.name;
      thread[i] = it->index;
    }
  }

  // Regions, joined by path.
  std::map<std::string, std::uint32_t> path_index;
  for (std::size_t i = 0; i < into.paths.size(); ++i)
    path_index[into.paths[i]] = static_cast<std::uint32_t>(i);
  std::vector<std::uint32_t> path(from.paths.size());
  for (std::size_t i = 0; i < from.paths.size(); ++i) {
    auto [it, fresh] =
        path_index.emplace(from.paths[i], static_cast<std::uint32_t>(into.paths.size()));
    path[i] = it->second;
    const auto& src = from.span_stats[i];
    if (fresh) {
      into.paths.push_back(from.paths[i]);
      into.span_stats.push_back(src);
      continue;
    }
    auto& dst = into.span_stats[it->second];
    dst.min_ns = dst.calls ? std::min(dst.min_ns, src.min_ns) : src.min_ns;
    dst.max_ns = std::max(dst.max_ns, src.max_ns);
    dst.calls += src.calls;
    dst.total_ns += src.total_ns;
    dst.self_ns += src.self_ns;
  }
  for (auto e : from.spans) {
    e.path = path[e.path];
    e.thread = thread[e.thread];
    into.spans.push_back(e);
  }
  std::stable_sort(into.spans.begin(), into.spans.end(),
                   [](const SpanEvent& a, const SpanEvent& b) { return a.start_ns < b.start_ns; });
  into.dropped_spans += from.dropped_spans;
  into.device_samples.insert(into.device_samples.end(), from.device_samples.begin(),
                             from.device_samples.end());
  std::stable_sort(into.device_samples.begin(), into.device_samples.end(),
                   [](const DeviceSample& a, const DeviceSample& b) { return a.t_ns < b.t_ns; });

  // GPU activity.
  std::map<std::string, std::uint32_t> name_index;
  for (std::size_t i = 0; i < into.activity_names.size(); ++i)
    name_index[into.activity_names[i]] = static_cast<std::uint32_t>(i);
  std::vector<std::uint32_t> name(from.activity_names.size());
  for (std::size_t i = 0; i < from.activity_names.size(); ++i) {
    auto [it, fresh] = name_index.emplace(from.activity_names[i],
                                          static_cast<std::uint32_t>(into.activity_names.size()));
    if (fresh) into.activity_names.push_back(from.activity_names[i]);
    name[i] = it->second;
  }
  for (auto a : from.activities) {
    a.name = name[a.name];
    into.activities.push_back(a);
  }
  std::stable_sort(
      into.activities.begin(), into.activities.end(),
      [](const GpuActivity& a, const GpuActivity& b) { return a.start_ns < b.start_ns; });
  into.dropped_activities += from.dropped_activities;
  into.counters.insert(into.counters.end(), from.counters.begin(), from.counters.end());

  // Stack samples.
  auto frame_base = static_cast<std::uint32_t>(into.frames.size());
  auto stack_base = static_cast<std::uint32_t>(into.stacks.size());
  into.frames.insert(into.frames.end(), from.frames.begin(), from.frames.end());
  for (auto s : from.stacks) {
    for (auto& f : s)
      f += frame_base;
    into.stacks.push_back(std::move(s));
  }
  for (auto x : from.samples) {
    x.stack += stack_base;
    x.thread = thread[x.thread];
    into.samples.push_back(x);
  }
  std::stable_sort(into.samples.begin(), into.samples.end(),
                   [](const StackSample& a, const StackSample& b) { return a.t_ns < b.t_ns; });
  if (!into.sample_hz) into.sample_hz = from.sample_hz;
  into.lost_samples += from.lost_samples;

  for (const auto& u : from.unavailable)
    if (std::find(into.unavailable.begin(), into.unavailable.end(), u) == into.unavailable.end())
      into.unavailable.push_back(u);
  // Unnamed auto-instrumented functions keep the maps that name them (profiles read through
  // mainboard::mainboard arrive named, with none).
  for (const auto& line : from.function_maps)
    if (std::find(into.function_maps.begin(), into.function_maps.end(), line) ==
        into.function_maps.end())
      into.function_maps.push_back(line);
  if (!into.machine) into.machine = from.machine;
}

}  // namespace mainboard
