#pragma once

// Static huge page pools and memory errors (EDAC), read through the sysroot seam.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/export.hpp"

namespace mainboard {

/// One pool of static huge pages of one size, system-wide or on one NUMA node.
struct MAINBOARD_API HugePagePool {
  std::uint64_t page_bytes = 0;           ///< 2 MiB, 1 GiB…
  std::optional<std::int32_t> numa_node;  ///< empty: the whole system
  std::uint64_t total = 0;                ///< pages in the pool
  std::uint64_t free = 0;
  std::optional<std::uint64_t> reserved;  ///< promised to a mapping, not yet faulted in
  std::optional<std::uint64_t> surplus;   ///< beyond the pool (overcommit)
  bool operator==(const HugePagePool&) const = default;
};

template <class V>
void fields(V& v, HugePagePool& m) {
  v("page_bytes", m.page_bytes);
  v("numa_node", m.numa_node);
  v("total", m.total);
  v("free", m.free);
  v("reserved", m.reserved);
  v("surplus", m.surplus);
}

/// Static huge pages (/sys/kernel/mm/hugepages, and per node under /sys/devices/system/node).
struct MAINBOARD_API HugePages {
  std::vector<HugePagePool> pools;
  bool operator==(const HugePages&) const = default;
};

template <class V>
void fields(V& v, HugePages& m) {
  v("pools", m.pools);
}

/// One memory controller's error counts as EDAC keeps them (/sys/devices/system/edac/mc/mcN).
struct MAINBOARD_API MemoryController {
  std::string name;  ///< mc0
  std::string type;  ///< mc_name: "Skylake Socket#0 IMC#0", "F19h_M10h"…
  std::optional<std::uint64_t> size_bytes;
  std::uint64_t corrected = 0;                 ///< ce_count
  std::uint64_t uncorrected = 0;               ///< ue_count
  std::uint64_t corrected_unattributed = 0;    ///< ce_noinfo_count
  std::uint64_t uncorrected_unattributed = 0;  ///< ue_noinfo_count
  bool operator==(const MemoryController&) const = default;
};

template <class V>
void fields(V& v, MemoryController& m) {
  v("name", m.name);
  v("type", m.type);
  v("size_bytes", m.size_bytes);
  v("corrected", m.corrected);
  v("uncorrected", m.uncorrected);
  v("corrected_unattributed", m.corrected_unattributed);
  v("uncorrected_unattributed", m.uncorrected_unattributed);
}

/// Corrected and uncorrected memory errors per controller. Unavailable where no EDAC driver is
/// loaded (virtual machines, many desktops).
struct MAINBOARD_API MemoryErrors {
  std::vector<MemoryController> controllers;
  bool operator==(const MemoryErrors&) const = default;
};

template <class V>
void fields(V& v, MemoryErrors& m) {
  v("controllers", m.controllers);
}

}  // namespace mainboard
