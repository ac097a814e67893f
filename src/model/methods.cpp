// The models' own methods: pure functions of their fields, in the span library with the models'
// JSON, so that a profile's machine snapshot is usable wherever the profile is.
#include <algorithm>
#include <cstdio>
#include <optional>

#include "mainboard/cpu.hpp"
#include "mainboard/cuda.hpp"
#include "mainboard/memory.hpp"
#include "mainboard/snapshot.hpp"
#include "mainboard/toolchain.hpp"
#include "model/enum_names.hpp"

namespace mainboard {

std::optional<std::uint64_t> CpuInfo::cache_bytes(int level, const std::string& type) const {
  for (const auto& c : caches)
    if (c.level == level && c.type == type) return c.size_bytes;
  return std::nullopt;
}

double Memory::percent_used() const {
  if (total_bytes == 0 || !used_bytes) return 0.0;
  return 100.0 * static_cast<double>(*used_bytes) / static_cast<double>(total_bytes);
}

std::optional<std::uint32_t> MemorySlots::speed_mhz() const {
  std::optional<std::uint32_t> best;
  for (const auto& c : cards.or_empty())
    if (c.populated() && c.speed_mts && (!best || *c.speed_mts > *best)) best = c.speed_mts;
  return best;
}

std::size_t MemorySlots::slots_used() const {
  return static_cast<std::size_t>(
      std::ranges::count_if(cards.or_empty(), [](const DimmCard& c) { return c.populated(); }));
}

std::vector<UnitKind> MachineSnapshot::kinds() const {
  std::vector<UnitKind> out{UnitKind::cpu};
  if (!gpus.empty()) out.push_back(UnitKind::gpu);
  if (!npus.empty()) out.push_back(UnitKind::npu);
  return out;
}

const Diagnostic* MachineSnapshot::diagnostic(const std::string& probe) const {
  for (const auto& d : diagnostics)
    if (d.probe == probe) return &d;
  return nullptr;
}

std::map<ToolCategory, std::vector<DetectedTool>> Toolchain::by_category() const {
  std::map<ToolCategory, std::vector<DetectedTool>> out;
  for (const auto& t : tools)
    out[t.category].push_back(t);
  return out;
}

const DetectedTool* Toolchain::find(const std::string& name) const {
  for (const auto& t : tools)
    if (t.name == name && t.available) return &t;
  return nullptr;
}

std::string CudaStack::toolkit_newer_than_driver() const {
  // "13.0.88" and "12.4": compared as major.minor.
  auto major_minor = [](const std::string& v) -> std::optional<std::pair<int, int>> {
    int major = 0, minor = 0;
    char dot = 0;
    if (std::sscanf(v.c_str(), "%d%c%d", &major, &dot, &minor) != 3 || dot != '.')
      return std::nullopt;
    return std::pair{major, minor};
  };
  if (!nvcc_version || cuda_driver_version.empty()) return "";
  auto toolkit = major_minor(*nvcc_version), driver = major_minor(cuda_driver_version);
  if (!toolkit || !driver || *toolkit <= *driver) return "";
  return "nvcc is CUDA " + std::to_string(toolkit->first) + "." + std::to_string(toolkit->second) +
         ", newer than the " + cuda_driver_version +
         " the driver supports: programs it builds fail with \"CUDA driver version is "
         "insufficient\" unless they ship a compatible runtime";
}

std::vector<std::string> CompilerConfig::cmake_args() const {
  std::vector<std::string> out;
  if (c_compiler) out.push_back("-DCMAKE_C_COMPILER=" + *c_compiler);
  if (cxx_compiler) out.push_back("-DCMAKE_CXX_COMPILER=" + *cxx_compiler);
  if (cuda_compiler) out.push_back("-DCMAKE_CUDA_COMPILER=" + *cuda_compiler);
  if (cuda_architectures) out.push_back("-DCMAKE_CUDA_ARCHITECTURES=" + *cuda_architectures);
  return out;
}

namespace detail {

std::string names_of(Activity set) {
  std::string out;
  for (const auto& [bit, name] : EnumNames<Activity>::table) {
    if (!has(set, bit)) continue;
    if (!out.empty()) out += "|";
    out += name;
  }
  return out;
}

std::optional<Activity> parse_activities(std::string_view text) {
  std::uint32_t bits = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto bar = text.find('|', pos);
    auto name =
        text.substr(pos, bar == std::string_view::npos ? std::string_view::npos : bar - pos);
    auto value = value_of<Activity>(name);
    if (!value) return std::nullopt;
    bits |= static_cast<std::uint32_t>(*value);
    if (bar == std::string_view::npos) break;
    pos = bar + 1;
  }
  return static_cast<Activity>(bits);
}

}  // namespace detail

}  // namespace mainboard
