#include "core/region_energy.hpp"

#include "mainboard/gpu.hpp"
#include "mainboard/machine.hpp"

namespace mainboard::detail {

EnergyTracker::EnergyTracker(const Machine& machine, bool gpus) : machine_(&machine) {
  auto reading = machine.reading("energy_counters");
  const auto& counters = reading.energy_counters;
  if (!counters) {
    rapl_why_ = counters.reason().empty() ? "RAPL energy counters not read" : counters.reason();
  } else {
    // Packages and DRAM only: core and uncore are parts of their package, psys is the whole
    // platform; either would count some energy twice.
    for (const auto& c : counters->counters)
      if (c.domain == "package" || c.domain == "dram")
        rapl_[c.zone] = RaplZone{c.domain, c.energy_uj, c.max_energy_range_uj, 0, {}};
    if (rapl_.empty()) rapl_why_ = "no RAPL package or dram counter";
    // Counters the probe left out (unreadable, malformed): their energy is missing from the sums.
    if (const auto* d = reading.diagnostic("energy_counters")) rapl_left_out_ = d->reason;
  }
  if (gpus)
    for (const auto& gpu : machine.gpus()) {
      GpuCounter g;
      g.gpu = gpu;
      g.name = "gpu" + std::to_string(gpu->info().index);
      g.uuid = gpu->uuid();
      gpus_.push_back(std::move(g));
    }
  read_gpus();
}

void EnergyTracker::sample() {
  read_rapl();
  read_gpus();
  last_read_ = std::chrono::steady_clock::now();
}

void EnergyTracker::sample_if_due() {
  if (std::chrono::steady_clock::now() - last_read_ >= std::chrono::seconds(1)) sample();
}

void EnergyTracker::read_rapl() {
  if (rapl_.empty()) return;
  auto counters = machine_->reading("energy_counters").energy_counters;
  if (!counters) return;  // unreadable this time: the next reading covers the gap
  for (const auto& c : counters->counters) {
    auto it = rapl_.find(c.zone);
    if (it == rapl_.end()) continue;
    RaplZone& z = it->second;
    if (c.energy_uj >= z.last_uj) {
      z.used_uj += static_cast<double>(c.energy_uj - z.last_uj);
    } else if (z.max_uj) {
      // Wrapped: up to the range's end, then from 0 (powercap's energy_uj runs 0..max).
      z.used_uj += static_cast<double>(*z.max_uj - z.last_uj) + static_cast<double>(c.energy_uj);
    } else if (z.broken.empty()) {
      z.broken = c.zone + " went back with no max_energy_range_uj to correct the wrap";
    }
    z.last_uj = c.energy_uj;
  }
}

void EnergyTracker::read_gpus() {
  for (auto& g : gpus_) {
    auto e = g.gpu->energy();
    if (e && e->energy_j) {
      if (!g.first_j) g.first_j = e->energy_j;
      g.last_j = e->energy_j;
    } else if (!g.first_j && g.why.empty()) {
      g.why = !e ? e.reason()
              : g.gpu->info().provider == "nvidia"
                  ? "no total energy counter (NVML offers one from Volta on)"
                  : "no total energy counter";
      if (g.why.empty()) g.why = "no energy reading";
    }
  }
}

RegionEnergy EnergyTracker::result(double seconds) const {
  RegionEnergy out;
  auto add = [&](std::string domain, std::string source, double joules) {
    DomainEnergy d{std::move(domain), std::move(source), joules,
                   seconds > 0 ? joules / seconds : 0.0};
    out.total_j = out.total_j.value_or(0) + joules;
    out.domains.push_back(std::move(d));
  };
  if (!rapl_why_.empty()) {
    out.unavailable.push_back("cpu, dram: " + rapl_why_);
  } else {
    if (!rapl_left_out_.empty()) out.unavailable.push_back("RAPL: " + rapl_left_out_);
    for (const char* domain : {"package", "dram"}) {
      std::string name = std::string(domain) == "package" ? "cpu" : "dram";
      std::string zones, broken;
      double uj = 0;
      for (const auto& [zone, z] : rapl_) {
        if (z.domain != domain) continue;
        if (!z.broken.empty()) broken += (broken.empty() ? "" : "; ") + z.broken;
        zones += (zones.empty() ? "RAPL " : ", ") + zone;
        uj += z.used_uj;
      }
      if (!broken.empty())
        out.unavailable.push_back(name + ": " + broken);
      else if (zones.empty() && rapl_left_out_.empty())
        out.unavailable.push_back(name + ": this CPU's RAPL has no " + domain + " domain");
      else if (!zones.empty())
        add(name, zones, uj / 1e6);
    }
  }
  for (const auto& g : gpus_) {
    if (!g.first_j) {
      out.unavailable.push_back(g.name + ": " + g.why);
    } else if (*g.last_j < *g.first_j) {
      out.unavailable.push_back(g.name + ": its energy counter went back (driver reloaded?)");
    } else {
      add(g.name, g.uuid, *g.last_j - *g.first_j);
    }
  }
  if (out.total_j && seconds > 0) out.mean_w = *out.total_j / seconds;
  return out;
}

}  // namespace mainboard::detail
