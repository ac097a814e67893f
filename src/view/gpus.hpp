#pragma once

#include <string>
#include <vector>

#include "mainboard/cuda.hpp"
#include "mainboard/gpu.hpp"
#include "mainboard/npu.hpp"
#include "view/format.hpp"

namespace mainboard::view {

/// Identity and one telemetry reading per GPU, several lines each; unsupported readings say why.
std::string render_gpus(const std::vector<GpuSnapshot>& gpus, const std::vector<NpuSnapshot>& npus,
                        const CudaStack& cuda, const Style& style);
/// One line: which NVIDIA libraries were found.
std::string cuda_stack_line(const CudaStack& cuda);

}  // namespace mainboard::view
