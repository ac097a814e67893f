#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mainboard/export.hpp"
#include "mainboard/unit.hpp"

namespace mainboard {

/// Identity of a neural processing unit.
struct MAINBOARD_API NpuInfo {
  std::uint32_t index = 0;
  std::string provider;  ///< apple, accel
  std::string label;
  std::string vendor;
  std::string architecture;
  std::string driver;  ///< kernel driver, e.g. intel_vpu, amdxdna, habanalabs
  std::string pci_bus_id;
  bool operator==(const NpuInfo&) const = default;
};

struct MAINBOARD_API NpuSnapshot {
  NpuInfo info;
  UnitSnapshot telemetry;
  bool operator==(const NpuSnapshot&) const = default;
};

class MAINBOARD_API Npu : public Unit {
 public:
  UnitKind kind() const override { return UnitKind::npu; }
  const std::string& label() const override { return info().label; }
  const std::string& architecture() const override { return info().architecture; }
  const std::string& vendor() const override { return info().vendor; }
  virtual const NpuInfo& info() const = 0;
  NpuSnapshot npu_snapshot(const std::string& name = "") const;
};

}  // namespace mainboard
