#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "core/fs.hpp"
#include "host/note.hpp"
#include "mainboard/npu.hpp"
#include "providers/provider.hpp"

namespace mainboard {

// Internal: a user reaches it as an Npu (it adds nothing to that interface).
/// An accelerator of the Linux accel device class (/sys/class/accel/accelN): Intel NPU
/// (intel_vpu), AMD XDNA (amdxdna), Habana Gaudi (habanalabs), Qualcomm Cloud AI (qaic) and
/// whatever else the class shows, identified by driver and PCI ids.
class AccelNpu final : public Npu {
 public:
  /// `attribute_dir` holds the driver's attributes: the PCI device for the accel class, the
  /// class device itself for the older /sys/class/habanalabs.
  AccelNpu(NpuInfo info, std::string attribute_dir, std::shared_ptr<const core::Fs> fs);

  const NpuInfo& info() const override { return info_; }
  /// NPUs without their own memory share system RAM; Intel's reports what it has mapped.
  Reading<Memory> memory() const override;
  std::vector<ClockReading> clock_readings() const override;
  /// Intel NPU: busy share since the previous reading (npu_busy_time_us is cumulative), so the
  /// first reading is unsupported.
  Reading<Utilization> utilization() const override;
  Reading<Energy> energy() const override;

 private:
  NpuInfo info_;
  std::string dir_;
  std::shared_ptr<const core::Fs> fs_;
  mutable std::mutex mutex_;
  mutable std::optional<std::pair<std::int64_t, std::uint64_t>> last_busy_;  // (ns, µs busy)
};

}  // namespace mainboard

namespace mainboard::accel {

/// Name and architecture for a known accelerator (driver + PCI device id); the driver name
/// alone otherwise.
struct Identity {
  std::string label;
  std::string vendor;
  std::string architecture;
};
Identity identify(const std::string& driver, unsigned vendor_id, unsigned device_id,
                  const std::string& device_type);

std::vector<std::shared_ptr<Npu>> probe_npus(const providers::Context& context, host::Note& note);

}  // namespace mainboard::accel
