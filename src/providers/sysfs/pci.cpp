#include "providers/sysfs/pci.hpp"

#include "core/text.hpp"

namespace mainboard::providers::sysfs {

std::optional<PciDevice> pci_device(const core::Fs& fs, const std::string& entry) {
  PciDevice d;
  d.dir = entry + "/device";
  auto target = fs.link_name(d.dir);
  // A PCI address "dddd:bb:dd.f"; platform devices (an Arm SoC's NPU) have other names.
  if (!target || target->size() < 12 || (*target)[4] != ':' || (*target)[7] != ':') return std::nullopt;
  d.bus_id = *target;
  d.driver = fs.link_name(d.dir + "/driver").value_or("");
  if (auto v = fs.read_line(d.dir + "/vendor"))
    d.vendor_id = static_cast<unsigned>(core::parse_u64_base(*v, 16).value_or(0));
  if (auto v = fs.read_line(d.dir + "/device"))
    d.device_id = static_cast<unsigned>(core::parse_u64_base(*v, 16).value_or(0));
  return d;
}

std::optional<int> pcie_generation(const std::string& speed) {
  // Per-lane rates by generation (PCI-SIG): 2.5, 5, 8, 16, 32, 64 GT/s.
  auto number = core::parse_double(core::split_ws(speed).empty() ? "" : core::split_ws(speed)[0]);
  if (!number) return std::nullopt;
  constexpr double kRates[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  for (int gen = 0; gen < 6; ++gen)
    if (*number > kRates[gen] - 0.1 && *number < kRates[gen] + 0.1) return gen + 1;
  return std::nullopt;
}

std::optional<std::string> hwmon_dir(const core::Fs& fs, const std::string& device_dir) {
  for (const auto& name : fs.list(device_dir + "/hwmon"))
    if (core::starts_with(name, "hwmon")) return device_dir + "/hwmon/" + name;
  return std::nullopt;
}

}  // namespace mainboard::providers::sysfs
