#include "providers/nvidia/provider.hpp"

#include <algorithm>
#include <cstdio>

#include "core/log.hpp"
#include "core/text.hpp"
#include "mainboard/nvidia.hpp"
#include "providers/nvidia/arch.hpp"
#include "providers/nvidia/state.hpp"
#include "providers/nvidia/visibility.hpp"
#include "providers/nvidia/xid.hpp"

namespace mainboard::nvidia {

std::string format_uuid(const char* prefix, const unsigned char b[16]) {
  char buf[64];
  std::snprintf(buf, sizeof buf,
                "%s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", prefix,
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
                b[13], b[14], b[15]);
  return buf;
}

namespace {

/// A UUID without its GPU-/MIG- prefix, for comparing what CUDA and NVML print.
std::string bare_uuid(const std::string& uuid) {
  auto dash = uuid.find('-');
  return (core::starts_with(uuid, "GPU-") || core::starts_with(uuid, "MIG-"))
             ? uuid.substr(dash + 1)
             : uuid;
}

std::string nvml_string(const NvmlLibrary& n, nvml::DeviceStringFn* fn, nvml::Device d) {
  char buf[128] = {};
  if (!fn || fn(d, buf, sizeof buf) != nvml::kSuccess) return {};
  buf[sizeof buf - 1] = '\0';
  (void)n;
  return buf;
}

std::optional<unsigned> nvml_uint(nvml::DeviceUintFn* fn, nvml::Device d) {
  unsigned v = 0;
  if (!fn || fn(d, &v) != nvml::kSuccess) return std::nullopt;
  return v;
}

std::string driver_version(const NvmlLibrary& n) {
  char buf[96] = {};
  if (!n.ok || !n.driver_version || n.driver_version(buf, sizeof buf) != nvml::kSuccess) return {};
  buf[sizeof buf - 1] = '\0';
  return buf;
}

struct NvmlDevice {
  nvml::Device handle = nullptr;
  std::string name, uuid;
  std::optional<PciAddress> pci;
  int cc_major = 0, cc_minor = 0;
  bool mig_enabled = false;
  std::vector<nvml::Device> mig_handles;
  std::vector<std::string> mig_uuids;
};

NvmlDevice describe_nvml(const NvmlLibrary& n, nvml::Device d) {
  NvmlDevice out;
  out.handle = d;
  out.name = nvml_string(n, n.name, d);
  out.uuid = nvml_string(n, n.uuid, d);
  if (n.pci_info) {
    nvml::PciInfo pci{};
    if (n.pci_info(d, &pci) == nvml::kSuccess)
      out.pci = PciAddress{pci.domain, pci.bus, pci.device, 0};
  }
  if (n.compute_capability) n.compute_capability(d, &out.cc_major, &out.cc_minor);
  unsigned current = 0, pending = 0;
  if (n.mig_mode && n.mig_mode(d, &current, &pending) == nvml::kSuccess && current == 1) {
    out.mig_enabled = true;
    auto max = nvml_uint(n.max_mig_devices, d).value_or(0);
    for (unsigned i = 0; i < max && i < 64 && n.mig_handle_by_index; ++i) {
      nvml::Device mig = nullptr;
      // NOT_FOUND marks an empty slot, not the end of the list.
      if (n.mig_handle_by_index(d, i, &mig) != nvml::kSuccess || !mig) continue;
      out.mig_handles.push_back(mig);
      out.mig_uuids.push_back(nvml_string(n, n.uuid, mig));
    }
  }
  return out;
}

MigDevice describe_mig(const NvmlLibrary& n, nvml::Device mig) {
  MigDevice m;
  m.uuid = nvml_string(n, n.uuid, mig);
  m.gpu_instance_id = nvml_uint(n.gpu_instance_id, mig);
  m.compute_instance_id = nvml_uint(n.compute_instance_id, mig);
  nvml::Memory mem{};
  if (n.memory_v1 && n.memory_v1(mig, &mem) == nvml::kSuccess) m.memory_total_bytes = mem.total;
  return m;
}

std::optional<std::uint64_t> nvml_total_memory(const NvmlLibrary& n, nvml::Device d) {
  nvml::MemoryV2 v2{};
  v2.version = nvml::kMemoryV2Version;
  if (n.memory_v2 && n.memory_v2(d, &v2) == nvml::kSuccess) return v2.total;
  nvml::Memory v1{};
  if (n.memory_v1 && n.memory_v1(d, &v1) == nvml::kSuccess) return v1.total;
  return std::nullopt;
}

/// Identity common to both enumeration paths, from NVML.
void fill_from_nvml(const NvmlLibrary& n, const NvmlDevice& dev, nvml::Device handle, bool is_mig,
                    GpuInfo& info) {
  if (auto name = nvml_string(n, n.name, handle); !name.empty()) info.label = name;
  if (auto uuid = nvml_string(n, n.uuid, handle); !uuid.empty()) info.uuid = uuid;
  if (dev.pci) info.pci_bus_id = format_pci_bus_id(*dev.pci);
  if (dev.cc_major > 0) {
    info.compute_capability = std::to_string(dev.cc_major) + "." + std::to_string(dev.cc_minor);
    info.architecture = architecture_name(dev.cc_major, dev.cc_minor);
    info.arch_key = arch_key(dev.cc_major, dev.cc_minor);
  }
  info.memory_total_bytes = nvml_total_memory(n, handle);
  info.mig_enabled = dev.mig_enabled;
  if (is_mig) {
    info.mig_devices.push_back(describe_mig(n, handle));
  } else {
    for (auto mig : dev.mig_handles)
      info.mig_devices.push_back(describe_mig(n, mig));
  }
  if (!info.peak_bandwidth_gbs) {
    unsigned mem_mhz = 0;
    auto width = nvml_uint(n.memory_bus_width, dev.handle);
    if (n.max_clock && n.max_clock(dev.handle, nvml::kClockMem, &mem_mhz) == nvml::kSuccess &&
        width) {
      info.peak_bandwidth_gbs = peak_bandwidth_gbs(static_cast<long long>(mem_mhz) * 1000, *width);
      info.memory_clock_mhz = mem_mhz;
      info.memory_bus_width_bits = *width;
    }
  }
}

/// Identity from the CUDA driver: what only it knows (SM count, coherence, the memory clock it
/// uses for bandwidth), and everything when NVML is absent.
void fill_from_cuda(const CudaLibrary& c, cuda::Device dev, GpuInfo& info) {
  auto attr = [&](int a) { return c.device_attribute(dev, a); };
  char name[256] = {};
  if (c.name && c.name(name, sizeof name - 1, dev) == cuda::kSuccess && info.label.empty())
    info.label = name;
  auto major = attr(cuda::kAttrComputeCapabilityMajor);
  auto minor = attr(cuda::kAttrComputeCapabilityMinor);
  if (major && minor) {
    info.compute_capability = std::to_string(*major) + "." + std::to_string(*minor);
    info.architecture = architecture_name(*major, *minor);
    info.arch_key = arch_key(*major, *minor);
  }
  if (auto sms = attr(cuda::kAttrMultiprocessorCount); sms && *sms > 0)
    info.sm_count = static_cast<std::uint32_t>(*sms);
  auto clock_khz = attr(cuda::kAttrMemoryClockRate);
  auto width = attr(cuda::kAttrGlobalMemoryBusWidth);
  if (auto bw = peak_bandwidth_gbs(clock_khz, width)) {
    info.peak_bandwidth_gbs = bw;
    info.memory_clock_mhz = static_cast<std::uint32_t>(*clock_khz / 1000);
    info.memory_bus_width_bits = static_cast<std::uint32_t>(*width);
  }
  // Coherent: pageable host memory is accessed through the host's own page tables (ATS, as on
  // Grace Hopper and GB10), with concurrent managed access. HMM on x86 also reports pageable
  // access but through device page tables, so the host-page-table attribute tells them apart.
  bool pageable = attr(cuda::kAttrPageableMemoryAccess).value_or(0) == 1;
  bool concurrent = attr(cuda::kAttrConcurrentManagedAccess).value_or(0) == 1;
  bool host_tables = attr(cuda::kAttrPageableMemoryAccessUsesHostPageTables).value_or(0) == 1;
  info.coherent = pageable && concurrent && host_tables;
  if (!info.memory_total_bytes) {
    std::size_t total = 0;
    if (c.total_mem && c.total_mem(&total, dev) == cuda::kSuccess) info.memory_total_bytes = total;
  }
  if (info.uuid.empty() && c.uuid) {
    cuda::Uuid u{};
    if (c.uuid(&u, dev) == cuda::kSuccess)
      info.uuid = format_uuid("GPU-", reinterpret_cast<const unsigned char*>(u.bytes));
  }
  if (info.pci_bus_id.empty() && c.pci_bus_id) {
    char bus[32] = {};
    if (c.pci_bus_id(bus, sizeof bus - 1, dev) == cuda::kSuccess)
      if (auto a = parse_pci_bus_id(bus)) info.pci_bus_id = format_pci_bus_id(*a);
  }
}

std::shared_ptr<Gpu> make_gpu(GpuInfo info, const std::shared_ptr<NvmlLibrary>& nvml,
                              const std::shared_ptr<CudaLibrary>& cuda, nvml::Device handle,
                              std::optional<cuda::Device> cuda_device, bool mig,
                              const providers::Context& context,
                              const std::shared_ptr<XidLog>& xids) {
  auto state = std::make_shared<NvidiaGpu::State>();
  state->nvml = nvml;
  state->cuda = cuda;
  state->device = handle;
  state->cuda_device = cuda_device;
  state->fs = context.fs;
  state->mig = mig;
  state->xids = xids;
  if (!mig) xids->add_gpu(handle, info.pci_bus_id);
  state->gpm = std::make_shared<NvidiaGpu::State::Gpm>();
  state->gpm->nvml = nvml;
  // GPM compares two samples at least 100 ms apart: the first is taken now, so that a reading
  // soon after waits for the rest of that time once, not once per GPU.
  start_unit_activity(*state);
  info.provider = "nvidia";
  info.vendor = "NVIDIA";
  return std::make_shared<NvidiaGpu>(std::move(info), std::move(state));
}

/// With the driver present, it decides which devices exist and in what order (it applies
/// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER itself); each is matched to NVML by PCI bus id.
std::vector<std::shared_ptr<Gpu>> through_driver(const std::shared_ptr<CudaLibrary>& cuda,
                                                 const std::shared_ptr<NvmlLibrary>& nvml,
                                                 const providers::Context& context,
                                                 host::Note& note,
                                                 const std::shared_ptr<XidLog>& xids) {
  std::vector<std::shared_ptr<Gpu>> out;
  int count = 0;
  if (cuda->device_count(&count) != cuda::kSuccess || count <= 0) return out;
  std::string driver = driver_version(*nvml);
  for (int ordinal = 0; ordinal < count && ordinal < 1024; ++ordinal) {
    cuda::Device dev = 0;
    if (cuda->device_get(&dev, ordinal) != cuda::kSuccess) continue;
    GpuInfo info;
    info.index = static_cast<std::uint32_t>(ordinal);
    info.driver_version = driver;
    nvml::Device handle = nullptr;
    bool mig = false;
    char bus[32] = {};
    std::optional<PciAddress> pci;
    if (cuda->pci_bus_id && cuda->pci_bus_id(bus, sizeof bus - 1, dev) == cuda::kSuccess)
      pci = parse_pci_bus_id(bus);
    cuda::Uuid cu{};
    std::string cuda_uuid;
    if (cuda->uuid && cuda->uuid(&cu, dev) == cuda::kSuccess)
      cuda_uuid = format_uuid("", reinterpret_cast<const unsigned char*>(cu.bytes));
    if (nvml->ok && pci && nvml->handle_by_pci_bus_id) {
      nvml::Device parent = nullptr;
      // NVML pads the domain to 8 hex digits, CUDA to 4: hand NVML its own spelling.
      if (nvml->handle_by_pci_bus_id(format_pci_bus_id(*pci).c_str(), &parent) == nvml::kSuccess) {
        auto desc = describe_nvml(*nvml, parent);
        handle = parent;
        // In MIG mode CUDA's device is one instance: the UUID CUDA reports is the instance's.
        for (std::size_t i = 0; i < desc.mig_uuids.size(); ++i) {
          if (bare_uuid(desc.mig_uuids[i]) == cuda_uuid) {
            handle = desc.mig_handles[i];
            mig = true;
          }
        }
        fill_from_nvml(*nvml, desc, handle, mig, info);
      }
    }
    if (nvml->ok && !handle)
      note.unsupported("CUDA device " + std::to_string(ordinal) + " (" + bus +
                       ") has no NVML handle");
    fill_from_cuda(*cuda, dev, info);
    if (mig) info.peak_bandwidth_gbs.reset();  // a slice does not get the whole device's peak
    out.push_back(make_gpu(std::move(info), nvml, cuda, handle, dev, mig, context, xids));
  }
  return out;
}

/// Without the driver: NVML lists the devices, and CUDA's visibility rule is applied here.
std::vector<std::shared_ptr<Gpu>> through_nvml(const std::shared_ptr<NvmlLibrary>& nvml,
                                               const std::shared_ptr<CudaLibrary>& cuda,
                                               const providers::Context& context,
                                               const std::shared_ptr<XidLog>& xids) {
  std::vector<std::shared_ptr<Gpu>> out;
  unsigned count = 0;
  if (nvml->device_count(&count) != nvml::kSuccess) return out;
  std::vector<NvmlDevice> devices;
  std::vector<Candidate> candidates;
  for (unsigned i = 0; i < count && i < 1024; ++i) {
    nvml::Device d = nullptr;
    if (nvml->handle_by_index(i, &d) != nvml::kSuccess) continue;
    auto desc = describe_nvml(*nvml, d);
    Candidate c;
    c.uuid = desc.uuid;
    c.cc_major = desc.cc_major;
    c.cc_minor = desc.cc_minor;
    if (desc.pci) {
      c.pci_domain = desc.pci->domain;
      c.pci_bus = desc.pci->bus;
      c.pci_device = desc.pci->device;
    }
    c.mig_uuids = desc.mig_uuids;
    candidates.push_back(std::move(c));
    devices.push_back(std::move(desc));
  }
  auto selected = select_visible(
      candidates, parse_visible_devices(core::env_set(context.env, "CUDA_VISIBLE_DEVICES")),
      parse_device_order(core::env_value(context.env, "CUDA_DEVICE_ORDER")));
  std::string driver = driver_version(*nvml);
  for (std::size_t ordinal = 0; ordinal < selected.size(); ++ordinal) {
    const auto& dev = devices[selected[ordinal].device];
    bool mig = selected[ordinal].mig.has_value();
    auto handle = mig ? dev.mig_handles[*selected[ordinal].mig] : dev.handle;
    GpuInfo info;
    info.index = static_cast<std::uint32_t>(ordinal);
    info.driver_version = driver;
    fill_from_nvml(*nvml, dev, handle, mig, info);
    if (mig) info.peak_bandwidth_gbs.reset();
    out.push_back(make_gpu(std::move(info), nvml, cuda, handle, std::nullopt, mig, context, xids));
  }
  return out;
}

}  // namespace

std::vector<std::shared_ptr<Gpu>> probe_gpus(const providers::Context& context, host::Note& note) {
  auto nvml = load_nvml(context.env, context.fs->is_live());
  auto cuda = load_cuda(context.env, context.fs->is_live());
  if (!nvml->ok && !cuda->ok) {
    note.unsupported(nvml->error + "; " + cuda->error);
    return {};
  }
  if (!nvml->ok) note.unsupported(nvml->error + " (telemetry beyond memory is unavailable)");
  // One kernel log for the host's GPUs, opened at the first health reading.
  auto xids = std::make_shared<XidLog>(context.fs);
  std::vector<std::shared_ptr<Gpu>> gpus;
  if (cuda->ok) {
    gpus = through_driver(cuda, nvml, context, note, xids);
  } else {
    if (!cuda->error.empty())
      core::log().debug("nvidia: enumerating through NVML: {}", cuda->error);
    gpus = through_nvml(nvml, cuda, context, xids);
  }
  if (context.listen_for_xids && nvml->ok && !gpus.empty()) xids->listen(nvml);
  return gpus;
}

}  // namespace mainboard::nvidia
