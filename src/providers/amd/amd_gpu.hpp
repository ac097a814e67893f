#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/note.hpp"
#include "providers/provider.hpp"

namespace mainboard::amd {

/// A pp_dpm_* clock table: every level and the starred current one.
struct DpmTable {
  std::vector<double> levels_mhz;
  std::optional<double> current_mhz;
};
std::optional<DpmTable> parse_dpm_table(std::string_view text);

/// KFD's gfx_target_version (90402) → the LLVM target name (gfx942).
std::string gfx_target(std::uint64_t version);
/// gfx942 → "CDNA 3", gfx1100 → "RDNA 3"; empty when unknown.
std::string architecture_for(const std::string& gfx);
/// A marketing name for a PCI device id, for kernels that expose no product_name.
std::string marketing_name(unsigned device_id, unsigned revision = 0);
/// The gfx target of known parts by PCI device id, when KFD is not there to say.
std::string gfx_for_device(unsigned device_id);
std::string fmt_id(unsigned id);

std::vector<std::shared_ptr<Gpu>> probe_gpus(const providers::Context& context, host::Note& note);

}  // namespace mainboard::amd
