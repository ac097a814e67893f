#pragma once

#include <memory>
#include <vector>

#include "host/note.hpp"
#include "mainboard/cuda.hpp"
#include "providers/provider.hpp"

namespace mainboard::nvidia {

/// Every NVIDIA GPU a CUDA program on this host would see, in CUDA ordinal order.
std::vector<std::shared_ptr<Gpu>> probe_gpus(const providers::Context& context, host::Note& note);

/// The CUDA stack: driver, NVML, driver API, CUPTI and runtime libraries, as found.
CudaStack probe_cuda_stack(const providers::Context& context);

/// Formats a CUDA UUID (16 bytes) as NVML prints it, with the given prefix ("GPU-" or "MIG-").
std::string format_uuid(const char* prefix, const unsigned char bytes[16]);

}  // namespace mainboard::nvidia
