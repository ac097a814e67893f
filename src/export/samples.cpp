// The sample exports of a profile: folded stacks (flamegraph.pl, inferno) and a speedscope file.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "export/flame.hpp"
#include "mainboard/profile.hpp"

namespace mainboard {

std::string Profile::folded(bool per_thread) const {
  return folded(per_thread ? FlameRoots::thread : FlameRoots::command);
}

std::string Profile::folded(FlameRoots roots) const {
  return folded(roots, true);
}

std::string Profile::folded(FlameRoots roots, bool with_lines) const {
  // The root: the command's name (else the first thread's), or each thread or process its own.
  const std::string root = detail::flame_root_name(*this);
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> counts;  // (thread, stack)
  for (const auto& s : samples)
    ++counts[{s.thread, s.stack}];
  std::map<std::string, std::uint64_t> lines;  // stacks that read the same are one line
  for (const auto& [key, n] : counts) {
    if (key.second >= stacks.size()) continue;
    std::string line = roots == FlameRoots::thread    ? detail::flame_thread_name(*this, key.first)
                       : roots == FlameRoots::process ? detail::flame_process_name(*this, key.first)
                                                      : root;
    const auto& stack = stacks[key.second];
    for (auto it = stack.rbegin(); it != stack.rend(); ++it)
      if (*it < frames.size())
        line += ";" + detail::folded_field(detail::frame_label(frames[*it], with_lines));
    lines[line] += n;
  }
  std::string out;
  for (const auto& [line, n] : lines)
    out += line + " " + std::to_string(n) + "\n";
  return out;
}

std::string Profile::speedscope_json() const {
  nlohmann::json shared_frames = nlohmann::json::array();
  for (const auto& f : frames) {
    nlohmann::json j = {{"name", f.function.empty() ? "[unknown]" : f.function}};
    if (!f.file.empty())
      j["file"] = f.file;
    else if (!f.module.empty())
      j["file"] = f.module;
    if (f.line) j["line"] = f.line;
    shared_frames.push_back(std::move(j));
  }
  // One evented profile per thread, all on the profile's own time axis (0 = start_ns): each
  // sample holds its stack for one sampling period, so a thread's idle time shows as a gap in
  // speedscope's time-order view, at the same place for every thread.
  const auto period = static_cast<std::int64_t>(sample_hz ? 1e9 / sample_hz : 1e7);
  std::int64_t origin = start_ns, end = end_ns;
  for (const auto& s : samples) {
    origin = std::min(origin, s.t_ns);
    end = std::max(end, s.t_ns + period);
  }
  if (samples.empty()) origin = end = 0;
  std::map<std::uint32_t, std::vector<const StackSample*>> by_thread;
  for (const auto& s : samples)
    by_thread[s.thread].push_back(&s);
  nlohmann::json profiles = nlohmann::json::array();
  std::size_t busiest = 0, most = 0;
  for (const auto& [thread, list] : by_thread) {
    // Opens speedscope on the busiest thread (the main thread on a tie: the first in order).
    if (list.size() > most) {
      most = list.size();
      busiest = profiles.size();
    }
    nlohmann::json events = nlohmann::json::array();
    std::vector<std::uint32_t> open;  // frame indices, root first
    std::int64_t open_until = 0;
    auto close_to = [&](std::size_t depth, std::int64_t at) {
      while (open.size() > depth) {
        events.push_back({{"type", "C"}, {"frame", open.back()}, {"at", at - origin}});
        open.pop_back();
      }
    };
    auto sorted = list;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const StackSample* x, const StackSample* y) { return x->t_ns < y->t_ns; });
    for (const auto* s : sorted) {
      std::vector<std::uint32_t> stack;
      if (s->stack < stacks.size())
        for (auto it = stacks[s->stack].rbegin(); it != stacks[s->stack].rend(); ++it)
          if (*it < frames.size()) stack.push_back(*it);
      std::int64_t at = s->t_ns;
      if (!open.empty() && at > open_until) close_to(0, open_until);  // a gap: idle
      std::size_t same = 0;
      while (same < open.size() && same < stack.size() && open[same] == stack[same])
        ++same;
      close_to(same, at);
      for (std::size_t d = same; d < stack.size(); ++d) {
        events.push_back({{"type", "O"}, {"frame", stack[d]}, {"at", at - origin}});
        open.push_back(stack[d]);
      }
      open_until = at + period;
    }
    close_to(0, open_until);
    profiles.push_back({{"type", "evented"},
                        {"name", detail::flame_thread_name(*this, thread)},
                        {"unit", "nanoseconds"},
                        {"startValue", 0},
                        {"endValue", end - origin},
                        {"events", std::move(events)}});
  }
  nlohmann::json file = {{"$schema", "https://www.speedscope.app/file-format-schema.json"},
                         {"shared", {{"frames", std::move(shared_frames)}}},
                         {"profiles", std::move(profiles)},
                         {"name", "mainboard profile of pid " + std::to_string(pid)},
                         {"activeProfileIndex", busiest},
                         {"exporter", "mainboard"}};
  return file.dump() + "\n";
}

}  // namespace mainboard
