// Readiness::text: the verdict first, then each finding with what was read, why it matters and
// the fix, most severe first.
#include <fmt/color.h>
#include <fmt/format.h>
#include <algorithm>

#include "core/text.hpp"
#include "mainboard/check.hpp"

namespace mainboard {

std::string Readiness::text(bool color) const {
  auto paint = [&](const std::string& s, fmt::text_style style) {
    return color ? fmt::format(style, "{}", s) : s;
  };
  auto blockers = count(Severity::blocker), warnings = count(Severity::warning);
  auto plural = [](std::size_t n, const char* what) {
    return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
  };
  std::string verdict =
      ready() ? paint("READY", fmt::fg(fmt::terminal_color::green) | fmt::emphasis::bold)
              : paint("NOT READY", fmt::fg(fmt::terminal_color::red) | fmt::emphasis::bold);
  std::string out = fmt::format("{}{}: {} ({}, {}{})\n", hostname, hostname.empty() ? "node" : "",
                                verdict, plural(blockers, "blocker"), plural(warnings, "warning"),
                                strict ? ", strict: warnings count" : "");
  // The id column fits the longest id (memory.swap.unknown), 17 at least.
  std::size_t w = 17;
  for (const auto& f : findings)
    w = std::max(w, f.id.size());
  for (const auto& f : findings) {
    const char* mark = f.severity == Severity::blocker   ? "✗"
                       : f.severity == Severity::warning ? "!"
                                                         : "·";
    auto style = f.severity == Severity::blocker   ? fmt::fg(fmt::terminal_color::red)
                 : f.severity == Severity::warning ? fmt::fg(fmt::terminal_color::yellow)
                                                   : fmt::text_style{};
    out += fmt::format("{} {:<7} {:<{}} {}\n", paint(mark, style), core::terminal_text(f.subject),
                       f.id, w, core::terminal_text(f.reading));
    out += fmt::format("  {:<7} {:<{}} {}\n", "", "why", w, f.why);
    if (!f.fix.empty()) out += fmt::format("  {:<7} {:<{}} {}\n", "", "fix", w, f.fix);
  }
  if (findings.empty()) out += "nothing to report: every rule passed\n";
  return out;
}

}  // namespace mainboard
