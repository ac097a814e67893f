#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/fs.hpp"

/// What sysfs says about a PCI device, shared by the providers that find devices through a
/// class directory (drm, accel): /sys/class/<class>/<name>/device is a link to the PCI device.
namespace mainboard::providers::sysfs {

struct PciDevice {
  std::string dir;         ///< e.g. /sys/class/drm/card0/device (through the sysroot)
  std::string bus_id;      ///< "0000:03:00.0", the link target's last component
  std::string driver;      ///< bound driver's name, e.g. amdgpu, intel_vpu
  unsigned vendor_id = 0;  ///< 0x1002 AMD, 0x8086 Intel, 0x1da3 Habana, …
  unsigned device_id = 0;
};

/// The PCI device behind a class entry; empty when `<entry>/device` is not a PCI device link.
std::optional<PciDevice> pci_device(const core::Fs& fs, const std::string& entry);

/// "16.0 GT/s PCIe" → 4 (the PCIe generation of a link speed); empty when unknown.
std::optional<int> pcie_generation(const std::string& speed);

/// The hwmon directory of a device (<device>/hwmon/hwmonN), if it has one.
std::optional<std::string> hwmon_dir(const core::Fs& fs, const std::string& device_dir);

}  // namespace mainboard::providers::sysfs
