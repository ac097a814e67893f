#include "core/paths.hpp"
#include "core/text.hpp"
#include "host/probes.hpp"

namespace mainboard::host {

namespace {

/// Firmware fills unused DMI strings with placeholders; they carry no identity.
std::string dmi_field(const core::Fs& fs, const char* name) {
  auto v = fs.read_line(std::string(core::paths::kSysDmiId) + "/" + name);
  if (!v) return {};
  static constexpr const char* kPlaceholders[] = {"To Be Filled By O.E.M.",
                                                  "To be filled by O.E.M.",
                                                  "Default string",
                                                  "Not Specified",
                                                  "Not Applicable",
                                                  "System Product Name",
                                                  "System manufacturer",
                                                  "N/A",
                                                  "None",
                                                  "0123456789",
                                                  "Type1ProductConfigId",
                                                  "x.x"};
  for (const char* p : kPlaceholders)
    if (*v == p) return {};
  return *v;
}

}  // namespace

Reading<Board> probe_board(const core::Fs& fs) {
  if (!fs.is_dir(core::paths::kSysDmiId))
    return Reading<Board>::none(
        "no /sys/class/dmi/id (this platform or virtual machine exposes no DMI)");
  Board b;
  b.vendor = dmi_field(fs, "board_vendor");
  b.model = dmi_field(fs, "board_name");
  b.version = dmi_field(fs, "board_version");
  // Many servers and VMs fill only the system fields; they name the same box.
  if (b.vendor.empty()) b.vendor = dmi_field(fs, "sys_vendor");
  if (b.model.empty()) b.model = dmi_field(fs, "product_name");
  if (b.version.empty()) b.version = dmi_field(fs, "product_version");
  b.bios_vendor = dmi_field(fs, "bios_vendor");
  b.bios_version = dmi_field(fs, "bios_version");
  b.bios_date = dmi_field(fs, "bios_date");
  if (b.empty()) return Reading<Board>::none("DMI fields are empty or unreadable");
  return b;
}

}  // namespace mainboard::host
