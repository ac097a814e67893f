#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mainboard::view {

/// 1536 → "1.5 KiB", 0 → "0 B": binary units, three significant digits.
std::string bytes(std::uint64_t value);
/// "12.0 / 80.0 GiB": used and total sharing one unit where they can.
std::string capacity_pair(std::uint64_t used, std::uint64_t total);
std::string mhz(double value);
std::string percent(double value);
/// A count and its noun: "1 recovery", "3 recoveries".
std::string plural(std::uint64_t n, const char* one, const char* many);
/// The parts that are not empty, joined by `sep`.
std::string join(const std::vector<std::string>& parts, const char* sep = " · ");

/// Columns on screen: every glyph we draw (box drawing, ·, °, ×, …, ▶, █, ░) takes one, so a
/// string's width is its code points, colour sequences (ESC [ … m) not counted.
std::size_t width_of(std::string_view s);
/// `s` in exactly `width` columns: padded with spaces, or cut and ended in "…" (a cut string
/// that was coloured ends with the colour reset).
std::string fit(std::string_view s, std::size_t width);
/// `s` cut to at most `width` columns ("…" where cut), never padded.
std::string clip(std::string_view s, std::size_t width);
std::string repeat(const char* glyph, std::size_t n);
/// A gauge of a fraction, ten blocks unless said: "███░░░░░░░".
std::string gauge(double fraction, int blocks = 10);

/// Terminal styling that is a no-op when colour is off.
struct Style {
  bool color = false;
  std::string label(const std::string& s) const;  // bold cyan
  std::string dim(const std::string& s) const;
  std::string good(const std::string& s) const;  // green
  std::string warn(const std::string& s) const;  // yellow
  std::string bold(const std::string& s) const;
};

/// Whether to colour: `mode` is auto, always or never; auto means stdout is a terminal, NO_COLOR
/// is unset and TERM is not "dumb".
bool want_color(const std::string& mode, int fd);

}  // namespace mainboard::view
