#pragma once

#include <string>

#include "host/note.hpp"
#include "providers/provider.hpp"

namespace mainboard::accel {

/// Name and architecture for a known accelerator (driver + PCI device id); the driver name
/// alone otherwise.
struct Identity {
  std::string label;
  std::string vendor;
  std::string architecture;
};
Identity identify(const std::string& driver, unsigned vendor_id, unsigned device_id,
                  const std::string& device_type);

std::vector<std::shared_ptr<Npu>> probe_npus(const providers::Context& context, host::Note& note);

}  // namespace mainboard::accel
