#pragma once

// The scenario both fake driver libraries answer from: a JSON file named by
// MAINBOARD_FAKE_GPU_SCENARIO, read when the library is initialised (nvmlInit / cuInit). A "%n"
// in it is the Slurm node's name (SLURMD_NODENAME), so that the nodes of a test cluster on one
// machine can each have GPUs of their own. "init_delay_ms" and "abort_on_init" at the top make
// nvmlInit hang or crash, as a broken driver does.
//
//   {"driver_version": "550.54.15", "nvml_version": "12.550.54.15", "cuda_driver_version": 12040,
//    "devices": [{"name", "uuid", "pci_bus_id", "pci_device_id", "cc": [9, 0], "sm_count",
//                 "memory_clock_khz", "bus_width", "pageable_memory_access",
//                 "concurrent_managed_access", "host_page_tables",
//                 "memory": {"total", "reserved", "used"}, "clocks": {…}, "max_clocks": {…},
//                 "utilization": {"gpu", "memory"}, "temperature", "slowdown", "shutdown",
//                 "clock_event_reasons", "power_mw", "power_limit_mw", "energy_mj",
//                 "pcie": {"tx_kbps", "rx_kbps", "gen", "width", "max_gen", "max_width"},
//                 "fan_pct", "processes": [{"pid", "used_memory"}],
//                 "mig": [{"uuid", "name", "gpu_instance_id", "compute_instance_id", "memory",
//                          "processes"}],
//                 "lost": false}]}
//
// A missing key reads as NOT_SUPPORTED. A number may be an array: each read returns the next
// element and then keeps the last (memory rising between samples). "lost": true makes every
// telemetry call answer GPU_IS_LOST while identity calls still work (a GPU lost mid-run).
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace fake {

using nlohmann::json;

struct Device {
  json spec;
  Device* parent = nullptr;  // set for MIG instances
  std::vector<std::unique_ptr<Device>> migs;
  std::map<std::string, std::size_t> reads;  // per-field read counters for arrays

  bool lost() const {
    const Device* root = parent ? parent : this;
    return root->spec.value("lost", false);
  }

  /// A number at a JSON pointer ("/memory/used"), advancing through arrays.
  std::optional<long long> number(const std::string& pointer) {
    json::json_pointer p(pointer);
    if (!spec.contains(p)) return std::nullopt;
    const json& v = spec.at(p);
    if (v.is_array()) {
      if (v.empty()) return std::nullopt;
      std::size_t& n = reads[pointer];
      std::size_t i = n < v.size() ? n : v.size() - 1;
      ++n;
      return v[i].is_number() ? std::optional<long long>(v[i].get<long long>()) : std::nullopt;
    }
    if (!v.is_number()) return std::nullopt;
    return v.get<long long>();
  }

  std::string text(const char* key) const { return spec.value(key, std::string()); }
};

struct Scenario {
  json root;
  std::vector<std::unique_ptr<Device>> devices;  // physical GPUs in NVML index order

  bool owns(const void* handle) const {
    for (const auto& d : devices) {
      if (d.get() == handle) return true;
      for (const auto& m : d->migs)
        if (m.get() == handle) return true;
    }
    return false;
  }
};

/// Reads the scenario file; an unreadable one is an empty machine.
inline std::unique_ptr<Scenario> load_scenario() {
  auto s = std::make_unique<Scenario>();
  const char* named = std::getenv("MAINBOARD_FAKE_GPU_SCENARIO");
  if (!named) return s;
  std::string path = named;
  if (auto at = path.find("%n"); at != std::string::npos) {
    const char* node = std::getenv("SLURMD_NODENAME");
    path.replace(at, 2, node ? node : "");
  }
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  s->root = json::parse(ss.str(), nullptr, false);
  if (!s->root.is_object()) s->root = json::object();
  for (const auto& d : s->root.value("devices", json::array())) {
    auto dev = std::make_unique<Device>();
    dev->spec = d;
    for (const auto& m : d.value("mig", json::array())) {
      auto mig = std::make_unique<Device>();
      mig->spec = m;
      mig->parent = dev.get();
      dev->migs.push_back(std::move(mig));
    }
    s->devices.push_back(std::move(dev));
  }
  return s;
}

inline void copy_string(const std::string& s, char* out, unsigned length) {
  if (!out || length == 0) return;
  std::size_t n = s.size() < length - 1 ? s.size() : length - 1;
  s.copy(out, n);
  out[n] = '\0';
}

}  // namespace fake
