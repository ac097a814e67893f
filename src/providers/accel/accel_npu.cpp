// NPUs of the Linux accel class. Sources: the kernel's Documentation/accel/, the intel_vpu
// (ivpu) driver's sysfs (npu_busy_time_us, npu_current_frequency_mhz, npu_max_frequency_mhz,
// npu_memory_utilization), amdxdna's PCI table, and the habanalabs sysfs ABI
// (Documentation/ABI/testing/sysfs-driver-habanalabs: device_type, clk_cur_freq_mhz,
// clk_max_freq_mhz, max_power, status). Every driver puts its attributes on the PCI device
// (accelN/device/…), not on the class device.
#include "providers/accel/accel_npu.hpp"

#include "core/clock.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "host/probes.hpp"
#include "providers/sysfs/pci.hpp"

namespace mainboard {

AccelNpu::AccelNpu(NpuInfo info, std::string attribute_dir, std::shared_ptr<const core::Fs> fs)
    : info_(std::move(info)), dir_(std::move(attribute_dir)), fs_(std::move(fs)) {}

Reading<Memory> AccelNpu::memory() const {
  // None of these drivers reports a dedicated pool through sysfs: Intel and AMD client NPUs
  // work out of system memory (unified); Gaudi's HBM size is not in its sysfs ABI.
  if (info_.driver == "habanalabs")
    return Reading<Memory>::none("the habanalabs sysfs ABI does not report device memory");
  auto m = host::read_system_memory(*fs_, "unified", true);
  if (!m) return m;
  if (auto used = fs_->read_u64(dir_ + "/npu_memory_utilization")) {
    // What the NPU has mapped, of the shared pool.
    m->used_bytes = *used;
    m->free_bytes = m->total_bytes > *used ? m->total_bytes - *used : 0;
    m->source = MemorySource::npu_memory_utilization;
  }
  return m;
}

std::vector<ClockReading> AccelNpu::clock_readings() const {
  ClockReading r;
  r.domain = "npu";
  r.source = "sysfs";
  auto read = [&](const std::string& path) -> std::optional<double> {
    if (auto v = fs_->read_u64(path)) return static_cast<double>(*v);
    return std::nullopt;
  };
  // intel_vpu reports 0 MHz while the NPU is power-gated: that is a real reading.
  r.current_mhz = read(dir_ + "/npu_current_frequency_mhz");
  r.max_mhz = read(dir_ + "/npu_max_frequency_mhz");
  if (!r.current_mhz) r.current_mhz = read(dir_ + "/clk_cur_freq_mhz");
  if (!r.max_mhz) r.max_mhz = read(dir_ + "/clk_max_freq_mhz");
  if (!r.current_mhz && !r.max_mhz) return {};
  return {r};
}

Reading<Utilization> AccelNpu::utilization() const {
  Utilization u;
  auto busy = fs_->read_u64(dir_ + "/npu_busy_time_us");
  if (!busy) return Reading<Utilization>::none("this driver exposes no busy time");
  auto now = core::monotonic_ns();
  std::lock_guard<std::mutex> lock(mutex_);
  auto last = last_busy_;
  last_busy_ = std::make_pair(now, *busy);
  if (!last || now <= last->first || *busy < last->second)
    return Reading<Utilization>::none(
        "npu_busy_time_us is cumulative: a second reading gives the share");
  double wall_us = static_cast<double>(now - last->first) / 1000.0;
  double busy_us = static_cast<double>(*busy - last->second);
  u.compute_pct = std::min(100.0, 100.0 * busy_us / wall_us);
  return u;
}

Reading<Energy> AccelNpu::energy() const {
  // The limit only (max_power, mW): the draw is not in this driver's sysfs.
  auto mw = fs_->read_u64(dir_ + "/max_power");
  if (!mw) return Reading<Energy>::none("power is not exposed by this driver's sysfs");
  Energy e;
  e.power_limit_w = static_cast<double>(*mw) / 1000.0;
  return e;
}

namespace accel {

Identity identify(const std::string& driver, unsigned vendor_id, unsigned device_id,
                  const std::string& device_type) {
  (void)vendor_id;
  if (driver == "intel_vpu") {
    // drivers/accel/ivpu/ivpu_drv.h: PCI ids by platform, and the NPU IP generation.
    switch (device_id) {
      case 0x7d1d: return {"Intel NPU (Meteor Lake)", "Intel", "NPU 37xx"};
      case 0xad1d: return {"Intel NPU (Arrow Lake)", "Intel", "NPU 37xx"};
      case 0x643e: return {"Intel NPU (Lunar Lake)", "Intel", "NPU 40xx"};
      case 0xb03e: return {"Intel NPU (Panther Lake)", "Intel", "NPU 50xx"};
      case 0xfd3e: return {"Intel NPU (Wildcat Lake)", "Intel", "NPU 50xx"};
      case 0xd71d: return {"Intel NPU (Nova Lake)", "Intel", "NPU 60xx"};
      default: return {"Intel NPU", "Intel", ""};
    }
  }
  if (driver == "amdxdna") {
    // device_type holds the vbnv here ("RyzenAI-npu5"): npu1 is the first XDNA (Phoenix, Hawk
    // Point), npu4 and later XDNA 2 (Strix and newer).
    std::string arch = device_id == 0x1502 ? "XDNA" : "XDNA 2";
    if (device_type == "RyzenAI-npu1") arch = "XDNA";
    std::string label = "AMD Ryzen AI NPU";
    if (!device_type.empty()) label += " (" + device_type + ")";
    return {label, "AMD", arch};
  }
  if (driver == "habanalabs") {
    // device_type: GOYA, GAUDI, GAUDI2, GAUDI2B, GAUDI3, "GAUDI2 HL-288" …
    auto type = core::to_lower(device_type);
    if (core::starts_with(type, "goya")) return {"Habana Goya", "Intel", "Goya"};
    std::string generation;
    if (core::starts_with(type, "gaudi3"))
      generation = " 3";
    else if (core::starts_with(type, "gaudi2"))
      generation = " 2";
    else if (type.empty())
      generation = device_id == 0x1060 ? " 3" : device_id == 0x1020 ? " 2" : "";
    std::string label = "Intel Gaudi" + generation;
    if (!device_type.empty()) label += " (" + device_type + ")";
    return {label, "Intel", "Gaudi" + generation};
  }
  if (driver == "qaic") return {"Qualcomm Cloud AI 100", "Qualcomm", "AIC100"};
  return {driver.empty() ? "accelerator" : driver + " accelerator", "", ""};
}

namespace {

void add(const providers::Context& context, const std::string& class_dir, bool legacy_class,
         std::vector<std::shared_ptr<Npu>>& out) {
  const auto& fs = *context.fs;
  auto pci = providers::sysfs::pci_device(fs, class_dir);
  NpuInfo info;
  info.index = static_cast<std::uint32_t>(out.size());
  info.provider = "accel";
  std::string device_dir = class_dir + "/device";
  if (pci) {
    info.driver = pci->driver;
    info.pci_bus_id = pci->bus_id;
    device_dir = pci->dir;
  } else {
    info.driver = fs.link_name(device_dir + "/driver").value_or("");
  }
  // The drivers put their attributes on the PCI device: habanalabs' device_type, amdxdna's
  // vbnv (its device_type is a number).
  std::string attrs = legacy_class ? class_dir : device_dir;
  std::string type = info.driver == "amdxdna" ? fs.read_line(attrs + "/vbnv").value_or("")
                                              : fs.read_line(attrs + "/device_type").value_or("");
  auto id = identify(info.driver, pci ? pci->vendor_id : 0, pci ? pci->device_id : 0, type);
  info.label = id.label;
  info.vendor = id.vendor;
  info.architecture = id.architecture;
  out.push_back(std::make_shared<AccelNpu>(std::move(info), legacy_class ? class_dir : device_dir,
                                           context.fs));
}

}  // namespace

std::vector<std::shared_ptr<Npu>> probe_npus(const providers::Context& context, host::Note& note) {
  const auto& fs = *context.fs;
  std::vector<std::shared_ptr<Npu>> out;
  std::string accel = core::paths::kSysClassAccel;
  for (const auto& name : fs.list(accel))
    if (core::starts_with(name, "accel")) add(context, accel + "/" + name, false, out);
  // Kernels before the accel class (6.2) register Gaudi devices under their own class.
  if (out.empty()) {
    std::string hl = core::paths::kSysClassHabanalabs;
    for (const auto& name : fs.list(hl))
      if (core::starts_with(name, "hl")) add(context, hl + "/" + name, true, out);
  }
  if (out.empty()) note.unsupported("no device under /sys/class/accel");
  return out;
}

}  // namespace accel

}  // namespace mainboard
