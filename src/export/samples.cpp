// The sample exports of a profile: folded stacks (flamegraph.pl, inferno) and a speedscope file.
#include <map>
#include <nlohmann/json.hpp>

#include "mainboard/profile.hpp"

namespace mainboard {

namespace {

std::string frame_label(const StackFrame& f) {
  std::string name = f.function;
  for (auto& c : name)
    if (c == ';') c = ':';  // the folded format's separator
  return name;
}

std::string thread_label(const Profile& p, std::uint32_t thread) {
  if (thread >= p.threads.size()) return "thread " + std::to_string(thread);
  const auto& t = p.threads[thread];
  std::string name = t.name.empty() ? "thread" : t.name;
  for (auto& c : name)
    if (c == ';') c = ':';
  return name + "-" + std::to_string(t.tid);
}

}  // namespace

std::string Profile::folded(bool per_process) const {
  // The root: the command's name (else the first thread's), or each thread of its own.
  std::string root = command;
  if (root.empty()) root = threads.empty() || threads[0].name.empty() ? "program" : threads[0].name;
  for (auto& c : root)
    if (c == ';' || c == ' ') c = '_';
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> counts;  // (thread, stack)
  for (const auto& s : samples)
    ++counts[{s.thread, s.stack}];
  std::map<std::string, std::uint64_t> lines;  // stacks that read the same are one line
  for (const auto& [key, n] : counts) {
    if (key.second >= stacks.size()) continue;
    std::string line = per_process ? thread_label(*this, key.first) : root;
    const auto& stack = stacks[key.second];
    for (auto it = stack.rbegin(); it != stack.rend(); ++it)
      if (*it < frames.size()) line += ";" + frame_label(frames[*it]);
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
  // One sampled profile per thread, in thread order; each sample weighs one sampling period.
  double period_ns = sample_hz ? 1e9 / sample_hz : 1.0;
  std::map<std::uint32_t, std::vector<const StackSample*>> by_thread;
  for (const auto& s : samples)
    by_thread[s.thread].push_back(&s);
  nlohmann::json profiles = nlohmann::json::array();
  for (const auto& [thread, list] : by_thread) {
    nlohmann::json stacks_json = nlohmann::json::array(), weights = nlohmann::json::array();
    for (const auto* s : list) {
      nlohmann::json stack = nlohmann::json::array();
      if (s->stack < stacks.size())
        for (auto it = stacks[s->stack].rbegin(); it != stacks[s->stack].rend(); ++it)
          stack.push_back(*it);
      stacks_json.push_back(std::move(stack));
      weights.push_back(period_ns);
    }
    profiles.push_back({{"type", "sampled"},
                        {"name", thread_label(*this, thread)},
                        {"unit", "nanoseconds"},
                        {"startValue", 0},
                        {"endValue", static_cast<double>(list.size()) * period_ns},
                        {"samples", std::move(stacks_json)},
                        {"weights", std::move(weights)}});
  }
  nlohmann::json file = {{"$schema", "https://www.speedscope.app/file-format-schema.json"},
                         {"shared", {{"frames", std::move(shared_frames)}}},
                         {"profiles", std::move(profiles)},
                         {"name", "mainboard profile of pid " + std::to_string(pid)},
                         {"activeProfileIndex", 0},
                         {"exporter", "mainboard"}};
  return file.dump() + "\n";
}

}  // namespace mainboard
