#pragma once

#include <string>

#include "mainboard/export.hpp"
#include "mainboard/reading.hpp"

namespace mainboard {

/// Motherboard and firmware identity from DMI. A field the firmware leaves empty or fills with a
/// placeholder ("To Be Filled By O.E.M.") is an empty string; where there is no DMI at all (many
/// virtual machines) the machine holds a `Reading<Board>` that says why instead.
struct MAINBOARD_API Board {
  std::string vendor;   ///< board manufacturer (falls back to the system vendor)
  std::string model;    ///< board product name (falls back to the system product name)
  std::string version;  ///< board revision
  std::string bios_vendor;
  std::string bios_version;
  std::string bios_date;

  /// Nothing of it was read: every field empty.
  bool empty() const {
    return vendor.empty() && model.empty() && version.empty() && bios_vendor.empty() &&
           bios_version.empty() && bios_date.empty();
  }
  bool operator==(const Board&) const = default;
};

}  // namespace mainboard
