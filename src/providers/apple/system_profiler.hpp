#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// The JSON `system_profiler -json` prints for SPDisplaysDataType and SPHardwareDataType, parsed
/// into plain records. Platform-neutral: tested on Linux with captured outputs. Keys differ by
/// macOS release (spdisplays_metal → spdisplays_metalfamily → spdisplays_mtlgpufamilysupport;
/// number_processors is "proc 8:4:4" on Apple silicon but an integer on Intel), and any may be
/// missing.
namespace mainboard::apple {

struct DisplayRecord {
  std::string model;        ///< sppci_model, e.g. "Apple M3 Max", "AMD Radeon Pro 5500M"
  std::string vendor;       ///< Apple, AMD, Intel, NVIDIA (from spdisplays_vendor)
  std::optional<std::uint32_t> cores;  ///< sppci_cores (a string in the output)
  std::string metal;        ///< the raw Metal token, e.g. spdisplays_metal3
  std::string bus;          ///< sppci_bus: spdisplays_builtin, spdisplays_pcie_device …
  std::string device_type;  ///< spdisplays_gpu, spdisplays_egpu
  std::optional<std::uint64_t> vram_bytes;         ///< dedicated (spdisplays_vram)
  std::optional<std::uint64_t> vram_shared_bytes;  ///< shared with the CPU
  bool apple_silicon() const { return vendor == "Apple"; }
};

struct HardwareRecord {
  std::string chip;           ///< chip_type on Apple silicon ("Apple M3 Pro"); empty on Intel
  std::string cpu_type;       ///< Intel: "6-Core Intel Core i7"
  std::string machine_model;  ///< "Mac15,7"
  std::string machine_name;   ///< "MacBook Pro"
  std::string uuid;           ///< platform_UUID
  std::optional<std::uint64_t> memory_bytes;  ///< physical_memory ("36 GB", binary units)
  std::optional<std::uint32_t> cores;          ///< total cores
  std::optional<std::uint32_t> performance_cores;
  std::optional<std::uint32_t> efficiency_cores;
};

/// Every GPU entry; empty for malformed or unrelated JSON.
std::vector<DisplayRecord> parse_displays(std::string_view json);
std::optional<HardwareRecord> parse_hardware(std::string_view json);

/// "Apple M3 Max" → "Apple M3" (the SoC generation); unchanged when it is not an M-series name.
std::string soc_family(const std::string& chip);
/// The dispatch key of an Apple GPU generation: "Apple M3" → "apple_m3".
std::string core_key(const std::string& family);

}  // namespace mainboard::apple
