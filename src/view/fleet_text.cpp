// Fleet::text: one block per group of alike nodes, then every difference in words, then the
// nodes that gave no snapshot.
#include <fmt/format.h>

#include "mainboard/fleet.hpp"
#include "view/format.hpp"

namespace mainboard {

namespace {

/// "n1, n2, n3" (at most eight names, then how many more).
std::string names(const std::vector<std::string>& list) {
  std::vector<std::string> shown(list.begin(),
                                 list.begin() + std::min<std::size_t>(list.size(), 8));
  auto text = view::join(shown, ", ");
  if (list.size() > shown.size()) text += fmt::format(" and {} more", list.size() - shown.size());
  return text;
}

}  // namespace

std::string Fleet::readiness_text(bool strict) const {
  auto all = readiness(strict);
  std::size_t not_ready = 0;
  std::string body;
  for (const auto& [node, r] : all) {
    if (r.ready()) continue;
    ++not_ready;
    body += node + ": NOT READY\n";
    for (const auto& f : r.findings)
      if (f.severity == Severity::blocker || (strict && f.severity == Severity::warning))
        body += fmt::format("  {:<7} {:<17} {}\n", f.subject, f.id, f.reading);
  }
  std::string out = fmt::format("{} of {} node{} ready{}\n", all.size() - not_ready, all.size(),
                                all.size() == 1 ? "" : "s", strict ? " (strict)" : "");
  if (!body.empty()) out += "\n" + body;
  for (const auto& n : nodes)
    if (!n.snapshot) out += fmt::format("{}: no answer: {}\n", n.name, n.error);
  return out;
}

std::string Fleet::text() const {
  std::size_t answered = 0;
  for (const auto& n : nodes)
    answered += n.snapshot ? 1 : 0;
  auto gs = groups();
  std::string out =
      fmt::format("{} node{}, {} answered, {} group{} of alike nodes\n", nodes.size(),
                  nodes.size() == 1 ? "" : "s", answered, gs.size(), gs.size() == 1 ? "" : "s");
  for (const auto& g : gs) {
    out += fmt::format("\n{} node{}: {}\n", g.nodes.size(), g.nodes.size() == 1 ? "" : "s",
                       names(g.nodes));
    for (const auto& [trait, value] : g.traits)
      out += fmt::format("  {:<11} {}\n", trait, value);
  }
  auto drift = differences();
  if (!drift.empty()) {
    out += "\nDifferences\n";
    // "n7: driver 550.54.15, the other 31 have 560.35.03"
    for (const auto& d : drift)
      out += fmt::format("  {}: {} {}, {}{} {} {}\n", d.node, d.trait, d.value,
                         d.with_common + 1 == answered ? "the other " : "", d.with_common,
                         d.with_common == 1 ? "has" : "have", d.common);
  }
  bool failed = false;
  for (const auto& n : nodes) {
    if (n.snapshot) continue;
    if (!failed) out += "\nNo answer\n";
    failed = true;
    out += fmt::format("  {}: {}\n", n.name, n.error);
  }
  return out;
}

}  // namespace mainboard
