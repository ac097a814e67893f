#include "providers/nvidia/visibility.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <tuple>

#include "core/text.hpp"

namespace mainboard::nvidia {

std::optional<std::vector<VisibleEntry>> parse_visible_devices(
    const std::optional<std::string>& value) {
  if (!value) return std::nullopt;
  std::vector<VisibleEntry> out;
  if (core::trim(*value).empty()) return out;
  for (auto raw : core::split(*value, ',')) {
    auto item = std::string(core::trim(raw));
    VisibleEntry e;
    if (core::starts_with(item, "GPU-") && item.size() > 4) {
      e.kind = VisibleEntry::Kind::gpu_uuid;
      e.uuid = item;
    } else if (core::starts_with(item, "MIG-") && item.size() > 4) {
      e.kind = VisibleEntry::Kind::mig_uuid;
      e.uuid = item;
    } else if (auto n = core::parse_u64(item); n && *n < 1u << 16) {
      e.kind = VisibleEntry::Kind::ordinal;
      e.ordinal = static_cast<unsigned>(*n);
    } else {
      break;  // the first invalid entry ends the list
    }
    out.push_back(std::move(e));
  }
  return out;
}

DeviceOrder parse_device_order(const std::optional<std::string>& value) {
  return value && core::trim(*value) == "PCI_BUS_ID" ? DeviceOrder::pci_bus_id
                                                     : DeviceOrder::fastest_first;
}

std::vector<Selected> select_visible(const std::vector<Candidate>& devices,
                                     const std::optional<std::vector<VisibleEntry>>& entries,
                                     DeviceOrder order) {
  std::vector<std::size_t> ordered(devices.size());
  std::iota(ordered.begin(), ordered.end(), 0);
  auto pci = [&](std::size_t i) {
    const auto& d = devices[i];
    return std::tuple(d.pci_domain, d.pci_bus, d.pci_device);
  };
  std::stable_sort(ordered.begin(), ordered.end(), [&](std::size_t a, std::size_t b) {
    if (order == DeviceOrder::fastest_first) {
      auto ca = std::pair(devices[a].cc_major, devices[a].cc_minor);
      auto cb = std::pair(devices[b].cc_major, devices[b].cc_minor);
      if (ca != cb) return ca > cb;
    }
    return pci(a) < pci(b);
  });

  std::vector<Selected> out;
  if (!entries) {
    for (auto i : ordered)
      out.push_back({i, std::nullopt});
    return out;
  }
  bool have_mig = false;
  for (const auto& e : *entries) {
    std::optional<Selected> pick;
    switch (e.kind) {
      case VisibleEntry::Kind::ordinal:
        if (e.ordinal < ordered.size()) pick = Selected{ordered[e.ordinal], std::nullopt};
        break;
      case VisibleEntry::Kind::gpu_uuid: {
        std::optional<std::size_t> match;
        bool ambiguous = false;
        for (auto i : ordered) {
          if (!core::starts_with(devices[i].uuid, e.uuid)) continue;
          if (match) ambiguous = true;
          match = i;
        }
        if (match && !ambiguous) pick = Selected{*match, std::nullopt};
        break;
      }
      case VisibleEntry::Kind::mig_uuid:
        if (have_mig) break;
        for (auto i : ordered) {
          const auto& migs = devices[i].mig_uuids;
          auto it = std::find(migs.begin(), migs.end(), e.uuid);
          if (it != migs.end()) pick = Selected{i, static_cast<std::size_t>(it - migs.begin())};
        }
        have_mig = pick.has_value();
        break;
    }
    if (!pick || std::find(out.begin(), out.end(), *pick) != out.end()) break;
    out.push_back(*pick);
  }
  return out;
}

std::optional<PciAddress> parse_pci_bus_id(const std::string& id) {
  // domain:bus:device.function, all hexadecimal; the kernel's log leaves out ".function".
  auto colon2 = id.rfind(':');
  if (colon2 == std::string::npos) return std::nullopt;
  auto colon1 = id.rfind(':', colon2 == 0 ? 0 : colon2 - 1);
  auto dot = id.find('.', colon2);
  if (colon1 == std::string::npos || colon1 == colon2) return std::nullopt;
  auto domain = core::parse_u64_base(id.substr(0, colon1), 16);
  auto bus = core::parse_u64_base(id.substr(colon1 + 1, colon2 - colon1 - 1), 16);
  auto device = core::parse_u64_base(
      id.substr(colon2 + 1, dot == std::string::npos ? std::string::npos : dot - colon2 - 1), 16);
  auto function = dot == std::string::npos ? std::optional<std::uint64_t>(0)
                                           : core::parse_u64_base(id.substr(dot + 1), 16);
  if (!domain || !bus || !device || !function || *domain > 0xffffffffu || *bus > 0xff ||
      *device > 0x1f || *function > 7)
    return std::nullopt;
  return PciAddress{static_cast<unsigned>(*domain), static_cast<unsigned>(*bus),
                    static_cast<unsigned>(*device), static_cast<unsigned>(*function)};
}

std::string format_pci_bus_id(const PciAddress& a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08X:%02X:%02X.%X", a.domain, a.bus, a.device, a.function);
  return buf;
}

}  // namespace mainboard::nvidia
