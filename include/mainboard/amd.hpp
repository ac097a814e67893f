#pragma once

#include <memory>
#include <string>

#include "mainboard/export.hpp"
#include "mainboard/gpu.hpp"


namespace mainboard {

namespace core {
class Fs;
}

/// An AMD GPU driven by amdgpu, read from sysfs (/sys/class/drm/cardN/device): VRAM and GTT,
/// busy percentages, the DPM clock tables, and the device's hwmon sensors. The gfx target
/// (gfx942…) comes from the KFD topology, when the compute driver exposes it.
class MAINBOARD_API AmdGpu final : public Gpu {
 public:
  AmdGpu(GpuInfo info, std::string device_dir, std::shared_ptr<const core::Fs> fs);

  const GpuInfo& info() const override { return info_; }
  Memory memory() const override;                ///< VRAM
  std::vector<Memory> memory_regions() const override;  ///< GTT
  std::vector<ClockReading> clock_readings() const override;
  Utilization utilization() const override;
  Energy energy() const override;
  Thermal thermal() const override;
  PcieReading pcie() const override;
  std::optional<double> fan_speed_pct() const override;
  /// Not exposed by sysfs (only per-process fdinfo): empty.
  std::vector<GpuProcess> processes() const override { return {}; }

 private:
  GpuInfo info_;
  std::string dir_;
  std::shared_ptr<const core::Fs> fs_;
};

}  // namespace mainboard
