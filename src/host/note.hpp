#pragma once

#include <string>

#include "mainboard/snapshot.hpp"

namespace mainboard::host {

/// What a probe says about itself: ok, or why its readings are missing.
struct Note {
  ProbeStatus status = ProbeStatus::ok;
  std::string reason;

  void unsupported(std::string why) {
    if (status == ProbeStatus::ok) status = ProbeStatus::unsupported;
    if (!reason.empty()) reason += "; ";
    reason += std::move(why);
  }
  void failed(std::string why) {
    status = ProbeStatus::failed;
    if (!reason.empty()) reason += "; ";
    reason += std::move(why);
  }
  /// A reading the probe returns is unavailable: the probe says so, as the reading does.
  void unavailable(const Unavailable& why) {
    if (why.status == ProbeStatus::failed)
      failed(why.reason);
    else
      unsupported(why.reason);
  }
};

}  // namespace mainboard::host
