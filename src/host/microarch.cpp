#include "host/microarch.hpp"

#include <array>
#include <utility>

namespace mainboard::host {

std::string x86_vendor_name(const std::string& vendor_id) {
  if (vendor_id == "GenuineIntel") return "Intel";
  if (vendor_id == "AuthenticAMD") return "AMD";
  if (vendor_id == "HygonGenuine") return "Hygon";
  if (vendor_id == "CentaurHauls" || vendor_id == "  Shanghai  ") return "Zhaoxin";
  return vendor_id;
}

std::string arm_implementer_name(int implementer) {
  // Implementer codes: Arm Architecture Reference Manual, MIDR_EL1 (and the kernel's cputype.h).
  switch (implementer) {
    case 0x41: return "ARM";
    case 0x42: return "Broadcom";
    case 0x43: return "Cavium";
    case 0x46: return "Fujitsu";
    case 0x48: return "HiSilicon";
    case 0x4e: return "NVIDIA";
    case 0x50: return "APM";
    case 0x51: return "Qualcomm";
    case 0x61: return "Apple";
    case 0x6d: return "Microsoft";
    case 0xc0: return "Ampere";
    default: return "";
  }
}

std::string x86_microarchitecture(const std::string& vendor, int family, int model, int stepping) {
  if (vendor == "Intel" && family == 6) {
    // Model numbers: Linux arch/x86/include/asm/intel-family.h.
    switch (model) {
      case 0x2D: return "Sandy Bridge-EP";
      case 0x3E: return "Ivy Bridge-EP";
      case 0x3F: return "Haswell-X";
      case 0x4F: return "Broadwell-X";
      case 0x56: return "Broadwell-D";
      case 0x55:
        // One model number, three generations told apart by stepping.
        if (stepping >= 10) return "Cooper Lake";
        if (stepping >= 5) return "Cascade Lake";
        return "Skylake-SP";
      case 0x6A: return "Ice Lake-SP";
      case 0x6C: return "Ice Lake-D";
      case 0x8F: return "Sapphire Rapids";
      case 0xCF: return "Emerald Rapids";
      case 0xAD: return "Granite Rapids";
      case 0xAE: return "Granite Rapids-D";
      case 0xAF: return "Sierra Forest";
      case 0xB6: return "Grand Ridge";
      case 0xDD: return "Clearwater Forest";
      case 0x57: return "Knights Landing";
      case 0x85: return "Knights Mill";
      case 0x4E:
      case 0x5E: return "Skylake";
      case 0x8E:
      case 0x9E: return "Kaby Lake";
      case 0xA5:
      case 0xA6: return "Comet Lake";
      case 0x7D:
      case 0x7E: return "Ice Lake";
      case 0x8C:
      case 0x8D: return "Tiger Lake";
      case 0xA7: return "Rocket Lake";
      case 0x97:
      case 0x9A: return "Alder Lake";
      case 0xB7:
      case 0xBA:
      case 0xBF: return "Raptor Lake";
      case 0xAA:
      case 0xAC: return "Meteor Lake";
      case 0xBD: return "Lunar Lake";
      case 0xC5:
      case 0xC6: return "Arrow Lake";
      case 0xCC: return "Panther Lake";
      default: return "";
    }
  }
  if (vendor == "AMD") {
    // Family/model ranges: AMD Processor Programming References and the kernel's amd.c.
    if (family == 0x17) {
      if (model == 0x08 || model == 0x18) return "Zen+";
      return model < 0x30 ? "Zen" : "Zen 2";
    }
    if (family == 0x19) {
      if ((model >= 0x10 && model <= 0x1F) || (model >= 0x60 && model <= 0x7F)) return "Zen 4";
      if (model >= 0xA0 && model <= 0xAF) return "Zen 4c";
      return "Zen 3";
    }
    if (family == 0x1A) return "Zen 5";
    if (family == 0x15) return "Bulldozer family";
    return "";
  }
  if (vendor == "Hygon" && family == 0x18) return "Dhyana";
  return "";
}

std::string arm_microarchitecture(int implementer, int part) {
  static constexpr std::array<std::pair<int, const char*>, 26> kArm = {{
      {0xd03, "Cortex-A53"},  {0xd07, "Cortex-A57"},  {0xd08, "Cortex-A72"},
      {0xd0b, "Cortex-A76"},  {0xd0c, "Neoverse-N1"}, {0xd40, "Neoverse-V1"},
      {0xd41, "Cortex-A78"},  {0xd44, "Cortex-X1"},   {0xd46, "Cortex-A510"},
      {0xd47, "Cortex-A710"}, {0xd48, "Cortex-X2"},   {0xd49, "Neoverse-N2"},
      {0xd4a, "Neoverse-E1"}, {0xd4d, "Cortex-A715"}, {0xd4e, "Cortex-X3"},
      {0xd4f, "Neoverse-V2"}, {0xd80, "Cortex-A520"}, {0xd81, "Cortex-A720"},
      {0xd82, "Cortex-X4"},   {0xd84, "Neoverse-V3"}, {0xd85, "Cortex-X925"},
      {0xd87, "Cortex-A725"}, {0xd8e, "Neoverse-N3"}, {0xd0d, "Cortex-A77"},
      {0xd05, "Cortex-A55"},  {0xd0a, "Cortex-A75"},
  }};
  switch (implementer) {
    case 0x41:
      for (auto [p, name] : kArm)
        if (p == part) return name;
      return "";
    case 0x4e:
      if (part == 0x004) return "Carmel";
      if (part == 0x003) return "Denver 2";
      return "";
    case 0xc0:
      if (part == 0xac3 || part == 0xac4 || part == 0xac5) return "AmpereOne";
      return "";
    case 0x46: return part == 0x001 ? "A64FX" : "";
    case 0x48: return part == 0xd01 ? "TaiShan v110" : (part == 0xd02 ? "TaiShan v120" : "");
    case 0x43: return part == 0x0af ? "ThunderX2" : "";
    case 0x51: return part == 0x001 ? "Oryon" : "";
    case 0x61: {
      // Apple cores under Linux (Asahi): the part tells the generation.
      if (part >= 0x022 && part <= 0x029) return "Apple M1";
      if (part >= 0x032 && part <= 0x039) return "Apple M2";
      return "Apple";
    }
    default: return "";
  }
}

}  // namespace mainboard::host
