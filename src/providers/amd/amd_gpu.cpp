// AMD GPUs through the amdgpu kernel driver's sysfs files. Sources: the kernel documentation of
// drivers/gpu/drm/amd/pm/amdgpu_pm.c (pp_dpm_*, gpu_busy_percent, hwmon) and amdgpu_vram_mgr.c
// (mem_info_*), and the KFD topology (drivers/gpu/drm/amd/amdkfd/kfd_topology.c).
#include "providers/amd/amd_gpu.hpp"

#include <algorithm>
#include <cstdio>

#include "core/paths.hpp"
#include "core/text.hpp"
#include "providers/sysfs/pci.hpp"

namespace mainboard {

AmdGpu::AmdGpu(GpuInfo info, std::string device_dir, std::shared_ptr<const core::Fs> fs)
    : info_(std::move(info)), dir_(std::move(device_dir)), fs_(std::move(fs)) {}

namespace amd {

std::optional<DpmTable> parse_dpm_table(std::string_view text) {
  DpmTable t;
  for (auto raw : core::split_lines(text)) {
    // "1: 1800Mhz *", with a star on the current clock and, on some tables, a trailing space
    // on the others. SMU 13 prints "S: 133Mhz *" while in deep sleep, and "0: min / 1: now * /
    // 2: max" when the clock sits between levels: the middle line is then a reading, not a
    // level. Levels are listed in rising order, so min is the first numbered line and max the
    // last, whichever line carries the star.
    auto line = core::trim(raw);
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    auto label = core::trim(line.substr(0, colon));
    auto rest = core::trim(line.substr(colon + 1));
    bool current = !rest.empty() && rest.back() == '*';
    if (current) rest = core::trim(rest.substr(0, rest.size() - 1));
    auto lower = core::to_lower(rest);
    auto pos = lower.find("mhz");
    if (pos == std::string::npos) continue;
    auto mhz = core::parse_double(lower.substr(0, pos));
    if (!mhz || *mhz <= 0 || *mhz > 1e6) continue;
    if (current) t.current_mhz = *mhz;
    if (core::parse_u64(label)) t.levels_mhz.push_back(*mhz);
  }
  if (t.levels_mhz.empty() && !t.current_mhz) return std::nullopt;
  return t;
}

std::string gfx_target(std::uint64_t version) {
  // gfx_target_version = major * 10000 + minor * 100 + stepping; the name prints minor and
  // stepping as hex digits: 90402 → gfx942, 90010 → gfx90a, 110000 → gfx1100.
  unsigned major = static_cast<unsigned>(version / 10000);
  unsigned minor = static_cast<unsigned>((version / 100) % 100);
  unsigned stepping = static_cast<unsigned>(version % 100);
  if (major == 0 || minor > 15 || stepping > 15) return {};
  const char* hex = "0123456789abcdef";
  return "gfx" + std::to_string(major) + hex[minor] + hex[stepping];
}

std::string architecture_for(const std::string& gfx) {
  if (gfx == "gfx908") return "CDNA";
  if (gfx == "gfx90a") return "CDNA 2";
  if (gfx == "gfx940" || gfx == "gfx941" || gfx == "gfx942") return "CDNA 3";
  if (gfx == "gfx906") return "GCN 5.1 (Vega 20)";
  if (gfx == "gfx950") return "CDNA 4";
  if (core::starts_with(gfx, "gfx103")) return "RDNA 2";
  if (core::starts_with(gfx, "gfx101")) return "RDNA";
  if (core::starts_with(gfx, "gfx11")) return "RDNA 3";
  if (core::starts_with(gfx, "gfx12")) return "RDNA 4";
  if (core::starts_with(gfx, "gfx9")) return "GCN 5 (Vega)";
  return {};
}

std::string marketing_name(unsigned device_id, unsigned revision) {
  // Device ids (and, where one id covers several cards, the revision) from the amdgpu driver's
  // PCI table and libdrm's amdgpu.ids, for kernels that expose no product_name (consumer cards
  // have no FRU data, and kernels since 6.6 do not create the file for them).
  switch (device_id) {
    case 0x74a1: return "AMD Instinct MI300X";
    case 0x74b5: return "AMD Instinct MI300X VF";
    case 0x74a0: return "AMD Instinct MI300A";
    case 0x74a2: return "AMD Instinct MI308X";
    case 0x74a5: return "AMD Instinct MI325X";
    case 0x7408: return "AMD Instinct MI250X";
    case 0x740c: return "AMD Instinct MI250X / MI250";
    case 0x740f: return "AMD Instinct MI210";
    case 0x738c: return "AMD Instinct MI100";
    case 0x744c:
      switch (revision) {
        case 0xc8: return "AMD Radeon RX 7900 XTX";
        case 0xcc: return "AMD Radeon RX 7900 XT";
        case 0xce: return "AMD Radeon RX 7900 GRE";
        case 0xcf: return "AMD Radeon RX 7900M";
        default: return "AMD Radeon RX 7900 series";
      }
    case 0x7448: return "AMD Radeon PRO W7900";
    case 0x747e: return "AMD Radeon RX 7800 XT / 7700 XT";
    case 0x73bf: return "AMD Radeon RX 6900 XT / 6800 XT";
    case 0x7550: return "AMD Radeon RX 9070 XT / 9070";
    default: return {};
  }
}

std::string gfx_for_device(unsigned device_id) {
  // When the KFD topology is absent (no compute driver loaded): the ISA of known parts.
  switch (device_id) {
    case 0x74a0:
    case 0x74a1:
    case 0x74a2:
    case 0x74a5:
    case 0x74b5: return "gfx942";
    case 0x7408:
    case 0x740c:
    case 0x740f: return "gfx90a";
    case 0x738c: return "gfx908";
    case 0x744c:
    case 0x7448: return "gfx1100";
    case 0x747e: return "gfx1101";
    case 0x73bf: return "gfx1030";
    case 0x7550: return "gfx1201";
    default: return {};
  }
}

}  // namespace amd

namespace {

using core::Fs;

std::optional<std::uint64_t> u64(const Fs& fs, const std::string& path) {
  return fs.read_u64(path);
}

/// The hwmon temperature channel with this label ("edge", "junction", "mem"), if any.
std::optional<std::string> temp_channel(const Fs& fs, const std::string& hwmon, const char* label) {
  for (int i = 1; i <= 8; ++i) {
    auto l = fs.read_line(hwmon + "/temp" + std::to_string(i) + "_label");
    if (l && *l == label) return hwmon + "/temp" + std::to_string(i);
  }
  return std::nullopt;
}

}  // namespace

Reading<Memory> AmdGpu::memory() const {
  auto total = u64(*fs_, dir_ + "/mem_info_vram_total");
  auto used = u64(*fs_, dir_ + "/mem_info_vram_used");
  if (!total || *total == 0)
    return Reading<Memory>::none("no mem_info_vram_total (an APU, or an old kernel)");
  Memory m;
  m.scope = "vram";
  m.source = MemorySource::amdgpu;
  m.total_bytes = *total;
  if (used) {
    m.used_bytes = std::min(*used, *total);
    m.free_bytes = *total - *m.used_bytes;
  }
  return m;
}

std::vector<Memory> AmdGpu::memory_regions() const {
  Memory gtt;
  gtt.scope = "gtt";  // system memory the GPU maps through its page tables
  gtt.source = MemorySource::amdgpu;
  auto total = u64(*fs_, dir_ + "/mem_info_gtt_total");
  auto used = u64(*fs_, dir_ + "/mem_info_gtt_used");
  if (!total) return {};
  gtt.total_bytes = *total;
  if (used) {
    gtt.used_bytes = std::min(*used, *total);
    gtt.free_bytes = *total - *gtt.used_bytes;
  }
  return {gtt};
}

std::vector<ClockReading> AmdGpu::clock_readings() const {
  struct Table {
    const char* file;
    const char* domain;
  };
  constexpr Table kTables[] = {{"pp_dpm_sclk", "graphics"},
                               {"pp_dpm_mclk", "memory"},
                               {"pp_dpm_fclk", "fabric"},
                               {"pp_dpm_socclk", "soc"}};
  std::vector<ClockReading> out;
  for (auto [file, domain] : kTables) {
    auto text = fs_->read(dir_ + "/" + file);
    if (!text) continue;
    auto table = amd::parse_dpm_table(*text);
    if (!table) continue;
    ClockReading r;
    r.domain = domain;
    r.source = file;
    r.current_mhz = table->current_mhz;
    if (!table->levels_mhz.empty()) {
      r.min_mhz = table->levels_mhz.front();
      r.max_mhz = table->levels_mhz.back();
    }
    out.push_back(std::move(r));
  }
  return out;
}

Reading<Utilization> AmdGpu::utilization() const {
  Utilization u;
  auto busy = u64(*fs_, dir_ + "/gpu_busy_percent");
  if (!busy || *busy > 100) return Reading<Utilization>::none("no gpu_busy_percent");
  u.compute_pct = static_cast<double>(*busy);
  if (auto mem = u64(*fs_, dir_ + "/mem_busy_percent"); mem && *mem <= 100)
    u.memory_pct = static_cast<double>(*mem);
  return u;
}

Reading<Energy> AmdGpu::energy() const {
  Energy e;
  auto hwmon = providers::sysfs::hwmon_dir(*fs_, dir_);
  if (!hwmon) return Reading<Energy>::none("no hwmon directory");
  // power1_average (µW) on most parts; RDNA 3 and newer kernels report power1_input instead.
  auto uw = u64(*fs_, *hwmon + "/power1_average");
  if (!uw) uw = u64(*fs_, *hwmon + "/power1_input");
  if (uw) e.power_w = static_cast<double>(*uw) / 1e6;
  if (auto cap = u64(*fs_, *hwmon + "/power1_cap"); cap && *cap > 0)
    e.power_limit_w = static_cast<double>(*cap) / 1e6;
  if (!e.power_w) return Reading<Energy>::none("no power1_average or power1_input");
  return e;
}

Reading<Thermal> AmdGpu::thermal() const {
  Thermal t;
  auto hwmon = providers::sysfs::hwmon_dir(*fs_, dir_);
  if (!hwmon) return Reading<Thermal>::none("no hwmon directory");
  // "edge" is the die edge, "junction" the hottest spot the driver throttles on.
  auto channel = temp_channel(*fs_, *hwmon, "edge");
  if (!channel) channel = temp_channel(*fs_, *hwmon, "junction");
  if (!channel) channel = *hwmon + "/temp1";
  if (auto mc = fs_->read_i64(*channel + "_input"))
    t.temperature_c = static_cast<double>(*mc) / 1000.0;
  if (auto mc = fs_->read_i64(*channel + "_crit")) t.slowdown_c = static_cast<double>(*mc) / 1000.0;
  if (auto mc = fs_->read_i64(*channel + "_emergency"))
    t.shutdown_c = static_cast<double>(*mc) / 1000.0;
  if (!t.temperature_c) return Reading<Thermal>::none("no temperature input in " + *hwmon);
  return t;
}

Reading<PcieReading> AmdGpu::pcie() const {
  PcieReading p;
  auto link = [&](const char* speed_file, const char* width_file, std::optional<int>& gen,
                  std::optional<int>& width) {
    if (auto s = fs_->read_line(dir_ + "/" + speed_file))
      gen = providers::sysfs::pcie_generation(*s);
    if (auto w = u64(*fs_, dir_ + "/" + width_file); w && *w <= 32) width = static_cast<int>(*w);
  };
  link("current_link_speed", "current_link_width", p.link_gen, p.link_width);
  link("max_link_speed", "max_link_width", p.max_link_gen, p.max_link_width);
  if (!p.link_gen)
    return Reading<PcieReading>::none(
        "no current_link_speed (throughput is not exposed by amdgpu sysfs)");
  return p;
}

std::optional<double> AmdGpu::fan_speed_pct() const {
  auto hwmon = providers::sysfs::hwmon_dir(*fs_, dir_);
  if (!hwmon) return std::nullopt;
  // pwm1 is the duty cycle, 0–255; datacenter parts have no fan at all.
  auto pwm = u64(*fs_, *hwmon + "/pwm1");
  if (!pwm || *pwm > 255) return std::nullopt;
  return static_cast<double>(*pwm) * 100.0 / 255.0;
}

namespace amd {

namespace {

/// The gfx target of the GPU at this PCI address, from the KFD topology node whose location_id
/// ((bus << 8) | (device << 3) | function) and domain match.
std::string kfd_gfx_target(const Fs& fs, const std::string& bus_id) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (std::sscanf(bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) return {};
  unsigned location = (bus << 8) | (dev << 3) | fn;
  std::string base = core::paths::kSysKfdNodes;
  for (const auto& node : fs.list(base)) {
    auto props = fs.read(base + "/" + node + "/properties", 64u << 10);
    if (!props) continue;
    std::optional<std::uint64_t> loc, dom, gfx;
    for (auto [k, v] : core::parse_key_values(*props, ' ')) {
      if (k == "location_id")
        loc = core::parse_u64(v);
      else if (k == "domain")
        dom = core::parse_u64(v);
      else if (k == "gfx_target_version")
        gfx = core::parse_u64(v);
    }
    if (loc == location && dom.value_or(0) == domain && gfx && *gfx) return gfx_target(*gfx);
  }
  return {};
}

}  // namespace

std::vector<std::shared_ptr<Gpu>> probe_gpus(const providers::Context& context, host::Note& note) {
  const auto& fs = *context.fs;
  std::vector<std::shared_ptr<Gpu>> out;
  std::string base = core::paths::kSysClassDrm;
  std::string driver_version = fs.read_line(core::paths::kSysAmdgpuVersion).value_or("");
  for (const auto& name : fs.list(base)) {
    // card0, card1 … (not connectors like card0-DP-1, nor render nodes).
    if (!core::starts_with(name, "card") || name.find('-') != std::string::npos) continue;
    auto pci = providers::sysfs::pci_device(fs, base + "/" + name);
    if (!pci || pci->driver != "amdgpu") continue;
    GpuInfo info;
    info.index = static_cast<std::uint32_t>(out.size());
    info.provider = "amd";
    info.vendor = "AMD";
    info.pci_bus_id = pci->bus_id;
    info.driver_version = driver_version;
    unsigned revision = static_cast<unsigned>(
        core::parse_u64_base(fs.read_line(pci->dir + "/revision").value_or(""), 16).value_or(0));
    if (auto product = fs.read_line(pci->dir + "/product_name"); product && !product->empty())
      info.label = *product;
    else if (auto m = marketing_name(pci->device_id, revision); !m.empty())
      info.label = m;
    else
      info.label = "AMD GPU " + fmt_id(pci->vendor_id) + ":" + fmt_id(pci->device_id);
    info.arch_key = kfd_gfx_target(fs, pci->bus_id);
    if (info.arch_key.empty()) info.arch_key = gfx_for_device(pci->device_id);
    info.architecture = architecture_for(info.arch_key);
    if (auto uid = fs.read_line(pci->dir + "/unique_id"); uid && !uid->empty()) info.uuid = *uid;
    if (auto total = fs.read_u64(pci->dir + "/mem_info_vram_total"))
      info.memory_total_bytes = *total;
    out.push_back(std::make_shared<AmdGpu>(std::move(info), pci->dir, context.fs));
  }
  if (out.empty()) note.unsupported("no amdgpu device under /sys/class/drm");
  return out;
}

std::string fmt_id(unsigned id) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04x", id & 0xffff);
  return buf;
}

}  // namespace amd

}  // namespace mainboard
