#pragma once

// Temperatures (hwmon, thermal zones) and energy counters (RAPL through powercap), read through
// the sysroot seam.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/export.hpp"

namespace mainboard {

/// One temperature sensor: an hwmon tempN_input or a thermal zone.
struct MAINBOARD_API TemperatureSensor {
  std::string source;  ///< "hwmon" or "thermal"
  std::string chip;    ///< hwmon's name (coretemp, k10temp, nvme, jc42…) or the zone's type
  std::string sensor;  ///< temp1, temp3… or the zone (thermal_zone0)
  std::string label;   ///< tempN_label where the driver gives one ("Package id 0", "Tctl")
  std::string kind;    ///< cpu_package, cpu_core, cpu, dimm, nvme, gpu, other
  std::string device;  ///< what it belongs to where known (nvme0, a PCI address)
  double celsius = 0;
  std::optional<double> high_celsius;
  std::optional<double> critical_celsius;
  bool operator==(const TemperatureSensor&) const = default;
};

template <class V>
void fields(V& v, TemperatureSensor& m) {
  v("source", m.source);
  v("chip", m.chip);
  v("sensor", m.sensor);
  v("label", m.label);
  v("kind", m.kind);
  v("device", m.device);
  v("celsius", m.celsius);
  v("high_celsius", m.high_celsius);
  v("critical_celsius", m.critical_celsius);
}

/// Every temperature the kernel offers. Unavailable where there is neither hwmon nor a thermal
/// zone (most virtual machines).
struct MAINBOARD_API Temperatures {
  std::vector<TemperatureSensor> sensors;
  bool operator==(const Temperatures&) const = default;
};

template <class V>
void fields(V& v, Temperatures& m) {
  v("sensors", m.sensors);
}

/// One RAPL domain's energy counter (/sys/class/powercap/intel-rapl:N[:M], AMD's too).
struct MAINBOARD_API EnergyCounter {
  std::string zone;                      ///< intel-rapl:0, intel-rapl:0:1
  std::string domain;                    ///< package, core, uncore, dram, psys
  std::optional<std::uint32_t> package;  ///< the package a package-N zone and its subzones count
  std::uint64_t energy_uj = 0;           ///< microjoules; wraps at max_energy_range_uj
  std::optional<std::uint64_t> max_energy_range_uj;
  bool operator==(const EnergyCounter&) const = default;
};

template <class V>
void fields(V& v, EnergyCounter& m) {
  v("zone", m.zone);
  v("domain", m.domain);
  v("package", m.package);
  v("energy_uj", m.energy_uj);
  v("max_energy_range_uj", m.max_energy_range_uj);
}

/// The CPU and DRAM energy counters. Unavailable where there is no powercap RAPL, or where only
/// root may read the counters (Linux 5.10 and later, since CVE-2020-8694).
struct MAINBOARD_API EnergyCounters {
  std::vector<EnergyCounter> counters;
  bool operator==(const EnergyCounters&) const = default;
};

template <class V>
void fields(V& v, EnergyCounters& m) {
  v("counters", m.counters);
}

}  // namespace mainboard
