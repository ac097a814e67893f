// Temperatures: hwmon chips (/sys/class/hwmon/hwmonN: name, tempN_input, tempN_label, tempN_max,
// tempN_crit, in millidegrees Celsius; Documentation/hwmon/sysfs-interface.rst) and thermal
// zones (/sys/class/thermal/thermal_zoneN: type, temp, trip_point_K_type and _temp).
//
// A value outside what a sensor can read (-273.15 °C from a zone without a sensor, 65261.85 °C
// from an NVMe sensor that is not there, an empty file from a driver answering ENODATA) is left
// out, never shown as 0.
#include <algorithm>
#include <cmath>

#include "core/fs.hpp"
#include "core/text.hpp"
#include "host/readers.hpp"
#include "mainboard/sensors.hpp"

namespace mainboard::host {

namespace {

/// A reading in millidegrees as degrees; empty when it is no integer or no temperature a sensor
/// in a computer reports (below -100 °C or above 200 °C).
std::optional<double> sensors_celsius(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  auto milli = core::parse_i64(core::trim(*text));
  if (!milli) return std::nullopt;
  double c = static_cast<double>(*milli) / 1000.0;
  if (!(c > -100.0 && c <= 200.0)) return std::nullopt;
  return c;
}

/// A limit (max, crit, a trip point) in millidegrees; empty where it is unset. Drivers leave
/// limits they do not program at 0 (jc42), at 255 °C or at the top of their range (NVMe), so a
/// limit is only one between 25 and 200 °C.
std::optional<double> sensors_limit(const std::optional<std::string>& text) {
  auto c = sensors_celsius(text);
  if (!c || *c < 25.0) return std::nullopt;
  return c;
}

/// The trailing number of "hwmon12", "thermal_zone3", "temp7"; empty when there is none.
std::optional<std::uint64_t> sensors_index(std::string_view name, std::string_view prefix) {
  if (!core::starts_with(name, prefix)) return std::nullopt;
  return core::parse_u64(name.substr(prefix.size()));
}

/// What a sensor measures, from its chip's driver and its label.
std::string sensors_hwmon_kind(std::string_view chip, std::string_view label) {
  if (chip == "coretemp") {
    if (core::starts_with(label, "Package id")) return "cpu_package";
    if (core::starts_with(label, "Core")) return "cpu_core";
    return "cpu";
  }
  if (chip == "k10temp" || chip == "zenpower" || chip == "cpu_thermal") return "cpu";
  if (chip == "jc42" || chip == "spd5118" || chip == "ee1004") return "dimm";
  if (chip == "nvme") return "nvme";
  if (chip == "amdgpu" || chip == "nouveau" || chip == "radeon" || chip == "i915" || chip == "xe")
    return "gpu";
  return "other";
}

/// What a thermal zone measures, from its type. ACPI's zones (acpitz) belong to the board's
/// firmware and may sit anywhere: they stay "other".
std::string sensors_zone_kind(std::string_view type) {
  if (type == "x86_pkg_temp") return "cpu_package";
  std::string lower = core::to_lower(type);
  if (core::starts_with(lower, "cpu") || lower == "soc_thermal" || core::starts_with(lower, "tcpu"))
    return "cpu";
  return "other";
}

void sensors_hwmon(const core::Fs& fs, std::vector<TemperatureSensor>& out,
                   std::vector<std::string>& left_out) {
  const std::string root = "/sys/class/hwmon";
  auto chips = fs.list_fixed(root);
  std::sort(chips.begin(), chips.end(), [](const std::string& a, const std::string& b) {
    auto ia = sensors_index(a, "hwmon"), ib = sensors_index(b, "hwmon");
    return ia && ib ? *ia < *ib : a < b;
  });
  for (const auto& entry : chips) {
    if (!sensors_index(entry, "hwmon")) continue;
    std::string dir = root + "/" + entry;
    // Drivers of before Linux 3.x (and a few since) put their files under device/.
    auto names = fs.list_fixed(dir);
    auto has_input = [](const std::vector<std::string>& files) {
      return std::any_of(files.begin(), files.end(), [](const std::string& f) {
        return core::starts_with(f, "temp") && f.size() > 6 && f.ends_with("_input");
      });
    };
    if (!has_input(names) && has_input(fs.list_fixed(dir + "/device"))) {
      dir += "/device";
      names = fs.list_fixed(dir);
    }
    auto chip = fs.read_line_fixed(dir + "/name");
    if (!chip) chip = fs.read_line_fixed(root + "/" + entry + "/name");
    std::string name = chip ? core::valid_utf8(*chip) : entry;
    std::string device = fs.link_name_fixed(root + "/" + entry + "/device").value_or("");
    std::vector<std::pair<std::uint64_t, std::string>> inputs;
    for (const auto& f : names) {
      if (!core::starts_with(f, "temp") || !f.ends_with("_input")) continue;
      auto n = core::parse_u64(std::string_view(f).substr(4, f.size() - 4 - 6));
      if (n) inputs.emplace_back(*n, f.substr(0, f.size() - 6));
    }
    std::sort(inputs.begin(), inputs.end());
    for (const auto& [n, sensor] : inputs) {
      auto celsius = sensors_celsius(fs.read(dir + "/" + sensor + "_input", 64));
      if (!celsius) {
        left_out.push_back(name + " " + sensor);
        continue;
      }
      TemperatureSensor t;
      t.source = "hwmon";
      t.chip = name;
      t.sensor = sensor;
      t.label = core::valid_utf8(fs.read_line_fixed(dir + "/" + sensor + "_label").value_or(""));
      t.kind = sensors_hwmon_kind(t.chip, t.label);
      t.device = device;
      t.celsius = *celsius;
      t.high_celsius = sensors_limit(fs.read_fixed(dir + "/" + sensor + "_max"));
      t.critical_celsius = sensors_limit(fs.read_fixed(dir + "/" + sensor + "_crit"));
      out.push_back(std::move(t));
    }
  }
}

void sensors_thermal(const core::Fs& fs, std::vector<TemperatureSensor>& out,
                     std::vector<std::string>& left_out) {
  const std::string root = "/sys/class/thermal";
  auto zones = fs.list_fixed(root);
  std::sort(zones.begin(), zones.end(), [](const std::string& a, const std::string& b) {
    auto ia = sensors_index(a, "thermal_zone"), ib = sensors_index(b, "thermal_zone");
    return ia && ib ? *ia < *ib : a < b;
  });
  for (const auto& zone : zones) {
    if (!sensors_index(zone, "thermal_zone")) continue;
    std::string dir = root + "/" + zone;
    auto type = fs.read_line_fixed(dir + "/type");
    std::string name = type && !type->empty() ? core::valid_utf8(*type) : zone;
    // A disabled zone, or one whose sensor is gone, answers EIO or ENODATA.
    auto celsius = sensors_celsius(fs.read(dir + "/temp", 64));
    if (!celsius) {
      left_out.push_back(name + " " + zone);
      continue;
    }
    TemperatureSensor t;
    t.source = "thermal";
    t.chip = name;
    t.sensor = zone;
    t.kind = sensors_zone_kind(name);
    t.device = fs.link_name_fixed(dir + "/device").value_or("");
    t.celsius = *celsius;
    for (const auto& f : fs.list_fixed(dir)) {
      if (!core::starts_with(f, "trip_point_") || !f.ends_with("_type")) continue;
      auto trip = fs.read_line_fixed(dir + "/" + f);
      if (!trip || (*trip != "critical" && *trip != "hot")) continue;
      auto limit = sensors_limit(fs.read_fixed(dir + "/" + f.substr(0, f.size() - 5) + "_temp"));
      if (!limit) continue;
      // Of several trips of one type, the lowest is the one reached first.
      auto& into = *trip == "critical" ? t.critical_celsius : t.high_celsius;
      if (!into || *limit < *into) into = limit;
    }
    out.push_back(std::move(t));
  }
}

}  // namespace

Reading<Temperatures> read_temperatures(const Sources& sources, const MachineSnapshot&,
                                        Note& note) {
  const core::Fs& fs = *sources.fs;
  Temperatures temps;
  std::vector<std::string> left_out;
  sensors_hwmon(fs, temps.sensors, left_out);
  sensors_thermal(fs, temps.sensors, left_out);
  std::string unreadable;
  for (const auto& s : left_out)
    unreadable +=
        (unreadable.empty() ? "unreadable or impossible temperature left out: " : ", ") + s;
  if (temps.sensors.empty()) {
    if (!unreadable.empty()) {
      note.unsupported(unreadable);
      return Reading<Temperatures>::none(std::move(unreadable));
    }
    std::string why =
        "no temperature sensor: neither hwmon nor a thermal zone (a virtual machine, or no "
        "sensor driver loaded)";
    note.unsupported(why);
    return Reading<Temperatures>::none(std::move(why));
  }
  if (!unreadable.empty()) note.reason = std::move(unreadable);
  return temps;
}

}  // namespace mainboard::host
