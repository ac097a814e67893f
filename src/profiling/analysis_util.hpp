#pragma once

// Small formatting helpers shared by the profile analyses and reports.

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "view/format.hpp"

namespace mainboard::detail {

/// "812 ns", "3.4 µs", "12.05 ms", "1.20 s".
inline std::string duration(std::int64_t ns) {
  if (ns < 0) return "-" + duration(-ns);
  double v = static_cast<double>(ns);
  if (v < 1e3) return fmt::format("{} ns", ns);
  if (v < 1e6) return fmt::format("{:.1f} µs", v / 1e3);
  if (v < 1e9) return fmt::format("{:.2f} ms", v / 1e6);
  return fmt::format("{:.2f} s", v / 1e9);
}

/// Nesting depth of a span path: "a" is 0, "a/b" is 1.
inline std::size_t path_depth(const std::string& path) {
  return static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
}

inline std::string byte_count(std::uint64_t bytes) {
  return view::bytes(bytes);
}

/// At most `width` characters (bytes), with an ellipsis when cut: kernel names can be very long.
inline std::string clip(const std::string& s, std::size_t width) {
  if (s.size() <= width) return s;
  std::size_t cut = width > 3 ? width - 3 : 0;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
    --cut;  // whole UTF-8 characters
  return s.substr(0, cut) + "...";
}

}  // namespace mainboard::detail
