#pragma once

#include <memory>
#include <optional>

#include "core/fs.hpp"
#include "mainboard/nvidia.hpp"
#include "providers/nvidia/libraries.hpp"

namespace mainboard {

/// What an NvidiaGpu needs to take a reading: the shared libraries and its own handles.
struct NvidiaGpu::State {
  std::shared_ptr<nvidia::NvmlLibrary> nvml;  // may be unusable (!ok)
  std::shared_ptr<nvidia::CudaLibrary> cuda;  // may be unusable (!ok)
  nvidia::nvml::Device device = nullptr;      // GPU or MIG handle; null without NVML
  std::optional<nvidia::cuda::Device> cuda_device;
  std::shared_ptr<const core::Fs> fs;  // for /proc/<pid>/comm
  bool mig = false;
};

}  // namespace mainboard
