#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "mainboard/export.hpp"
#include "mainboard/npu.hpp"

namespace mainboard {

namespace core {
class Fs;
}

/// An accelerator of the Linux accel device class (/sys/class/accel/accelN): Intel NPU
/// (intel_vpu), AMD XDNA (amdxdna), Habana Gaudi (habanalabs), Qualcomm Cloud AI (qaic) and
/// whatever else the class shows, identified by driver and PCI ids.
class MAINBOARD_API AccelNpu final : public Npu {
 public:
  /// `attribute_dir` holds the driver's attributes: the PCI device for the accel class, the
  /// class device itself for the older /sys/class/habanalabs.
  AccelNpu(NpuInfo info, std::string attribute_dir, std::shared_ptr<const core::Fs> fs);

  const NpuInfo& info() const override { return info_; }
  /// NPUs without their own memory share system RAM; Intel's reports what it has mapped.
  Memory memory() const override;
  std::vector<ClockReading> clock_readings() const override;
  /// Intel NPU: busy share since the previous reading (npu_busy_time_us is cumulative), so the
  /// first reading is unsupported.
  Utilization utilization() const override;
  Energy energy() const override;

 private:
  NpuInfo info_;
  std::string dir_;
  std::shared_ptr<const core::Fs> fs_;
  mutable std::mutex mutex_;
  mutable std::optional<std::pair<std::int64_t, std::uint64_t>> last_busy_;  // (ns, µs busy)
};

}  // namespace mainboard
