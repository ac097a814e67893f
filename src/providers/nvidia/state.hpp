#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>

#include "core/fs.hpp"
#include "mainboard/nvidia.hpp"
#include "providers/nvidia/libraries.hpp"
#include "providers/nvidia/xid.hpp"

namespace mainboard {

/// What an NvidiaGpu needs to take a reading: the shared libraries and its own handles.
struct NvidiaGpu::State {
  std::shared_ptr<nvidia::NvmlLibrary> nvml;  // may be unusable (!ok)
  std::shared_ptr<nvidia::CudaLibrary> cuda;  // may be unusable (!ok)
  nvidia::nvml::Device device = nullptr;      // GPU or MIG handle; null without NVML
  std::optional<nvidia::cuda::Device> cuda_device;
  std::shared_ptr<const core::Fs> fs;  // for /proc/<pid>/comm
  bool mig = false;
  std::shared_ptr<nvidia::XidLog> xids;  // the host's kernel log, shared by its GPUs

  /// GPM: the last sample, to compare the next with. Mutable through the shared pointer.
  struct Gpm {
    std::mutex mutex;
    std::shared_ptr<nvidia::NvmlLibrary> nvml;  // frees the sample
    bool checked = false;
    std::string reason;  // why unsupported, once checked
    nvidia::nvml::GpmSample sample = nullptr;
    std::chrono::steady_clock::time_point taken;
    std::optional<GpuUnitActivity> last;  // the figures of the last window
    ~Gpm();
  };
  std::shared_ptr<Gpm> gpm;
};

namespace nvidia {
/// Takes the first GPM sample where the GPU supports GPM (nothing otherwise).
void start_unit_activity(const NvidiaGpu::State& s);
}  // namespace nvidia

}  // namespace mainboard
