#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

/// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER as the CUDA driver reads them (CUDA C Programming
/// Guide, "CUDA Environment Variables"). With a driver present we ask it which devices a CUDA
/// program sees; this is the same rule for hosts where only NVML is present.
namespace mainboard::nvidia {

struct VisibleEntry {
  enum class Kind { ordinal, gpu_uuid, mig_uuid };
  Kind kind = Kind::ordinal;
  unsigned ordinal = 0;
  std::string uuid;  // with its GPU- or MIG- prefix; GPU- entries may be a unique prefix
};

/// Empty optional: the variable is unset (every device). An empty list: set but empty, or its
/// first entry is invalid (no device). Parsing stops at the first invalid entry, as CUDA does:
/// "0,2,-1,1" selects 0 and 2.
std::optional<std::vector<VisibleEntry>> parse_visible_devices(
    const std::optional<std::string>& value);

enum class DeviceOrder { fastest_first, pci_bus_id };
DeviceOrder parse_device_order(const std::optional<std::string>& value);

/// What the selection needs to know of each physical device.
struct Candidate {
  std::string uuid;  // "GPU-…"
  int cc_major = 0;
  int cc_minor = 0;
  unsigned pci_domain = 0, pci_bus = 0, pci_device = 0;
  std::vector<std::string> mig_uuids;  // "MIG-…", when MIG is enabled
};

struct Selected {
  std::size_t device = 0;          // index into the candidates
  std::optional<std::size_t> mig;  // index into its mig_uuids
  bool operator==(const Selected&) const = default;
};

/// The devices a CUDA program would see, in CUDA ordinal order. Fastest-first is approximated
/// by compute capability (newest first), ties in PCI bus order; the driver, when present, is
/// asked instead. Duplicates, unknown ordinals, ambiguous UUID prefixes and a second MIG
/// instance end the list (one MIG instance per process).
std::vector<Selected> select_visible(const std::vector<Candidate>& devices,
                                     const std::optional<std::vector<VisibleEntry>>& entries,
                                     DeviceOrder order);

/// "0000:19:00.0" or "00000000:19:00.0" → domain, bus, device. NVML pads the domain to 8 digits,
/// CUDA to 4: compare numbers, not strings. The kernel log's "0000:19:00" is function 0.
struct PciAddress {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  auto operator<=>(const PciAddress&) const = default;
};
std::optional<PciAddress> parse_pci_bus_id(const std::string& id);
std::string format_pci_bus_id(const PciAddress& address);  // "00000000:19:00.0", NVML's form

}  // namespace mainboard::nvidia
