#pragma once

#include <atomic>

namespace mainboard::detail {

/// Set from a signal handler to end Sampler::run (the target is terminated) or attach early;
/// the profile so far is kept.
extern std::atomic<bool> g_sampling_interrupted;

}  // namespace mainboard::detail
