#pragma once

#include <string>

#include "mainboard/energy.hpp"

namespace mainboard::view {

/// A region's energy on one line: "123.4 J (CPU 80.1 J, DRAM 12.3 J, GPU0 31.0 J) · 41.1 W
/// mean", then what could not be read ("; not read: gpu1: …"); "unavailable (why)" where
/// nothing could. Reasons are made safe for a terminal.
std::string energy_text(const RegionEnergy& energy);

}  // namespace mainboard::view
