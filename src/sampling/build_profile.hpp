#pragma once

#include "mainboard/profile.hpp"
#include "sampling/perf_sampler.hpp"

namespace mainboard::sampling {

/// Symbolizes raw samples into a Profile: frames interned, stacks interned (leaf first, inlined
/// frames expanded), a thread per sampled tid. Samples of processes other than `target` are kept
/// only with `children`. Perf maps are read from `perf_map_dir` (/tmp) for each process.
Profile to_profile(SamplerOutput out, std::uint32_t hz, std::int32_t target, bool children,
                   const std::string& perf_map_dir = "/tmp");

}  // namespace mainboard::sampling
