#include <unistd.h>

#include <algorithm>
#include <iterator>

#include "core/paths.hpp"
#include "core/text.hpp"
#include "host/probes.hpp"

namespace mainboard::host {

namespace {

/// A "/proc/meminfo" value ("16311700 kB") in bytes.
std::optional<std::uint64_t> meminfo_bytes(std::string_view text, std::string_view key) {
  auto v = core::find_value(text, key);
  if (!v) return std::nullopt;
  return core::parse_size(*v);
}

}  // namespace

Reading<Memory> read_system_memory(const core::Fs& fs, std::string scope, bool unified) {
  Memory m;
  m.scope = std::move(scope);
  m.unified = unified;
  m.source = MemorySource::proc_meminfo;
  auto text = fs.read(core::paths::kProcMeminfo);
  if (!text) return Reading<Memory>::none("cannot read /proc/meminfo");
  auto total = meminfo_bytes(*text, "MemTotal");
  if (!total || *total == 0) return Reading<Memory>::none("no MemTotal in /proc/meminfo");
  // MemAvailable (Linux 3.14+) is the kernel's estimate of what can be allocated without
  // swapping; "used" is what is not available, which matches what tools like free(1) show.
  auto available = meminfo_bytes(*text, "MemAvailable");
  if (!available) {
    auto free = meminfo_bytes(*text, "MemFree");
    auto buffers = meminfo_bytes(*text, "Buffers");
    auto cached = meminfo_bytes(*text, "Cached");
    if (free) available = *free + buffers.value_or(0) + cached.value_or(0);
  }
  m.total_bytes = *total;
  if (available) {
    auto avail = std::min(*available, *total);
    m.free_bytes = avail;
    m.used_bytes = *total - avail;
  }
  return m;
}

std::optional<std::pair<std::uint64_t, std::uint64_t>> read_swap(const core::Fs& fs) {
  auto text = fs.read(core::paths::kProcMeminfo);
  if (!text) return std::nullopt;
  auto total = meminfo_bytes(*text, "SwapTotal");
  auto free = meminfo_bytes(*text, "SwapFree");
  if (!total) return std::nullopt;
  auto used = *total - std::min(free.value_or(*total), *total);
  return std::make_pair(*total, used);
}

namespace {

/// dmidecode's placeholders for fields the firmware left empty.
bool is_placeholder(std::string_view v) {
  return v.empty() || v == "Not Specified" || v == "Unknown" || v == "Not Provided" ||
         v == "None" || v == "NO DIMM" || v == "Undefined" || v == "To Be Filled By O.E.M.";
}

std::string clean(std::string_view v) {
  v = core::trim(v);
  return is_placeholder(v) ? std::string() : std::string(v);
}

/// "4800 MT/s" or "2666 MHz" (older dmidecode) to a number.
std::optional<std::uint32_t> speed(std::string_view v) {
  auto parts = core::split_ws(core::trim(v));
  if (parts.empty()) return std::nullopt;
  auto n = core::parse_u64(parts[0]);
  if (!n || *n == 0 || *n > 1'000'000) return std::nullopt;
  return static_cast<std::uint32_t>(*n);
}

}  // namespace

std::vector<DimmCard> parse_dmidecode_memory(std::string_view text) {
  std::vector<DimmCard> cards;
  DimmCard* card = nullptr;
  for (auto raw : core::split_lines(text)) {
    // Every structure starts at a "Handle 0x…, DMI type N" line; only type 17 is ours.
    if (core::starts_with(raw, "Handle ")) {
      card = nullptr;
      if (raw.find("DMI type 17,") != std::string_view::npos) card = &cards.emplace_back();
      continue;
    }
    if (!card) continue;
    auto line = core::trim(raw);
    auto pos = line.find(':');
    if (pos == std::string_view::npos) continue;
    auto key = core::trim(line.substr(0, pos));
    auto value = core::trim(line.substr(pos + 1));
    if (key == "Size") {
      // "No Module Installed", "16384 MB", "64 GB"; dmidecode means binary units here.
      if (auto size = core::parse_size(value)) card->size_bytes = *size;
    } else if (key == "Locator") {
      card->locator = clean(value);
    } else if (key == "Bank Locator") {
      card->bank_locator = clean(value);
    } else if (key == "Type") {
      card->type = clean(value);
    } else if (key == "Form Factor") {
      card->form_factor = clean(value);
    } else if (key == "Speed") {
      card->speed_mts = speed(value);
    } else if (key == "Configured Memory Speed" || key == "Configured Clock Speed") {
      card->configured_speed_mts = speed(value);
    } else if (key == "Manufacturer") {
      card->manufacturer = clean(value);
    } else if (key == "Part Number") {
      card->part_number = clean(value);
    } else if (key == "Rank") {
      if (auto r = core::parse_u64(value); r && *r < 64)
        card->rank = static_cast<std::uint32_t>(*r);
    }
    // Serial Number and Asset Tag are deliberately never kept.
  }
  return cards;
}

namespace {
constexpr const char* kSmbiosTables[] = {"/sys/firmware/dmi/tables/DMI", "/dev/mem"};

struct SmbiosTable {
  bool there = false;     ///< one of the two exists
  bool readable = false;  ///< and this user may read it (a recorded host: it is there)
};

SmbiosTable smbios_table(const core::Fs& fs) {
  SmbiosTable t;
  for (const char* path : kSmbiosTables)
    if (fs.exists(path)) {
      t.there = true;
      if (!fs.is_live() || ::access(path, R_OK) == 0) {
        t.readable = true;
        break;
      }
    }
  return t;
}

}  // namespace

bool smbios_table_present(const core::Fs& fs) {
  // On the live host the table must be readable by this user too: both are root's alone, and
  // dmidecode started by anyone else only fails, a process later.
  return smbios_table(fs).readable;
}

std::vector<DimmCard> probe_dimms(const core::Fs& fs, const Runner& runner, Note& note) {
  auto exe = runner.find_executable("dmidecode");
  if (!exe) {
    note.unsupported("dmidecode not found on PATH");
    return {};
  }
  // dmidecode reads the SMBIOS table from sysfs, or from /dev/mem on old kernels: without either
  // (containers, most virtual machines) there is nothing for it to read, and no need to start it.
  if (auto table = smbios_table(fs); !table.readable) {
    note.unsupported(table.there
                         ? "the SMBIOS table (/sys/firmware/dmi/tables/DMI, /dev/mem) is "
                           "readable by root only: run as root for the memory modules"
                         : "no SMBIOS table to read (/sys/firmware/dmi/tables/DMI, /dev/mem)");
    return {};
  }
  Command cmd;
  cmd.argv = {*exe, "-t", "17"};
  cmd.timeout = std::chrono::milliseconds(3000);
  auto result = runner.run(cmd);
  if (!result.ok()) {
    std::string why = !result.error.empty() ? result.error
                      : result.timed_out    ? "dmidecode timed out"
                                            : "dmidecode failed";
    auto err = core::trim(result.err);
    if (!err.empty()) why += ": " + std::string(core::split_lines(err).front());
    note.unsupported(why);
    return {};
  }
  auto cards = parse_dmidecode_memory(result.out);
  if (cards.empty()) note.unsupported("no SMBIOS memory devices (virtual machine?)");
  return cards;
}

}  // namespace mainboard::host
