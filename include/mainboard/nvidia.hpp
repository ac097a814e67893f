#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "mainboard/export.hpp"
#include "mainboard/gpu.hpp"

namespace mainboard {

/// An NVIDIA GPU (or MIG instance) as CUDA numbers it: identity read once through NVML and the
/// CUDA driver (both loaded at run time), telemetry read live through NVML. `index` in its info
/// is the CUDA ordinal, after CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER.
class MAINBOARD_API NvidiaGpu final : public Gpu {
 public:
  struct State;  ///< library and device handles (private)

  NvidiaGpu(GpuInfo info, std::shared_ptr<const State> state);
  ~NvidiaGpu() override;

  const GpuInfo& info() const override { return info_; }
  /// NVML v2 (used excludes driver-reserved memory), else NVML v1, else the CUDA driver's
  /// cuMemGetInfo; `source` names which. Coherent devices report `unified = true`.
  Reading<Memory> memory() const override;
  /// graphics, sm, memory and video clocks: current and maximum.
  std::vector<ClockReading> clock_readings() const override;
  Reading<Utilization> utilization() const override;
  Reading<Energy> energy() const override;
  /// Temperature, slowdown and shutdown thresholds, and the decoded clock-event reasons.
  Reading<Thermal> thermal() const override;
  Reading<PcieReading> pcie() const override;
  std::optional<double> fan_speed_pct() const override;
  /// Compute processes, with names from /proc/<pid>/comm where it is readable.
  std::vector<GpuProcess> processes() const override;
  bool lists_processes() const override;
  /// Persistence, ECC, row remapping, XIDs from the kernel log and NVLink link by link.
  GpuHealth health() const override;
  /// GPM metrics (Hopper and later, not per MIG instance) between the previous sample and now.
  Reading<GpuUnitActivity> unit_activity() const override;

  Reading<Memory> nvml_memory() const;
  /// cuMemGetInfo through the device's primary context: retaining it costs a context on the
  /// device (hundreds of MB and tens of ms on real hardware), so it is only the fallback.
  Reading<Memory> runtime_memory() const;
  /// Whether it sits on a cache-coherent fabric with the host (Grace Hopper, GB10).
  bool coherent() const { return info_.coherent; }

  /// Which vendor interfaces answer for this device, and its handle in each.
  struct Bindings {
    bool nvml = false;               ///< NVML is loaded and holds a handle for it
    bool cuda = false;               ///< the CUDA driver is loaded and knows it
    std::string nvml_error;          ///< why NVML is not usable, when it is not
    std::string cuda_error;          ///< why the CUDA driver is not usable, when it is not
    std::optional<int> cuda_device;  ///< the CUDA driver's device ordinal (CUdevice)
    std::uint64_t nvml_handle = 0;   ///< NVML's device handle, as an opaque number (0: none)
    bool mig = false;                ///< a MIG instance (a child handle of its GPU)
  };
  Bindings bindings() const;

 private:
  void read_links(GpuHealth& h) const;

  GpuInfo info_;
  std::shared_ptr<const State> state_;
};

/// The clock-event (throttle) reason bits NVML reports, as names.
MAINBOARD_API std::vector<std::string> decode_clock_event_reasons(unsigned long long bits);

}  // namespace mainboard
