#include "providers/accel/accel_npu.hpp"
#include "providers/amd/amd_gpu.hpp"
#include "providers/apple/apple.hpp"
#include "providers/nvidia/provider.hpp"
#include "providers/provider.hpp"

namespace mainboard::providers {

// Adding a vendor is one line in a table.
namespace {
constexpr GpuProvider kGpuProviders[] = {
    {"nvidia", "NVML (libnvidia-ml.so.1) and the CUDA driver (libcuda.so.1)",
     nvidia::probe_gpus},
    {"amd", "amdgpu sysfs (/sys/class/drm/card*/device)", amd::probe_gpus},
    {"apple", "system_profiler SPDisplaysDataType (macOS)", apple::probe_gpus},
};
constexpr NpuProvider kNpuProviders[] = {
    {"accel", "the accel device class (/sys/class/accel)", accel::probe_npus},
    {"apple", "system_profiler SPHardwareDataType (macOS)", apple::probe_npus},
};
}  // namespace

std::span<const GpuProvider> gpu_providers() { return kGpuProviders; }
std::span<const NpuProvider> npu_providers() { return kNpuProviders; }

}  // namespace mainboard::providers
