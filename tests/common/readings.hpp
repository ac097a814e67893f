#pragma once

// A machine snapshot as JSON without what differs from one reading of the same host to the
// next (times, probe durations), for tests that compare two snapshots of one host.

#include <nlohmann/json.hpp>

inline nlohmann::json without_times(nlohmann::json j) {
  j.erase("timestamp_ns");
  j.erase("unix_time_ns");
  for (auto& d : j["diagnostics"])
    d.erase("duration_ns");
  for (auto& g : j["gpus"]) {
    g["telemetry"].erase("timestamp_ns");
    if (g.contains("unit_activity")) g["unit_activity"].erase("window_s");  // a measured time
  }
  for (auto& n : j["npus"])
    n["telemetry"].erase("timestamp_ns");
  return j;
}
