#include "view/format.hpp"

#include <fmt/color.h>
#include <fmt/format.h>
#include <unistd.h>

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
