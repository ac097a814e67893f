#include "mainboard/meter.hpp"

#include <fstream>
#include <sstream>

#include "core/region_energy.hpp"
#include "mainboard/machine.hpp"
#include "meter/process_tree.hpp"

namespace mainboard {

struct Meter::Energy {
  detail::EnergyTracker tracker;
};

Meter::Meter(const Machine& machine)
    : machine_(&machine), start_(std::chrono::steady_clock::now()) {
  sample();
  // The energy's first reading is the tracker's own: after the first sample, not again in it.
  energy_ = std::make_unique<Energy>(Energy{detail::EnergyTracker(machine, true)});
}

Meter::Meter(Meter&& other) noexcept
    : machine_(other.machine_),
      start_(other.start_),
      end_(other.end_),
      stopped_(other.stopped_),
      samples_(other.samples_),
      peak_host_(other.peak_host_),
      peak_gpu_(other.peak_gpu_),
      first_host_(other.first_host_),
      last_host_(other.last_host_),
      peak_rss_(other.peak_rss_),
      peak_pss_(other.peak_pss_),
      hwm_at_start_(other.hwm_at_start_),
      energy_(std::move(other.energy_)) {
  other.stopped_ = true;  // the moved-from meter takes no final sample
}

Meter::~Meter() {
  stop();
}

namespace {

/// A small /proc/self file whole (this process's own: never under a sysroot).
std::string read_self(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

void Meter::sample() {
  if (stopped_) return;
  ++samples_;
  auto host = machine_->memory();
  if (host && host->used_bytes) {
    peak_host_ = std::max(peak_host_, *host->used_bytes);
    if (!first_host_) first_host_ = host->used_bytes;
    last_host_ = host->used_bytes;
  }
  std::uint64_t gpu = 0;
  for (const auto& g : machine_->gpus()) {
    auto m = g->memory();
    // A pool that is the host's own memory (Apple silicon, NPUs working out of RAM) is counted
    // in peak_host already. A coherent GPU's HBM (GH200) is the device's memory: it counts.
    if (m && m->used_bytes && m->scope == "vram") gpu += *m->used_bytes;
  }
  peak_gpu_ = std::max(peak_gpu_, gpu);

  auto status = read_self("/proc/self/status");
  auto rss = proctree::kib_field(status, "VmRSS");
  auto hwm = proctree::kib_field(status, "VmHWM");
  if (rss) peak_rss_ = std::max(peak_rss_, *rss * 1024);
  if (hwm) {
    if (!hwm_at_start_)
      hwm_at_start_ = *hwm;
    else if (*hwm > *hwm_at_start_)
      peak_rss_ = std::max(peak_rss_, *hwm * 1024);
  }
  if (auto pss = proctree::kib_field(read_self("/proc/self/smaps_rollup"), "Pss"))
    peak_pss_ = std::max(peak_pss_, *pss * 1024);
  if (energy_) energy_->tracker.sample();
}

RegionEnergy Meter::energy() const {
  if (!energy_) return {};
  return energy_->tracker.result(elapsed_s());
}

void Meter::stop() {
  if (stopped_) return;
  sample();
  end_ = std::chrono::steady_clock::now();
  stopped_ = true;
}

double Meter::elapsed_s() const {
  auto end = stopped_ ? end_ : std::chrono::steady_clock::now();
  return std::chrono::duration<double>(end - start_).count();
}

double Meter::peak_host_gb() const {
  return static_cast<double>(peak_host_) / kBytesPerGiB;
}
double Meter::peak_gpu_gb() const {
  return static_cast<double>(peak_gpu_) / kBytesPerGiB;
}

double Meter::host_delta_gb() const {
  if (!first_host_ || !last_host_) return 0.0;
  return (static_cast<double>(*last_host_) - static_cast<double>(*first_host_)) / kBytesPerGiB;
}

Meter meter() {
  return Meter(Machine::instance());
}

}  // namespace mainboard
