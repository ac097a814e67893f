#include "providers/nvidia/provider.hpp"
#include "providers/provider.hpp"

namespace mainboard::providers {

// Adding a vendor is one line in a table.
namespace {
constexpr GpuProvider kGpuProviders[] = {
    {"nvidia", "NVML (libnvidia-ml.so.1) and the CUDA driver (libcuda.so.1)",
     nvidia::probe_gpus},
};
}  // namespace

std::span<const GpuProvider> gpu_providers() { return kGpuProviders; }
std::span<const NpuProvider> npu_providers() { return {}; }

}  // namespace mainboard::providers
