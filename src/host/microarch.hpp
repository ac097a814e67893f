#pragma once

#include <optional>
#include <string>

namespace mainboard::host {

/// Vendor name from /proc/cpuinfo's vendor_id (x86) or the Arm implementer code.
std::string x86_vendor_name(const std::string& vendor_id);
std::string arm_implementer_name(int implementer);

/// Microarchitecture names for the parts HPC and ML machines use. Empty when the part is not
/// in the tables: an honest blank beats a guess.
std::string x86_microarchitecture(const std::string& vendor, int family, int model, int stepping);
std::string arm_microarchitecture(int implementer, int part);

}  // namespace mainboard::host
