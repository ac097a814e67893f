#pragma once

#include <string>

#include "mainboard/export.hpp"

namespace mainboard {

/// Motherboard and firmware identity from DMI. Unreadable fields are empty strings: many
/// virtual machines expose no DMI at all.
struct MAINBOARD_API Board {
  std::string vendor;   ///< board manufacturer (falls back to the system vendor)
  std::string model;    ///< board product name (falls back to the system product name)
  std::string version;  ///< board revision
  std::string bios_vendor;
  std::string bios_version;
  std::string bios_date;

  bool empty() const { return vendor.empty() && model.empty() && bios_vendor.empty(); }
  bool operator==(const Board&) const = default;
};

}  // namespace mainboard
