#pragma once

#include "mainboard/profile.hpp"
#include "sampling/perf_sampler.hpp"
#include "sampling/python_frames.hpp"

namespace mainboard::sampling {

/// Symbolizes raw samples into a Profile: frames interned, stacks interned (leaf first, inlined
/// frames expanded), a thread per sampled tid. Samples of processes other than `target` are kept
/// only with `children`. Perf maps are read from `perf_map_dir` (/tmp) for each process. With
/// `python`, a sample of a thread whose Python stack was read near it in time has its
/// interpreter frames replaced by the Python frames (splice_python).
Profile to_profile(SamplerOutput out, std::uint32_t hz, std::int32_t target, bool children,
                   const std::string& perf_map_dir = "/tmp", const PythonSamples* python = nullptr);

}  // namespace mainboard::sampling
