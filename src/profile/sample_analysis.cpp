// What stack samples say: hot functions and stacks. Pure functions of the evidence (the folded
// and speedscope exports are in export/).
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

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

}  // namespace

std::vector<FunctionStat> Profile::hot_functions(std::size_t top, FunctionOrder by) const {
  auto counts = stack_counts(*this);
  std::uint64_t all = samples.size();
  // One key per (function, module, and for Python the file): frames of one function at
  // different lines are one function.
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, FunctionStat> by_function;
  std::vector<Key> key(frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i)
    key[i] = {frames[i].function, frames[i].module,
              frames[i].module == "[python]" ? frames[i].file : std::string()};
  for (std::size_t s = 0; s < stacks.size(); ++s) {
    if (counts[s] == 0 || stacks[s].empty()) continue;
    std::set<Key> seen;
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
    stat.function = std::get<0>(k);
    stat.module = std::get<1>(k);
    stat.file = std::get<2>(k);
    if (all) {
      stat.self_pct = 100.0 * static_cast<double>(stat.self_samples) / static_cast<double>(all);
      stat.total_pct = 100.0 * static_cast<double>(stat.total_samples) / static_cast<double>(all);
    }
    out.push_back(std::move(stat));
  }
  std::sort(out.begin(), out.end(), [by](const FunctionStat& a, const FunctionStat& b) {
    auto first =
        by == FunctionOrder::self ? &FunctionStat::self_samples : &FunctionStat::total_samples;
    auto second =
        by == FunctionOrder::self ? &FunctionStat::total_samples : &FunctionStat::self_samples;
    if (a.*first != b.*first) return a.*first > b.*first;
    if (a.*second != b.*second) return a.*second > b.*second;
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

}  // namespace mainboard
