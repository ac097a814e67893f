#pragma once

#include "host/note.hpp"
#include "providers/provider.hpp"

namespace mainboard::apple {

/// GPUs from `system_profiler SPDisplaysDataType SPHardwareDataType -json`, run through the
/// runner (a live Mac, or a recorded one replayed anywhere). No system_profiler: no devices.
std::vector<std::shared_ptr<Gpu>> probe_gpus(const providers::Context& context, host::Note& note);
/// The Neural Engine of an Apple-silicon Mac (every M-series chip has one).
std::vector<std::shared_ptr<Npu>> probe_npus(const providers::Context& context, host::Note& note);

}  // namespace mainboard::apple
