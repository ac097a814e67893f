#include "mainboard/meter.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "core/region_energy.hpp"
#include "mainboard/machine.hpp"
#include "meter/process_tree.hpp"

namespace mainboard {

struct Meter::Energy {
  detail::EnergyTracker tracker;
};

namespace {

/// A small /proc/self file whole (this process's own: never under a sysroot).
std::string read_self(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<std::uint64_t> self_hwm_bytes() {
  auto kib = proctree::kib_field(read_self("/proc/self/status"), "VmHWM");
  return kib ? std::optional<std::uint64_t>(*kib * 1024) : std::nullopt;
}

}  // namespace

/// The meters that reset the high-water mark and still run: a reset by one wipes a peak the
/// others have not sampled, so it is handed to each of them first.
struct Meter::HwmSlot {
  std::atomic<std::uint64_t> wiped{0};
};

namespace {

std::mutex g_hwm_mutex;
std::vector<std::weak_ptr<void>>& hwm_slots() {
  static std::vector<std::weak_ptr<void>> slots;
  return slots;
}

}  // namespace

Meter::Meter(const Machine& machine)
    : machine_(&machine), start_(std::chrono::steady_clock::now()) {
  // The kernel's high-water mark from here on: what it held before goes to the running meters.
  {
    std::lock_guard lock(g_hwm_mutex);
    auto before = self_hwm_bytes();
    int fd = ::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      bool reset = ::write(fd, "5", 1) == 1;
      ::close(fd);
      if (reset) {
        auto& slots = hwm_slots();
        std::erase_if(slots, [](const std::weak_ptr<void>& w) { return w.expired(); });
        for (const auto& w : slots)
          if (auto slot = std::static_pointer_cast<HwmSlot>(w.lock()); slot && before) {
            auto seen = slot->wiped.load();
            while (seen < *before && !slot->wiped.compare_exchange_weak(seen, *before)) {
            }
          }
        hwm_reset_ = std::make_shared<HwmSlot>();
        slots.push_back(std::static_pointer_cast<void>(hwm_reset_));
      }
    }
  }
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
      rss_at_start_(other.rss_at_start_),
      pss_at_start_(other.pss_at_start_),
      hwm_at_start_(other.hwm_at_start_),
      hwm_reset_(std::move(other.hwm_reset_)),
      energy_(std::move(other.energy_)) {
  other.stopped_ = true;  // the moved-from meter takes no final sample
}

Meter::~Meter() {
  stop();
}

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
  bool first = samples_ == 1;
  if (rss) {
    peak_rss_ = std::max(peak_rss_, *rss * 1024);
    if (first) rss_at_start_ = *rss * 1024;
  }
  if (hwm) {
    if (hwm_reset_) {
      // Reset at entry: the mark is this region's peak, and those other meters' resets wiped.
      peak_rss_ = std::max({peak_rss_, *hwm * 1024, hwm_reset_->wiped.load()});
    } else if (!hwm_at_start_) {
      hwm_at_start_ = *hwm;
    } else if (*hwm > *hwm_at_start_) {
      peak_rss_ = std::max(peak_rss_, *hwm * 1024);
    }
  }
  if (auto pss = proctree::kib_field(read_self("/proc/self/smaps_rollup"), "Pss")) {
    peak_pss_ = std::max(peak_pss_, *pss * 1024);
    if (first) pss_at_start_ = *pss * 1024;
  }
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
