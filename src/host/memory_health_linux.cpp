// Static huge pages and memory errors.
//
// Huge pages (Documentation/admin-guide/mm/hugetlbpage.rst): one directory per page size,
// /sys/kernel/mm/hugepages/hugepages-2048kB/{nr,free,resv,surplus}_hugepages for the system and
// /sys/devices/system/node/nodeN/hugepages/hugepages-2048kB/{nr,free,surplus}_hugepages per node.
//
// Memory errors (Documentation/admin-guide/ras.rst): one directory per memory controller an EDAC
// driver drives, /sys/devices/system/edac/mc/mcN/{mc_name,size_mb,ce_count,ue_count,
// ce_noinfo_count,ue_noinfo_count}.
#include <algorithm>

#include "core/fs.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "host/readers.hpp"
#include "mainboard/memory_health.hpp"

namespace mainboard::host {

namespace {

/// "hugepages-2048kB" as bytes; empty for another name or a size that does not fit.
std::optional<std::uint64_t> health_page_bytes(std::string_view dir) {
  constexpr std::string_view prefix = "hugepages-", suffix = "kB";
  if (!core::starts_with(dir, prefix) || !dir.ends_with(suffix)) return std::nullopt;
  auto kb = core::parse_u64(dir.substr(prefix.size(), dir.size() - prefix.size() - suffix.size()));
  if (!kb || *kb == 0) return std::nullopt;
  return core::checked_mul(*kb, 1024);
}

/// The trailing number of "node1", "mc0"; empty when there is none.
std::optional<std::uint64_t> health_index(std::string_view name, std::string_view prefix) {
  if (!core::starts_with(name, prefix)) return std::nullopt;
  return core::parse_u64(name.substr(prefix.size()));
}

/// A page count that can be: a number whose pages fit in 64 bits of bytes.
std::optional<std::uint64_t> health_pages(const core::Fs& fs, const std::string& path,
                                          std::uint64_t page_bytes) {
  auto text = fs.read(path, 64);
  if (!text) return std::nullopt;
  auto n = core::parse_u64(core::trim(*text));
  if (!n || !core::checked_mul(*n, page_bytes)) return std::nullopt;
  return n;
}

/// Whether /proc/meminfo says every pool of every page size is empty: its Hugetlb line (Linux
/// 4.16) is the memory of all of them, surplus pages included, and free, reserved and surplus
/// pages are all within a pool's total. Where that line says 0 kB, which is most machines, the
/// pools' own files need not be read.
bool health_all_pools_empty(const core::Fs& fs) {
  auto meminfo = fs.read(core::paths::kProcMeminfo);  // shared with the memory probe
  if (!meminfo) return false;
  auto value = core::find_value(*meminfo, "Hugetlb");
  return value && core::parse_size(*value) == 0u;
}

/// The pools of one hugepages directory, sorted by page size; the names of those that cannot
/// be read go to `left_out`. Which sizes there are is fixed at boot.
void health_pools(const core::Fs& fs, const std::string& dir, std::optional<std::int32_t> node,
                  bool all_empty, std::vector<HugePagePool>& out,
                  std::vector<std::string>& left_out) {
  std::vector<HugePagePool> pools;
  for (const auto& size : fs.list_fixed(dir)) {
    auto bytes = health_page_bytes(size);
    if (!bytes) continue;
    std::string d = dir + "/" + size;
    HugePagePool p;
    p.page_bytes = *bytes;
    p.numa_node = node;
    if (all_empty) {
      p.total = p.free = 0;
      if (!node) p.reserved = 0;
      p.surplus = 0;
      pools.push_back(p);
      continue;
    }
    auto total = health_pages(fs, d + "/nr_hugepages", *bytes);
    auto free = health_pages(fs, d + "/free_hugepages", *bytes);
    if (!total || !free) {
      left_out.push_back((node ? "node" + std::to_string(*node) + " " : std::string()) + size);
      continue;
    }
    p.total = *total;
    p.free = *free;
    if (!node) p.reserved = health_pages(fs, d + "/resv_hugepages", *bytes);
    p.surplus = health_pages(fs, d + "/surplus_hugepages", *bytes);
    pools.push_back(p);
  }
  std::sort(pools.begin(), pools.end(),
            [](const auto& a, const auto& b) { return a.page_bytes < b.page_bytes; });
  out.insert(out.end(), pools.begin(), pools.end());
}

std::string health_list(std::string_view head, const std::vector<std::string>& names) {
  std::string out(head);
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i ? ", " : "") + names[i];
  return out;
}

}  // namespace

Reading<HugePages> read_huge_pages(const Sources& sources, const MachineSnapshot&, Note& note) {
  const core::Fs& fs = *sources.fs;
  HugePages h;
  std::vector<std::string> left_out;
  const std::string system = "/sys/kernel/mm/hugepages";
  bool all_empty = health_all_pools_empty(fs);
  health_pools(fs, system, std::nullopt, all_empty, h.pools, left_out);
  if (h.pools.empty()) {
    std::string why =
        left_out.empty()
            ? "no huge page pools in /sys/kernel/mm/hugepages (a kernel without hugetlbfs)"
            : health_list("no readable huge page pool: ", left_out);
    note.unsupported(why);
    return Reading<HugePages>::none(std::move(why));
  }
  const std::string nodes = "/sys/devices/system/node";
  std::vector<std::pair<std::uint64_t, std::string>> numbered;
  for (const auto& n : fs.list_fixed(nodes))
    if (auto i = health_index(n, "node"); i && *i < (1u << 20)) numbered.emplace_back(*i, n);
  std::sort(numbered.begin(), numbered.end());
  for (const auto& [i, n] : numbered)
    health_pools(fs, nodes + "/" + n + "/hugepages", static_cast<std::int32_t>(i), all_empty,
                 h.pools, left_out);
  if (!left_out.empty())
    note.reason = health_list("unreadable huge page pools left out: ", left_out);
  return h;
}

Reading<MemoryErrors> read_memory_errors(const Sources& sources, const MachineSnapshot&,
                                         Note& note) {
  const core::Fs& fs = *sources.fs;
  const std::string root = "/sys/devices/system/edac/mc";
  std::vector<std::pair<std::uint64_t, std::string>> numbered;
  for (const auto& n : fs.list_fixed(root))
    if (auto i = health_index(n, "mc")) numbered.emplace_back(*i, n);
  std::sort(numbered.begin(), numbered.end());
  MemoryErrors e;
  std::vector<std::string> left_out;
  for (const auto& [i, name] : numbered) {
    std::string d = root + "/" + name;
    auto count = [&](const char* file) -> std::optional<std::uint64_t> {
      auto text = fs.read(d + "/" + file, 64);
      return text ? core::parse_u64(core::trim(*text)) : std::nullopt;
    };
    auto ce = count("ce_count"), ue = count("ue_count");
    auto ce_noinfo = count("ce_noinfo_count"), ue_noinfo = count("ue_noinfo_count");
    if (!ce || !ue || !ce_noinfo || !ue_noinfo) {
      left_out.push_back(name);
      continue;
    }
    MemoryController c;
    c.name = name;
    c.type = core::valid_utf8(fs.read_line_fixed(d + "/mc_name").value_or(""));
    if (auto mb = fs.read_u64_fixed(d + "/size_mb"))
      c.size_bytes = core::checked_mul(*mb, 1u << 20);
    c.corrected = *ce;
    c.uncorrected = *ue;
    c.corrected_unattributed = *ce_noinfo;
    c.uncorrected_unattributed = *ue_noinfo;
    e.controllers.push_back(std::move(c));
  }
  if (e.controllers.empty()) {
    if (!left_out.empty()) {
      auto why = health_list("no readable error counts in EDAC memory controllers ", left_out);
      note.unsupported(why);
      return Reading<MemoryErrors>::none(std::move(why));
    }
    std::string why = "no EDAC memory controller driver loaded";
    note.unsupported(why);
    return Reading<MemoryErrors>::none(std::move(why));
  }
  if (!left_out.empty())
    note.reason =
        health_list("memory controllers with unreadable error counts left out: ", left_out);
  return e;
}

}  // namespace mainboard::host
