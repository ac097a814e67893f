#pragma once

#include <string>

#include "mainboard/snapshot.hpp"
#include "view/format.hpp"

namespace mainboard::view {

/// The human summary of a snapshot: one labelled block per part, unsupported parts saying why.
std::string render_summary(const MachineSnapshot& snapshot, const Style& style);
/// The toolchain table and the CMake configuration.
std::string render_toolchain(const Toolchain& toolchain, const CompilerConfig& compilers,
                             const Style& style, const std::string& note = "");

}  // namespace mainboard::view
