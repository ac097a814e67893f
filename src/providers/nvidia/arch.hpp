#pragma once

#include <optional>
#include <string>

namespace mainboard::nvidia {

/// Architecture family from the compute capability (CUDA Programming Guide, compute capability
/// tables): 3.x Kepler … 9.0 Hopper, 10.x/11.x/12.x Blackwell.
std::string architecture_name(int major, int minor);

/// The per-architecture dispatch key: "sm_" + major + minor, e.g. sm_90, sm_120.
std::string arch_key(int major, int minor);

/// Theoretical peak memory bandwidth in GB/s (10^9 bytes/s):
///   memory clock [kHz] × 1000 × bus width [bits] / 8 × 2
/// The factor 2 is the double data rate the CUDA Best Practices Guide applies; CUDA reports the
/// memory clock of GDDR6X/GDDR7 and HBM parts so that the same formula gives the datasheet
/// figure (H100 SXM: 2619 MHz × 5120 bit → 3352 GB/s; RTX 4090: 10501 MHz × 384 bit → 1008
/// GB/s). Empty when either input is unknown or zero.
std::optional<double> peak_bandwidth_gbs(std::optional<long long> memory_clock_khz,
                                         std::optional<long long> bus_width_bits);

}  // namespace mainboard::nvidia
