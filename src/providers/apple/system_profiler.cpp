#include "providers/apple/system_profiler.hpp"

#include <cctype>
#include <nlohmann/json.hpp>

#include "core/text.hpp"

namespace mainboard::apple {

namespace {

using nlohmann::json;

std::string text(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// "16 GB", "1536 MB": system_profiler's sizes are binary multiples.
std::optional<std::uint64_t> size(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return core::parse_size(s);
}

std::string vendor_name(const std::string& token) {
  auto t = core::to_lower(token);
  if (t.find("apple") != std::string::npos) return "Apple";
  if (t.find("amd") != std::string::npos || t.find("ati") != std::string::npos) return "AMD";
  if (t.find("intel") != std::string::npos) return "Intel";
  if (t.find("nvidia") != std::string::npos) return "NVIDIA";
  return token;
}

const json* first_entry(const json& root, const char* type) {
  if (!root.is_object()) return nullptr;
  auto it = root.find(type);
  if (it == root.end() || !it->is_array() || it->empty() || !(*it)[0].is_object()) return nullptr;
  return &(*it)[0];
}

}  // namespace

std::vector<DisplayRecord> parse_displays(std::string_view input) {
  std::vector<DisplayRecord> out;
  auto root = json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (!root.is_object()) return out;
  auto it = root.find("SPDisplaysDataType");
  if (it == root.end() || !it->is_array()) return out;
  for (const auto& e : *it) {
    if (!e.is_object()) continue;
    DisplayRecord r;
    r.model = text(e, "sppci_model");
    if (r.model.empty()) r.model = text(e, "_name");
    r.vendor = vendor_name(text(e, "spdisplays_vendor"));
    if (r.vendor.empty() && core::starts_with(r.model, "Apple")) r.vendor = "Apple";
    if (auto c = core::parse_u64(text(e, "sppci_cores")); c && *c < 100000)
      r.cores = static_cast<std::uint32_t>(*c);
    for (const char* key : {"spdisplays_mtlgpufamilysupport", "spdisplays_metalfamily", "spdisplays_metal"})
      if (r.metal.empty()) r.metal = text(e, key);
    r.bus = text(e, "sppci_bus");
    r.device_type = text(e, "sppci_device_type");
    r.vram_bytes = size(text(e, "spdisplays_vram"));
    r.vram_shared_bytes = size(text(e, "spdisplays_vram_shared"));
    if (!r.vram_shared_bytes) r.vram_shared_bytes = size(text(e, "_spdisplays_vram"));
    if (r.model.empty()) continue;
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<HardwareRecord> parse_hardware(std::string_view input) {
  auto root = json::parse(input, nullptr, /*allow_exceptions=*/false);
  const json* e = first_entry(root, "SPHardwareDataType");
  if (!e) return std::nullopt;
  HardwareRecord h;
  h.chip = text(*e, "chip_type");
  h.cpu_type = text(*e, "cpu_type");
  h.machine_model = text(*e, "machine_model");
  h.machine_name = text(*e, "machine_name");
  h.uuid = text(*e, "platform_UUID");
  h.memory_bytes = size(text(*e, "physical_memory"));
  auto procs = e->find("number_processors");
  if (procs != e->end()) {
    if (procs->is_number_unsigned()) {
      h.cores = procs->get<std::uint32_t>();
    } else if (procs->is_string()) {
      // "proc 8:4:4" (total:performance:efficiency); macOS 26 adds a fourth field.
      auto s = procs->get<std::string>();
      // Keep the text alive: the fields below are views into it.
      std::string counts = s.substr(s.find(' ') == std::string::npos ? 0 : s.find(' ') + 1);
      auto fields = core::split(core::trim(counts), ':');
      auto n = [&](std::size_t i) -> std::optional<std::uint32_t> {
        if (i >= fields.size()) return std::nullopt;
        auto v = core::parse_u64(fields[i]);
        if (!v || *v > 100000) return std::nullopt;
        return static_cast<std::uint32_t>(*v);
      };
      h.cores = n(0);
      h.performance_cores = n(1);
      h.efficiency_cores = n(2);
    }
  }
  return h;
}

std::string soc_family(const std::string& chip) {
  // "Apple M3 Max" / "Apple M4 Max (Virtual)" → "Apple M3" / "Apple M4".
  if (!core::starts_with(chip, "Apple M")) return chip;
  auto end = chip.find(' ', 7);
  return end == std::string::npos ? chip : chip.substr(0, end);
}

std::string core_key(const std::string& family) {
  std::string key;
  for (char c : family) key += c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return key;
}

}  // namespace mainboard::apple
