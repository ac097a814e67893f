// What stack samples say: hot functions and stacks, folded stacks and the speedscope file. Pure
// functions of the evidence.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "mainboard/profile.hpp"

namespace mainboard {

namespace {

/// How many samples each stack has.
std::vector<std::uint64_t> stack_counts(const Profile& p) {
  std::vector<std::uint64_t> n(p.stacks.size(), 0);
  for (const auto& s : p.samples)
    if (s.stack < n.size()) ++n[s.stack];
  return n;
}

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

std::vector<FunctionStat> Profile::hot_functions(std::size_t top) const {
  auto counts = stack_counts(*this);
  std::uint64_t all = samples.size();
  // One key per (function, module): frames of one function at different lines are one function.
  std::map<std::pair<std::string, std::string>, FunctionStat> by_function;
  std::vector<std::pair<std::string, std::string>> key(frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i)
    key[i] = {frames[i].function, frames[i].module};
  for (std::size_t s = 0; s < stacks.size(); ++s) {
    if (counts[s] == 0 || stacks[s].empty()) continue;
    std::set<std::pair<std::string, std::string>> seen;
    for (std::size_t d = 0; d < stacks[s].size(); ++d) {
      auto f = stacks[s][d];
      if (f >= frames.size()) continue;
      auto& stat = by_function[key[f]];
      if (d == 0) stat.self_samples += counts[s];
      if (seen.insert(key[f]).second) stat.total_samples += counts[s];  // recursion counts once
    }
  }
  std::vector<FunctionStat> out;
  for (auto& [k, stat] : by_function) {
    stat.function = k.first;
    stat.module = k.second;
    if (all) {
      stat.self_pct = 100.0 * static_cast<double>(stat.self_samples) / static_cast<double>(all);
      stat.total_pct = 100.0 * static_cast<double>(stat.total_samples) / static_cast<double>(all);
    }
    out.push_back(std::move(stat));
  }
  std::sort(out.begin(), out.end(), [](const FunctionStat& a, const FunctionStat& b) {
    if (a.self_samples != b.self_samples) return a.self_samples > b.self_samples;
    if (a.total_samples != b.total_samples) return a.total_samples > b.total_samples;
    return a.function < b.function;
  });
  if (out.size() > top) out.resize(top);
  return out;
}

std::vector<StackStat> Profile::hot_stacks(std::size_t top) const {
  // Stacks that differ only in addresses (another line of the same function) read the same to a
  // user: they are one row.
  auto counts = stack_counts(*this);
  std::map<std::vector<std::string>, std::uint64_t> by_names;
  for (std::size_t s = 0; s < stacks.size(); ++s) {
    if (counts[s] == 0) continue;
    std::vector<std::string> names;
    for (auto it = stacks[s].rbegin(); it != stacks[s].rend(); ++it)
      if (*it < frames.size()) names.push_back(frames[*it].function);
    by_names[std::move(names)] += counts[s];
  }
  std::vector<StackStat> out;
  out.reserve(by_names.size());
  for (auto& [names, n] : by_names) {
    StackStat st;
    st.frames = names;
    st.samples = n;
    st.pct = samples.empty() ? 0.0
                             : 100.0 * static_cast<double>(n) / static_cast<double>(samples.size());
    out.push_back(std::move(st));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const StackStat& a, const StackStat& b) { return a.samples > b.samples; });
  if (out.size() > top) out.resize(top);
  return out;
}

std::string Profile::folded() const {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> counts;  // (thread, stack)
  for (const auto& s : samples)
    ++counts[{s.thread, s.stack}];
  std::map<std::string, std::uint64_t> lines;  // stacks that read the same are one line
  for (const auto& [key, n] : counts) {
    if (key.second >= stacks.size()) continue;
    std::string line = thread_label(*this, key.first);
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
                         {"name", fmt::format("mainboard profile of pid {}", pid)},
                         {"activeProfileIndex", 0},
                         {"exporter", "mainboard"}};
  return file.dump() + "\n";
}

}  // namespace mainboard
