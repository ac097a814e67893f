#pragma once

#include "host/note.hpp"
#include "mainboard/gpu.hpp"
#include "mainboard/npu.hpp"
#include "mainboard/runner.hpp"
#include "providers/provider.hpp"

namespace mainboard {

// Internal: a user reaches them as a Gpu and an Npu; the Metal label is GpuInfo::metal_support.
/// A GPU as macOS's system_profiler reports it. On Apple silicon it is the integrated GPU: its
/// memory is the unified pool shared with the CPU and the Neural Engine, its `uuid` the system's
/// hardware UUID, `architecture` the SoC generation. On an Intel Mac it may be an Intel or AMD
/// GPU with its own VRAM. Clocks, utilization and power need privileged sampling
/// (powermetrics), so they are unsupported with that reason.
class AppleGpu final : public Gpu {
 public:
  AppleGpu(GpuInfo info, std::uint64_t vram_bytes, bool unified,
           std::shared_ptr<const Runner> runner);
  const GpuInfo& info() const override { return info_; }
  Reading<Memory> memory() const override;
  std::vector<ClockReading> clock_readings() const override { return {}; }
  Reading<Utilization> utilization() const override;
  Reading<Energy> energy() const override;
  Reading<Thermal> thermal() const override;
  /// The human label for the Metal family identifier, e.g. "Metal 3".
  const std::string& metal_support() const { return info_.metal_support; }

 private:
  GpuInfo info_;
  std::uint64_t vram_bytes_;
  bool unified_;
  std::shared_ptr<const Runner> runner_;
};

/// The Apple Neural Engine of an Apple-silicon Mac.
class AppleNpu final : public Npu {
 public:
  AppleNpu(NpuInfo info, std::uint64_t memory_bytes, std::shared_ptr<const Runner> runner);
  const NpuInfo& info() const override { return info_; }
  Reading<Memory> memory() const override;
  /// Not exposed through public interfaces.
  std::vector<ClockReading> clock_readings() const override { return {}; }

 private:
  NpuInfo info_;
  std::uint64_t memory_bytes_;
  std::shared_ptr<const Runner> runner_;
};

}  // namespace mainboard

namespace mainboard::apple {

/// GPUs from `system_profiler SPDisplaysDataType SPHardwareDataType -json`, run through the
/// runner (a live Mac, or a recorded one replayed anywhere). No system_profiler: no devices.
std::vector<std::shared_ptr<Gpu>> probe_gpus(const providers::Context& context, host::Note& note);
/// The Neural Engine of an Apple-silicon Mac (every M-series chip has one).
std::vector<std::shared_ptr<Npu>> probe_npus(const providers::Context& context, host::Note& note);

}  // namespace mainboard::apple
