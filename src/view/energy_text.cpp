#include "view/energy_text.hpp"

#include <fmt/format.h>

#include "core/text.hpp"

namespace mainboard::view {

std::string energy_text(const RegionEnergy& e) {
  std::string why;
  for (const auto& u : e.unavailable)
    why += (why.empty() ? "" : "; ") + core::terminal_text(u);
  if (!e.total_j)
    return "unavailable (" + (why.empty() ? std::string("nothing to read") : why) + ")";
  std::string parts;
  for (const auto& d : e.domains) {
    std::string name = core::terminal_text(d.domain);  // cpu → CPU, gpu0 → GPU0
    for (char& c : name)
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    parts += fmt::format("{}{} {:.1f} J", parts.empty() ? "" : ", ", name, d.joules);
  }
  std::string out = fmt::format("{:.1f} J ({})", *e.total_j, parts);
  if (e.mean_w) out += fmt::format(" · {:.1f} W mean", *e.mean_w);
  if (!why.empty()) out += "; not read: " + why;
  return out;
}

}  // namespace mainboard::view
