#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fs.hpp"
#include "host/note.hpp"
#include "mainboard/gpu.hpp"
#include "providers/provider.hpp"

namespace mainboard {

// Internal: a user reaches it as a Gpu (it adds nothing to that interface).
/// An AMD GPU driven by amdgpu, read from sysfs (/sys/class/drm/cardN/device): VRAM and GTT,
/// busy percentages, the DPM clock tables, and the device's hwmon sensors. The gfx target
/// (gfx942…) comes from the KFD topology, when the compute driver exposes it.
class AmdGpu final : public Gpu {
 public:
  AmdGpu(GpuInfo info, std::string device_dir, std::shared_ptr<const core::Fs> fs);

  const GpuInfo& info() const override { return info_; }
  Reading<Memory> memory() const override;              ///< VRAM
  std::vector<Memory> memory_regions() const override;  ///< GTT
  std::vector<ClockReading> clock_readings() const override;
  Reading<Utilization> utilization() const override;
  Reading<Energy> energy() const override;
  Reading<Thermal> thermal() const override;
  Reading<PcieReading> pcie() const override;
  std::optional<double> fan_speed_pct() const override;
  /// Not exposed by sysfs (only per-process fdinfo): empty.
  std::vector<GpuProcess> processes() const override { return {}; }

 private:
  GpuInfo info_;
  std::string dir_;
  std::shared_ptr<const core::Fs> fs_;
};

}  // namespace mainboard

namespace mainboard::amd {

/// A pp_dpm_* clock table: every level and the starred current one.
struct DpmTable {
  std::vector<double> levels_mhz;
  std::optional<double> current_mhz;
};
std::optional<DpmTable> parse_dpm_table(std::string_view text);

/// KFD's gfx_target_version (90402) → the LLVM target name (gfx942).
std::string gfx_target(std::uint64_t version);
/// gfx942 → "CDNA 3", gfx1100 → "RDNA 3"; empty when unknown.
std::string architecture_for(const std::string& gfx);
/// A marketing name for a PCI device id, for kernels that expose no product_name.
std::string marketing_name(unsigned device_id, unsigned revision = 0);
/// The gfx target of known parts by PCI device id, when KFD is not there to say.
std::string gfx_for_device(unsigned device_id);
std::string fmt_id(unsigned id);

std::vector<std::shared_ptr<Gpu>> probe_gpus(const providers::Context& context, host::Note& note);

}  // namespace mainboard::amd
