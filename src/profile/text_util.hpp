#pragma once

// Small text helpers of the profile layer: the durations and names that analyses put into their
// verdicts, and that the text reports (view) print. No formatting library: this layer is part of
// the lean span library.

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <system_error>

namespace mainboard::detail {

/// A number with `decimals` digits after the point ("42", "12.5"), always with a point whatever
/// locale the host program set (to_chars ignores it; printf would not).
inline std::string fixed(double v, int decimals) {
  char text[352];
  auto [end, ec] = std::to_chars(text, text + sizeof text, v, std::chars_format::fixed, decimals);
  return ec == std::errc() ? std::string(text, end) : std::string("?");
}

/// "812 ns", "3.4 µs", "12.05 ms", "1.20 s".
inline std::string duration(std::int64_t ns) {
  if (ns < 0) return "-" + duration(-ns);
  double v = static_cast<double>(ns);
  if (v < 1e3) return std::to_string(ns) + " ns";
  if (v < 1e6) return fixed(v / 1e3, 1) + " µs";
  if (v < 1e9) return fixed(v / 1e6, 2) + " ms";
  return fixed(v / 1e9, 2) + " s";
}

/// A Python file as py-spy names it: the part past site-packages, dist-packages or the standard
/// library's directory ("torch/nn/modules/module.py", "threading.py"), else its base name.
inline std::string short_python_file(const std::string& path) {
  for (std::string marker : {"/site-packages/", "/dist-packages/"})
    if (auto at = path.rfind(marker); at != std::string::npos)
      return path.substr(at + marker.size());
  // The standard library: ".../lib/python3.11/threading.py".
  if (auto at = path.rfind("/lib/python"); at != std::string::npos)
    if (auto slash = path.find('/', at + 11); slash != std::string::npos)
      return path.substr(slash + 1);
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// Nesting depth of a span path: "a" is 0, "a/b" is 1.
inline std::size_t path_depth(const std::string& path) {
  return static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
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
