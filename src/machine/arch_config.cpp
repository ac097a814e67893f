#include "mainboard/arch_config.hpp"

#include <charconv>

#include "providers/amd/amd_gpu.hpp"
#include "providers/nvidia/arch.hpp"

namespace mainboard {

std::string family_key(std::string_view architecture) {
  std::string out;
  for (char c : architecture) {
    if (c == ' ') continue;
    if (c == '(') break;  // "GCN 5 (Vega)" → "gcn5"
    out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  return out;
}

std::string arch_family(std::string_view key) {
  std::string k;
  for (char c : key)
    k += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (k.rfind("sm_", 0) == 0) {
    // sm_<major><minor>[a|f]: the minor is the last digit.
    std::string digits;
    for (char c : k.substr(3)) {
      if (c < '0' || c > '9') break;
      digits += c;
    }
    if (digits.size() < 2) return "";
    int major = 0, minor = digits.back() - '0';
    auto [_, ec] = std::from_chars(digits.data(), digits.data() + digits.size() - 1, major);
    if (ec != std::errc()) return "";
    auto name = nvidia::architecture_name(major, minor);
    return name.rfind("unknown", 0) == 0 ? "" : family_key(name);
  }
  if (k.rfind("gfx", 0) == 0) return family_key(amd::architecture_for(k));
  return "";
}

}  // namespace mainboard
