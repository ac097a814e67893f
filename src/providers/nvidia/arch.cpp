#include "providers/nvidia/arch.hpp"

namespace mainboard::nvidia {

std::string architecture_name(int major, int minor) {
  switch (major) {
    case 1: return "Tesla";
    case 2: return "Fermi";
    case 3: return "Kepler";
    case 5: return "Maxwell";
    case 6: return "Pascal";
    case 7: return minor >= 5 ? "Turing" : "Volta";  // 7.0 V100, 7.2 Xavier, 7.5 Turing
    case 8: return minor == 9 ? "Ada" : "Ampere";    // 8.0 A100, 8.6 GA10x, 8.7 Orin, 8.9 Ada
    case 9: return "Hopper";
    case 10:  // B200/GB200 (10.0), B300/GB300 (10.3)
    case 11:  // Thor
    case 12:  // RTX 50, RTX PRO (12.0), GB10 (12.1)
      return "Blackwell";
    default:
      return major > 12 ? "unknown (compute capability " + std::to_string(major) + "." +
                              std::to_string(minor) + ")"
                        : "unknown";
  }
}

std::string arch_key(int major, int minor) {
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

std::optional<double> peak_bandwidth_gbs(std::optional<long long> memory_clock_khz,
                                         std::optional<long long> bus_width_bits) {
  if (!memory_clock_khz || !bus_width_bits || *memory_clock_khz <= 0 || *bus_width_bits <= 0)
    return std::nullopt;
  double bytes_per_s = static_cast<double>(*memory_clock_khz) * 1000.0 *
                       (static_cast<double>(*bus_width_bits) / 8.0) * 2.0;
  return bytes_per_s / 1e9;
}

}  // namespace mainboard::nvidia
