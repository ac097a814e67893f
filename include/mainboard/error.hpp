#pragma once

#include <stdexcept>
#include <string>

#include "mainboard/export.hpp"

namespace mainboard {

/// Thrown by operations on user input: a file to load, a command-line argument, a process to
/// start or attach to. The message names the file, field or pid concerned. Probes of the machine
/// never throw: a reading they cannot take is marked unsupported instead.
class MAINBOARD_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace mainboard
