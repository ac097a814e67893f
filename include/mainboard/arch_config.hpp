#pragma once

/// Per-architecture dispatch: values (tile sizes, a kernel configuration) keyed by a GPU's
/// arch_key, with fallbacks.
///
///   mainboard::ArchConfig<Tile> tiles(Tile{64, 64});   // the default
///   tiles.set("sm_90", {128, 256}).set("ampere", {128, 128});
///   const Tile& t = tiles.lookup(gpu.info());   // sm_90 exactly, else its family, else default
///
/// Lookup order: the exact key ("sm_90a", "gfx942"); the key without an architecture-specific
/// suffix ("sm_90a" → "sm_90"); the family ("hopper", "cdna3"); the default.

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "mainboard/export.hpp"
#include "mainboard/gpu.hpp"

namespace mainboard {

/// The family of an arch key, lowercased without spaces: "sm_90" → "hopper", "sm_86" →
/// "ampere", "sm_120" → "blackwell", "gfx942" → "cdna3", "gfx1100" → "rdna3"; empty when unknown.
MAINBOARD_API std::string arch_family(std::string_view arch_key);
/// A human architecture name as a family key: "CDNA 3" → "cdna3", "Hopper" → "hopper".
MAINBOARD_API std::string family_key(std::string_view architecture);

template <class T>
class MAINBOARD_API ArchConfig {
 public:
  explicit ArchConfig(T fallback) : fallback_(std::move(fallback)) {}

  /// Sets the value for a key: an arch key ("sm_90") or a family ("hopper"). Keys are
  /// case-insensitive.
  ArchConfig& set(std::string_view key, T value) {
    table_.insert_or_assign(normalise(key), std::move(value));
    return *this;
  }

  /// The value for an arch key, through the fallbacks.
  const T& lookup(std::string_view arch_key) const { return *find(arch_key, "").second; }
  /// The same for a GPU: its arch_key, then the family of its architecture name.
  const T& lookup(const GpuInfo& gpu) const { return *find(gpu.arch_key, gpu.architecture).second; }

  /// Which entry a lookup uses: the matching key, or "default".
  std::string resolve(std::string_view arch_key) const { return find(arch_key, "").first; }
  std::string resolve(const GpuInfo& gpu) const {
    return find(gpu.arch_key, gpu.architecture).first;
  }

  const T& fallback() const { return fallback_; }

 private:
  static std::string normalise(std::string_view key) {
    std::string out;
    for (char c : key)
      if (c != ' ') out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return out;
  }

  std::pair<std::string, const T*> find(std::string_view arch_key,
                                        std::string_view architecture) const {
    auto key = normalise(arch_key);
    auto hit = [&](const std::string& k) -> const T* {
      if (k.empty()) return nullptr;
      auto it = table_.find(k);
      return it == table_.end() ? nullptr : &it->second;
    };
    if (auto* v = hit(key)) return {key, v};
    // sm_90a / sm_100f: the same generation without the architecture-specific features.
    if (key.size() > 4 && key.rfind("sm_", 0) == 0 && (key.back() == 'a' || key.back() == 'f')) {
      auto base = key.substr(0, key.size() - 1);
      if (auto* v = hit(base)) return {base, v};
    }
    auto family = arch_family(key);
    if (family.empty()) family = family_key(architecture);
    if (auto* v = hit(family)) return {family, v};
    return {"default", &fallback_};
  }

  T fallback_;
  std::map<std::string, T, std::less<>> table_;
};

}  // namespace mainboard
