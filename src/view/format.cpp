#include "view/format.hpp"

#include <fmt/color.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>

namespace mainboard::view {

namespace {
constexpr std::array<const char*, 7> kUnits = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

std::size_t unit_for(std::uint64_t value) {
  std::size_t u = 0;
  double v = static_cast<double>(value);
  while (v >= 1024.0 && u + 1 < kUnits.size()) {
    v /= 1024.0;
    ++u;
  }
  return u;
}

std::string scaled(std::uint64_t value, std::size_t unit) {
  double v = static_cast<double>(value);
  for (std::size_t i = 0; i < unit; ++i)
    v /= 1024.0;
  if (unit == 0) return fmt::format("{}", value);
  if (v >= 100) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}
}  // namespace

std::string bytes(std::uint64_t value) {
  auto u = unit_for(value);
  return scaled(value, u) + " " + kUnits[u];
}

std::string capacity_pair(std::uint64_t used, std::uint64_t total) {
  auto u = unit_for(total);
  // Less than one of the total's units (0.32 GiB) reads better in its own (327 MiB).
  if (used > 0 && unit_for(used) < u) return bytes(used) + " / " + bytes(total);
  return scaled(used, u) + " / " + scaled(total, u) + " " + kUnits[u];
}

std::string mhz(double value) {
  if (value >= 1000) return fmt::format("{:.2f} GHz", value / 1000.0);
  return fmt::format("{:.0f} MHz", value);
}

std::string percent(double value) {
  return fmt::format("{:.0f} %", value);
}

std::string Style::label(const std::string& s) const {
  return color ? fmt::format(fmt::emphasis::bold | fmt::fg(fmt::terminal_color::cyan), "{}", s) : s;
}
std::string Style::dim(const std::string& s) const {
  return color ? fmt::format(fmt::emphasis::faint, "{}", s) : s;
}
std::string Style::good(const std::string& s) const {
  return color ? fmt::format(fmt::fg(fmt::terminal_color::green), "{}", s) : s;
}
std::string Style::warn(const std::string& s) const {
  return color ? fmt::format(fmt::fg(fmt::terminal_color::yellow), "{}", s) : s;
}
std::string Style::bold(const std::string& s) const {
  return color ? fmt::format(fmt::emphasis::bold, "{}", s) : s;
}

std::string plural(std::uint64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) {
    if (p.empty()) continue;
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

std::size_t width_of(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\033' && i + 1 < s.size() && s[i + 1] == '[') {
      // A colour sequence: ESC [ parameters, then the letter that ends it.
      i += 2;
      while (i < s.size() && !(s[i] >= '@' && s[i] <= '~'))
        ++i;
      continue;
    }
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string clip(std::string_view s, std::size_t width) {
  if (width_of(s) <= width) return std::string(s);
  if (width == 0) return {};
  std::string out;
  std::size_t n = 0;
  bool styled = false;
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == '\033' && i + 1 < s.size() && s[i + 1] == '[') {
      std::size_t end = i + 2;
      while (end < s.size() && !(s[end] >= '@' && s[end] <= '~'))
        ++end;
      end = std::min(end + 1, s.size());
      out.append(s.substr(i, end - i));
      styled = true;
      i = end;
      continue;
    }
    std::size_t len = 1;
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0xF0)
      len = 4;
    else if (c >= 0xE0)
      len = 3;
    else if (c >= 0xC0)
      len = 2;
    if (n + 1 == width) break;
    out.append(s.substr(i, len));
    ++n;
    i += len;
  }
  out += "…";
  if (styled) out += "\033[0m";
  return out;
}

std::string fit(std::string_view s, std::size_t width) {
  std::string out = clip(s, width);
  std::size_t w = width_of(out);
  if (w < width) out.append(width - w, ' ');
  return out;
}

std::string repeat(const char* glyph, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i)
    out += glyph;
  return out;
}

std::string gauge(double fraction, int blocks) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  int full = static_cast<int>(fraction * blocks + 0.5);
  return repeat("█", static_cast<std::size_t>(full)) +
         repeat("░", static_cast<std::size_t>(blocks - full));
}

bool want_color(const std::string& mode, int fd) {
  // An explicit --color wins; then NO_COLOR (no-color.org: "user-level configuration files and
  // per-instance command-line arguments should override it"), TERM=dumb and the terminal.
  if (mode == "always") return true;
  if (mode == "never") return false;
  if (const char* no = std::getenv("NO_COLOR"); no && *no) return false;
  if (const char* term = std::getenv("TERM"); term && std::strcmp(term, "dumb") == 0) return false;
  return ::isatty(fd) == 1;
}

}  // namespace mainboard::view
