// Pressure stall information: /proc/pressure/{cpu,memory,io} (Documentation/accounting/psi.rst).
//   some avg10=0.66 avg60=2.25 avg300=0.89 total=127451135
//   full avg10=0.22 avg60=1.65 avg300=0.61 total=72831214
#include "core/fs.hpp"
#include "core/text.hpp"
#include "host/readers.hpp"

namespace mainboard::host {

namespace {

/// "avg10=0.66 avg60=2.25 avg300=0.89 total=127451135" (after "some " or "full "); empty when a
/// field is missing or not a number, or a share is outside 0-100.
std::optional<StallShare> parse_share(std::string_view rest) {
  StallShare out;
  int seen = 0;
  for (auto word : core::split_ws(rest)) {
    auto eq = word.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    auto key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "total") {
      auto total = core::parse_u64(value);
      if (!total) return std::nullopt;
      out.total_us = *total;
      seen |= 8;
      continue;
    }
    double* into = key == "avg10"    ? &out.avg10
                   : key == "avg60"  ? &out.avg60
                   : key == "avg300" ? &out.avg300
                                     : nullptr;
    if (!into) continue;  // a field a later kernel adds
    auto share = core::parse_double(value);
    if (!share || !(*share >= 0 && *share <= 100)) return std::nullopt;
    *into = *share;
    seen |= key == "avg10" ? 1 : key == "avg60" ? 2 : 4;
  }
  if (seen != 15) return std::nullopt;
  return out;
}

/// One pressure file's "some" and "full" lines; empty when there is no valid "some" line.
std::optional<ResourcePressure> parse_pressure(std::string_view text) {
  std::optional<StallShare> some, full;
  for (auto line : core::split(text, '\n')) {
    line = core::trim(line);
    if (line.rfind("some ", 0) == 0)
      some = parse_share(line.substr(5));
    else if (line.rfind("full ", 0) == 0)
      full = parse_share(line.substr(5));
  }
  if (!some) return std::nullopt;
  return ResourcePressure{*some, full};
}

}  // namespace

Reading<Pressure> read_pressure(const Sources& sources, const MachineSnapshot&, Note& note) {
  const core::Fs& fs = *sources.fs;
  Pressure p;
  std::string unreadable;
  for (auto [name, into] :
       {std::pair{"cpu", &p.cpu}, std::pair{"memory", &p.memory}, std::pair{"io", &p.io}}) {
    auto text = fs.read(std::string("/proc/pressure/") + name);
    if (text) *into = parse_pressure(*text);
    if (!*into) unreadable += (unreadable.empty() ? "" : ", ") + std::string(name);
  }
  if (!p.cpu && !p.memory && !p.io) {
    std::string why =
        fs.exists("/proc/pressure")
            ? "/proc/pressure holds no readable cpu, memory or io file"
            : "no /proc/pressure (not Linux, a kernel before 4.20, or booted with psi=0)";
    note.unsupported(why);
    return Reading<Pressure>::none(std::move(why));
  }
  if (!unreadable.empty()) note.reason = "no pressure reading for " + unreadable;
  return p;
}

}  // namespace mainboard::host
