#include "mainboard/busy.hpp"

#include <chrono>
#include <thread>

#include "mainboard/error.hpp"
#include "mainboard/machine.hpp"

namespace mainboard {

bool gpu_busy(const Machine& machine, std::size_t index, const BusyThresholds& thresholds) {
  const auto& gpus = machine.gpus();
  if (gpus.empty()) return false;
  if (index >= gpus.size())
    throw Error("no GPU " + std::to_string(index) + " (this host has " +
                std::to_string(gpus.size()) + ")");
  const auto& gpu = *gpus[index];
  auto util = gpu.utilization();
  if (util && util->compute_pct && *util->compute_pct > thresholds.util_pct) return true;
  auto mem = gpu.memory();
  return mem && mem->total_bytes > 0 && mem->percent_used() > thresholds.memory_pct;
}

bool gpu_busy(std::size_t index, const BusyThresholds& thresholds) {
  return gpu_busy(Machine::instance(), index, thresholds);
}

bool wait_for_idle(const Machine& machine, std::size_t index, double timeout_s,
                   double poll_interval_s, const BusyThresholds& thresholds,
                   const std::function<void(double)>& sleep) {
  auto wait = sleep ? sleep : [](double s) {
    std::this_thread::sleep_for(std::chrono::duration<double>(s));
  };
  if (poll_interval_s <= 0) poll_interval_s = 0.5;
  double elapsed = 0;
  while (gpu_busy(machine, index, thresholds)) {
    if (elapsed >= timeout_s) return false;
    double step = std::min(poll_interval_s, timeout_s - elapsed);
    wait(step);
    elapsed += step;
  }
  return true;
}

}  // namespace mainboard
