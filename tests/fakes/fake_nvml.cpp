// A stand-in for libnvidia-ml.so.1: the same exported symbols, answering from the scenario in
// scenario.hpp. Built twice: complete, and with FAKE_NVML_MINIMAL, an older NVML that lacks the
// newer entry points (memory v2, energy, PCIe throughput, the _v3 process query,
// TemperatureV), so the provider's fallbacks run.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "scenario.hpp"

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using fake::Device;

/// The caller's PID as a real driver reports it: the host's. /proc/self names it as the /proc
/// mount's namespace does, which is the host's unless the caller mounted one of its own.
unsigned driver_pid_of_caller() {
  char buf[32] = {};
  ssize_t n = ::readlink("/proc/self", buf, sizeof buf - 1);
  return n > 0 ? static_cast<unsigned>(std::atoi(buf)) : static_cast<unsigned>(::getpid());
}

enum : int {
  kSuccess = 0,
  kUninitialized = 1,
  kInvalidArgument = 2,
  kNotSupported = 3,
  kNotFound = 6,
  kInsufficientSize = 7,
  kGpuIsLost = 15,
};

std::mutex g_mutex;
int g_init_count = 0;
std::unique_ptr<fake::Scenario> g_scenario;

Device* device(void* handle) {
  if (!g_scenario || !handle || !g_scenario->owns(handle)) return nullptr;
  return static_cast<Device*>(handle);
}

/// Identity and telemetry calls differ only in how a lost GPU answers.
int telemetry(Device* d) {
  if (!d) return g_scenario ? kInvalidArgument : kUninitialized;
  return d->lost() ? kGpuIsLost : kSuccess;
}

int put_number(Device* d, const char* pointer, unsigned* out) {
  int r = telemetry(d);
  if (r != kSuccess) return r;
  if (!out) return kInvalidArgument;
  auto v = d->number(pointer);
  if (!v) return kNotSupported;
  *out = static_cast<unsigned>(*v);
  return kSuccess;
}

bool parse_bus_id(const char* s, unsigned& domain, unsigned& bus, unsigned& dev) {
  unsigned fn = 0;
  return s && std::sscanf(s, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) == 4;
}

const char* clock_key(unsigned type) {
  switch (type) {
    case 0: return "graphics";
    case 1: return "sm";
    case 2: return "memory";
    case 3: return "video";
    default: return nullptr;
  }
}

struct PciInfo {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct Memory {
  unsigned long long total, free, used;
};
struct MemoryV2 {
  unsigned version;
  unsigned long long total, reserved, free, used;
};
struct Utilization {
  unsigned gpu, memory;
};
struct ProcessInfo {
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId, computeInstanceId;
};
struct ProcessInfoV1 {
  unsigned pid;
  unsigned long long usedGpuMemory;
};
struct TemperatureV {
  unsigned version;
  int sensorType;
  int temperature;
};

template <class Info>
int processes(void* handle, unsigned* count, Info* infos) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  int r = telemetry(d);
  if (r != kSuccess) return r;
  if (!count) return kInvalidArgument;
  // A driver that does not list processes (some vGPU and WSL set-ups).
  if (std::getenv("MAINBOARD_FAKE_GPU_NO_PROCESSES")) return kNotSupported;
  auto list = d->spec.value("processes", fake::json::array());
  // The calling process on the GPU with this UUID: "UUID=BYTES".
  if (const char* caller = std::getenv("MAINBOARD_FAKE_GPU_CALLER")) {
    std::string c = caller;
    auto eq = c.find('=');
    if (eq != std::string::npos && c.substr(0, eq) == d->spec.value("uuid", ""))
      list.push_back(
          {{"pid", driver_pid_of_caller()}, {"used_memory", std::stoull(c.substr(eq + 1))}});
  }
  if (*count < list.size()) {
    *count = static_cast<unsigned>(list.size());
    return list.empty() ? kSuccess : kInsufficientSize;
  }
  *count = static_cast<unsigned>(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    infos[i] = Info{};
    infos[i].pid = list[i].value("pid", 0u);
    infos[i].usedGpuMemory = list[i].value("used_memory", ~0ull);
    if constexpr (sizeof(Info) == sizeof(ProcessInfo)) {
      infos[i].gpuInstanceId = 0xFFFFFFFFu;
      infos[i].computeInstanceId = 0xFFFFFFFFu;
    }
  }
  return kSuccess;
}

}  // namespace

EXPORT int nvmlInit_v2() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_init_count++ == 0) {
    g_scenario = fake::load_scenario();
    // A driver that hangs or crashes (one node of a test cluster misbehaving).
    if (auto ms = g_scenario->root.value("init_delay_ms", 0); ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    if (g_scenario->root.value("abort_on_init", false)) std::abort();
  }
  return kSuccess;
}

EXPORT int nvmlShutdown() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_init_count == 0) return kUninitialized;
  if (--g_init_count == 0) g_scenario.reset();
  return kSuccess;
}

EXPORT const char* nvmlErrorString(int r) {
  switch (r) {
    case kSuccess: return "Success";
    case kUninitialized: return "Uninitialized";
    case kInvalidArgument: return "Invalid Argument";
    case kNotSupported: return "Not Supported";
    case kNotFound: return "Not Found";
    case kInsufficientSize: return "Insufficient Size";
    case kGpuIsLost: return "GPU is lost";
    default: return "Unknown Error";
  }
}

EXPORT int nvmlSystemGetDriverVersion(char* out, unsigned length) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_scenario) return kUninitialized;
  fake::copy_string(g_scenario->root.value("driver_version", std::string("0.0")), out, length);
  return kSuccess;
}

EXPORT int nvmlSystemGetNVMLVersion(char* out, unsigned length) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_scenario) return kUninitialized;
  fake::copy_string(g_scenario->root.value("nvml_version", std::string("0.0")), out, length);
  return kSuccess;
}

EXPORT int nvmlSystemGetCudaDriverVersion_v2(int* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_scenario) return kUninitialized;
  *out = g_scenario->root.value("cuda_driver_version", 0);
  return kSuccess;
}

EXPORT int nvmlDeviceGetCount_v2(unsigned* count) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_scenario) return kUninitialized;
  *count = static_cast<unsigned>(g_scenario->devices.size());
  return kSuccess;
}

EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** handle) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_scenario) return kUninitialized;
  if (index >= g_scenario->devices.size()) return kInvalidArgument;
  *handle = g_scenario->devices[index].get();
  return kSuccess;
}

EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char* id, void** handle) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_scenario) return kUninitialized;
  unsigned domain, bus, dev;
  if (!parse_bus_id(id, domain, bus, dev)) return kInvalidArgument;
  for (auto& d : g_scenario->devices) {
    unsigned d2, b2, v2;
    if (parse_bus_id(d->text("pci_bus_id").c_str(), d2, b2, v2) && d2 == domain && b2 == bus &&
        v2 == dev) {
      *handle = d.get();
      return kSuccess;
    }
  }
  return kNotFound;
}

EXPORT int nvmlDeviceGetHandleByUUID(const char* uuid, void** handle) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_scenario) return kUninitialized;
  for (auto& d : g_scenario->devices) {
    if (d->text("uuid") == uuid) {
      *handle = d.get();
      return kSuccess;
    }
    for (auto& m : d->migs)
      if (m->text("uuid") == uuid) {
        *handle = m.get();
        return kSuccess;
      }
  }
  return kNotFound;
}

EXPORT int nvmlDeviceGetName(void* handle, char* out, unsigned length) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  if (!d) return kInvalidArgument;
  fake::copy_string(d->text("name"), out, length);
  return kSuccess;
}

EXPORT int nvmlDeviceGetUUID(void* handle, char* out, unsigned length) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  if (!d) return kInvalidArgument;
  fake::copy_string(d->text("uuid"), out, length);
  return kSuccess;
}

EXPORT int nvmlDeviceGetPciInfo_v3(void* handle, PciInfo* pci) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  if (!d) return kInvalidArgument;
  Device* phys = d->parent ? d->parent : d;
  *pci = PciInfo{};
  unsigned domain = 0, bus = 0, dev = 0;
  parse_bus_id(phys->text("pci_bus_id").c_str(), domain, bus, dev);
  pci->domain = domain;
  pci->bus = bus;
  pci->device = dev;
  pci->pciDeviceId = static_cast<unsigned>(phys->spec.value("pci_device_id", 0ll));
  std::snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", domain, bus, dev);
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", domain & 0xffff, bus,
                dev);
  return kSuccess;
}

EXPORT int nvmlDeviceGetCudaComputeCapability(void* handle, int* major, int* minor) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  if (!d) return kInvalidArgument;
  Device* phys = d->parent ? d->parent : d;
  auto cc = phys->spec.value("cc", fake::json::array());
  if (cc.size() != 2) return kNotSupported;
  *major = cc[0].get<int>();
  *minor = cc[1].get<int>();
  return kSuccess;
}

EXPORT int nvmlDeviceGetMemoryBusWidth(void* handle, unsigned* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  if (!d) return kInvalidArgument;
  auto v = (d->parent ? d->parent : d)->number("/bus_width");
  if (!v) return kNotSupported;
  *out = static_cast<unsigned>(*v);
  return kSuccess;
}

namespace {
int read_memory(Device* d, unsigned long long& total, unsigned long long& reserved,
                unsigned long long& used) {
  int r = telemetry(d);
  if (r != kSuccess) return r;
  // A unified-memory GPU (GB10): NVML has no figure, or gives zeros.
  std::string how = d->text("nvml_memory");
  if (how == "not_supported") return kNotSupported;
  if (how == "zero") {
    total = reserved = used = 0;
    return kSuccess;
  }
  auto t = d->number("/memory/total");
  if (!t) return kNotSupported;
  total = static_cast<unsigned long long>(*t);
  reserved = static_cast<unsigned long long>(d->number("/memory/reserved").value_or(0));
  used = static_cast<unsigned long long>(d->number("/memory/used").value_or(0));
  return kSuccess;
}
}  // namespace

#ifndef FAKE_NVML_MINIMAL
EXPORT int nvmlDeviceGetMemoryInfo_v2(void* handle, MemoryV2* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  if (!d) return kInvalidArgument;
  if (out->version != (sizeof(MemoryV2) | (2u << 24))) return 25;  // ARGUMENT_VERSION_MISMATCH
  unsigned long long total, reserved, used;
  int r = read_memory(d, total, reserved, used);
  if (r != kSuccess) return r;
  out->total = total;
  out->reserved = reserved;
  out->used = used;
  out->free = total - reserved - used;
  return kSuccess;
}
#endif

EXPORT int nvmlDeviceGetMemoryInfo(void* handle, Memory* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  if (!d) return kInvalidArgument;
  unsigned long long total, reserved, used;
  int r = read_memory(d, total, reserved, used);
  if (r != kSuccess) return r;
  out->total = total;
  out->used = used + reserved;  // v1 counts the driver's reservation as used
  out->free = total - reserved - used;
  return kSuccess;
}

EXPORT int nvmlDeviceGetClockInfo(void* handle, unsigned type, unsigned* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const char* key = clock_key(type);
  if (!key) return kInvalidArgument;
  return put_number(device(handle), (std::string("/clocks/") + key).c_str(), out);
}

EXPORT int nvmlDeviceGetMaxClockInfo(void* handle, unsigned type, unsigned* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const char* key = clock_key(type);
  if (!key) return kInvalidArgument;
  return put_number(device(handle), (std::string("/max_clocks/") + key).c_str(), out);
}

EXPORT int nvmlDeviceGetUtilizationRates(void* handle, Utilization* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  int r = telemetry(d);
  if (r != kSuccess) return r;
  if (d->parent) return kNotSupported;  // NVML has no per-MIG-instance utilization
  auto gpu = d->number("/utilization/gpu");
  auto mem = d->number("/utilization/memory");
  if (!gpu || !mem) return kNotSupported;
  out->gpu = static_cast<unsigned>(*gpu);
  out->memory = static_cast<unsigned>(*mem);
  return kSuccess;
}

EXPORT int nvmlDeviceGetTemperature(void* handle, unsigned sensor, unsigned* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (sensor != 0) return kInvalidArgument;
  Device* d = device(handle);
  return put_number(d && d->parent ? d->parent : d, "/temperature", out);
}

#ifndef FAKE_NVML_MINIMAL
EXPORT int nvmlDeviceGetTemperatureV(void* handle, TemperatureV* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (out->version != (sizeof(TemperatureV) | (1u << 24)) || out->sensorType != 0)
    return kInvalidArgument;
  Device* d = device(handle);
  unsigned t = 0;
  int r = put_number(d && d->parent ? d->parent : d, "/temperature", &t);
  if (r == kSuccess) out->temperature = static_cast<int>(t);
  return r;
}
#endif

EXPORT int nvmlDeviceGetTemperatureThreshold(void* handle, unsigned which, unsigned* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const char* key = which == 0 ? "/shutdown" : which == 1 ? "/slowdown" : nullptr;
  if (!key) return kNotSupported;
  return put_number(device(handle), key, out);
}

EXPORT int nvmlDeviceGetCurrentClocksEventReasons(void* handle, unsigned long long* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  unsigned v = 0;
  int r = put_number(device(handle), "/clock_event_reasons", &v);
  if (r == kSuccess) *out = v;
  return r;
}

EXPORT int nvmlDeviceGetPowerUsage(void* handle, unsigned* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return put_number(device(handle), "/power_mw", out);
}

EXPORT int nvmlDeviceGetEnforcedPowerLimit(void* handle, unsigned* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return put_number(device(handle), "/power_limit_mw", out);
}

#ifndef FAKE_NVML_MINIMAL
EXPORT int nvmlDeviceGetTotalEnergyConsumption(void* handle, unsigned long long* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  int r = telemetry(d);
  if (r != kSuccess) return r;
  auto v = d->number("/energy_mj");
  if (!v) return kNotSupported;
  *out = static_cast<unsigned long long>(*v);
  return kSuccess;
}

EXPORT int nvmlDeviceGetPcieThroughput(void* handle, unsigned counter, unsigned* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return put_number(device(handle), counter == 0 ? "/pcie/tx_kbps" : "/pcie/rx_kbps", out);
}
#endif

EXPORT int nvmlDeviceGetCurrPcieLinkGeneration(void* handle, unsigned* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return put_number(device(handle), "/pcie/gen", out);
}
EXPORT int nvmlDeviceGetCurrPcieLinkWidth(void* handle, unsigned* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return put_number(device(handle), "/pcie/width", out);
}
EXPORT int nvmlDeviceGetMaxPcieLinkGeneration(void* handle, unsigned* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return put_number(device(handle), "/pcie/max_gen", out);
}
EXPORT int nvmlDeviceGetMaxPcieLinkWidth(void* handle, unsigned* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return put_number(device(handle), "/pcie/max_width", out);
}

EXPORT int nvmlDeviceGetFanSpeed(void* handle, unsigned* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return put_number(device(handle), "/fan_pct", out);
}

#ifndef FAKE_NVML_MINIMAL
EXPORT int nvmlDeviceGetComputeRunningProcesses_v3(void* handle, unsigned* count,
                                                   ProcessInfo* infos) {
  return processes(handle, count, infos);
}
#endif

EXPORT int nvmlDeviceGetComputeRunningProcesses(void* handle, unsigned* count,
                                                ProcessInfoV1* infos) {
  return processes(handle, count, infos);
}

#ifndef FAKE_NVML_MINIMAL
EXPORT int nvmlDeviceGetPersistenceMode(void* handle, unsigned* mode) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return put_number(device(handle), "/persistence", mode);
}

EXPORT int nvmlDeviceGetEccMode(void* handle, unsigned* current, unsigned* pending) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!pending) return kInvalidArgument;
  int r = put_number(device(handle), "/ecc/enabled", current);
  if (r == kSuccess) *pending = *current;
  return r;
}

EXPORT int nvmlDeviceGetTotalEccErrors(void* handle, unsigned type, unsigned counter,
                                       unsigned long long* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  int r = telemetry(d);
  if (r != kSuccess) return r;
  if (!out || type > 1 || counter > 1) return kInvalidArgument;
  const char* keys[2][2] = {{"/ecc/corrected_volatile", "/ecc/corrected_aggregate"},
                            {"/ecc/uncorrected_volatile", "/ecc/uncorrected_aggregate"}};
  auto v = d->number(keys[type][counter]);
  if (!v) return kNotSupported;
  *out = static_cast<unsigned long long>(*v);
  return kSuccess;
}

EXPORT int nvmlDeviceGetRemappedRows(void* handle, unsigned* corrected, unsigned* uncorrected,
                                     unsigned* pending, unsigned* failed) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  int r = telemetry(d);
  if (r != kSuccess) return r;
  if (!corrected || !uncorrected || !pending || !failed) return kInvalidArgument;
  if (!d->spec.contains("remapped_rows")) return kNotSupported;
  *corrected = static_cast<unsigned>(d->number("/remapped_rows/correctable").value_or(0));
  *uncorrected = static_cast<unsigned>(d->number("/remapped_rows/uncorrectable").value_or(0));
  *pending = static_cast<unsigned>(d->number("/remapped_rows/pending").value_or(0));
  *failed = static_cast<unsigned>(d->number("/remapped_rows/failed").value_or(0));
  return kSuccess;
}

EXPORT int nvmlDeviceGetRetiredPagesPendingStatus(void* handle, unsigned* pending) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return put_number(device(handle), "/retired_pages_pending", pending);
}

// NVLink: "nvlink": [{"active", "version", "tx_kib", "rx_kib", "replay", "recovery", "crc"}].
namespace {
int link_number(void* handle, unsigned link, const char* key, unsigned long long* out) {
  Device* d = device(handle);
  int r = telemetry(d);
  if (r != kSuccess) return r;
  if (!out) return kInvalidArgument;
  if (!d->spec.contains("nvlink")) return kNotSupported;
  if (link >= d->spec["nvlink"].size()) return kInvalidArgument;
  auto v = d->number("/nvlink/" + std::to_string(link) + "/" + key);
  if (!v) return kNotSupported;
  *out = static_cast<unsigned long long>(*v);
  return kSuccess;
}
}  // namespace

namespace {
int link_unsigned(void* handle, unsigned link, const char* key, unsigned* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  unsigned long long v = 0;
  int r = link_number(handle, link, key, out ? &v : nullptr);
  if (r == kSuccess) *out = static_cast<unsigned>(v);
  return r;
}
}  // namespace

EXPORT int nvmlDeviceGetNvLinkState(void* handle, unsigned link, unsigned* active) {
  return link_unsigned(handle, link, "active", active);
}

EXPORT int nvmlDeviceGetNvLinkVersion(void* handle, unsigned link, unsigned* version) {
  return link_unsigned(handle, link, "version", version);
}

// What a link reaches: "remote" (a PCI bus id) and "remote_type" (0 GPU, 1 IBM NPU, 2 switch).
EXPORT int nvmlDeviceGetNvLinkRemotePciInfo_v2(void* handle, unsigned link, PciInfo* pci) {
  std::lock_guard<std::mutex> lock(g_mutex);
  unsigned long long active = 0;
  int r = link_number(handle, link, "active", pci ? &active : nullptr);
  if (r != kSuccess) return r;
  Device* d = device(handle);
  const auto& spec = d->spec["nvlink"][link];
  if (!spec.contains("remote") || !spec["remote"].is_string()) return kNotSupported;
  unsigned domain = 0, bus = 0, dev = 0;
  if (!parse_bus_id(spec["remote"].get<std::string>().c_str(), domain, bus, dev))
    return kNotSupported;
  *pci = PciInfo{};
  pci->domain = domain;
  pci->bus = bus;
  pci->device = dev;
  std::snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", domain, bus, dev);
  return kSuccess;
}

EXPORT int nvmlDeviceGetNvLinkRemoteDeviceType(void* handle, unsigned link, int* type) {
  std::lock_guard<std::mutex> lock(g_mutex);
  unsigned long long v = 0;
  int r = link_number(handle, link, "remote_type", type ? &v : nullptr);
  if (r == kSuccess) *type = static_cast<int>(v);
  return r;
}

EXPORT int nvmlDeviceGetNvLinkErrorCounter(void* handle, unsigned link, unsigned counter,
                                           unsigned long long* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const char* keys[] = {"replay", "recovery", "crc"};
  if (counter > 2) return kNotSupported;  // CRC data and ECC data counters: not in scenarios
  return link_number(handle, link, keys[counter], out);
}

struct FieldValue {
  unsigned fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType, nvmlReturn;
  union {
    double d;
    unsigned long long ull;
  } value;
};
static_assert(sizeof(FieldValue) == 40);

EXPORT int nvmlDeviceGetFieldValues(void* handle, int count, FieldValue* values) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  int r = telemetry(d);
  if (r != kSuccess) return r;
  if (count < 0 || (count > 0 && !values)) return kInvalidArgument;
  for (int i = 0; i < count; ++i) {
    auto& f = values[i];
    f.valueType = 3;  // unsigned long long
    const char* key = f.fieldId == 138 ? "tx_kib" : f.fieldId == 139 ? "rx_kib" : nullptr;
    unsigned long long v = 0;
    f.nvmlReturn = key ? link_number(handle, f.scopeId, key, &v) : kNotSupported;
    if (f.nvmlReturn == kSuccess) f.value.ull = v;
  }
  return kSuccess;
}

// GPM: "gpm": {"sm_active", "sm_occupancy", "tensor_active", "dram_bandwidth",
// "graphics_active"}, percentages any two samples of the device give.
struct GpmSupport {
  unsigned version, isSupportedDevice;
};
struct GpmSample {
  Device* device = nullptr;
};
struct GpmMetric {
  unsigned metricId;
  int nvmlReturn;
  double value;
  char* names[3];
};
struct GpmMetricsGet {
  unsigned version, numMetrics;
  GpmSample* sample1;
  GpmSample* sample2;
  GpmMetric metrics[333];
};

EXPORT int nvmlGpmQueryDeviceSupport(void* handle, GpmSupport* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  int r = telemetry(d);
  if (r != kSuccess) return r;
  if (!out || out->version != 1) return kInvalidArgument;
  out->isSupportedDevice = d->spec.contains("gpm") && !d->parent ? 1 : 0;
  return kSuccess;
}

EXPORT int nvmlGpmSampleAlloc(GpmSample** out) {
  if (!out) return kInvalidArgument;
  *out = new GpmSample;
  return kSuccess;
}

EXPORT int nvmlGpmSampleFree(GpmSample* sample) {
  delete sample;
  return kSuccess;
}

EXPORT int nvmlGpmSampleGet(void* handle, GpmSample* sample) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  int r = telemetry(d);
  if (r != kSuccess) return r;
  if (!sample) return kInvalidArgument;
  if (!d->spec.contains("gpm")) return kNotSupported;
  sample->device = d;
  return kSuccess;
}

EXPORT int nvmlGpmMetricsGet(GpmMetricsGet* get) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!get || get->version != 1 || get->numMetrics > 333) return kInvalidArgument;
  if (!get->sample1 || !get->sample2 || !get->sample1->device ||
      get->sample1->device != get->sample2->device)
    return kInvalidArgument;
  const auto& gpm = get->sample1->device->spec["gpm"];
  for (unsigned i = 0; i < get->numMetrics; ++i) {
    auto& m = get->metrics[i];
    const char* key = m.metricId == 1    ? "graphics_active"
                      : m.metricId == 2  ? "sm_active"
                      : m.metricId == 3  ? "sm_occupancy"
                      : m.metricId == 5  ? "tensor_active"
                      : m.metricId == 10 ? "dram_bandwidth"
                                         : nullptr;
    if (key && gpm.contains(key) && gpm[key].is_number()) {
      m.value = gpm[key].get<double>();
      m.nvmlReturn = kSuccess;
    } else {
      m.nvmlReturn = kNotSupported;
    }
  }
  return kSuccess;
}
#endif

#ifndef FAKE_NVML_MINIMAL
// XID events: each device's "xid_events": [{"code": 79, "after_ms": 50}, …] arrive that long
// after the event set was created, to every set the device is registered in; "xid_events":
// "not_supported" refuses registration.
struct EventSet {
  std::chrono::steady_clock::time_point created = std::chrono::steady_clock::now();
  std::vector<Device*> devices;
  std::map<Device*, std::size_t> delivered;  // events handed out, per device
};
struct EventData {
  void* device;
  unsigned long long eventType, eventData;
  unsigned gpuInstanceId, computeInstanceId;
};
constexpr unsigned long long kEventXid = 0x8;
constexpr int kTimeout = 10;

EXPORT int nvmlEventSetCreate(EventSet** out) {
  if (!out) return kInvalidArgument;
  *out = new EventSet;
  return kSuccess;
}

EXPORT int nvmlEventSetFree(EventSet* set) {
  delete set;
  return kSuccess;
}

EXPORT int nvmlDeviceRegisterEvents(void* handle, unsigned long long types, EventSet* set) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  int r = telemetry(d);
  if (r != kSuccess) return r;
  if (!set) return kInvalidArgument;
  if (d->parent || d->spec.value("xid_events", fake::json()) == "not_supported")
    return kNotSupported;
  if (types & kEventXid) set->devices.push_back(d);
  return kSuccess;
}

namespace {
/// The set's next undelivered event: its device, the event and when it is due.
std::optional<std::tuple<Device*, fake::json, std::chrono::steady_clock::time_point>> next_event(
    EventSet* set) {
  std::optional<std::tuple<Device*, fake::json, std::chrono::steady_clock::time_point>> best;
  for (Device* d : set->devices) {
    const auto& events = d->spec.value("xid_events", fake::json::array());
    std::size_t i = set->delivered[d];
    if (!events.is_array() || i >= events.size()) continue;
    auto due = set->created + std::chrono::milliseconds(events[i].value("after_ms", 0));
    if (!best || due < std::get<2>(*best)) best.emplace(d, events[i], due);
  }
  return best;
}
}  // namespace

EXPORT int nvmlEventSetWait_v2(EventSet* set, EventData* data, unsigned timeout_ms) {
  if (!set || !data) return kInvalidArgument;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::unique_lock<std::mutex> lock(g_mutex);
  for (;;) {
    auto next = next_event(set);
    auto now = std::chrono::steady_clock::now();
    if (next && std::get<2>(*next) <= now) {
      auto* d = std::get<0>(*next);
      ++set->delivered[d];
      *data =
          EventData{d, kEventXid, std::get<1>(*next).value("code", 999ull), 0xFFFFFFFF, 0xFFFFFFFF};
      return kSuccess;
    }
    if (now >= deadline) return kTimeout;
    auto until = next && std::get<2>(*next) < deadline ? std::get<2>(*next) : deadline;
    lock.unlock();
    std::this_thread::sleep_until(until);
    lock.lock();
  }
}
#endif

EXPORT int nvmlDeviceGetMigMode(void* handle, unsigned* current, unsigned* pending) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  if (!d) return kInvalidArgument;
  if (d->parent) return kNotSupported;
  *current = *pending = d->migs.empty() ? 0 : 1;
  return kSuccess;
}

EXPORT int nvmlDeviceGetMaxMigDeviceCount(void* handle, unsigned* count) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  if (!d || d->parent) return kInvalidArgument;
  *count = 7;  // an A100/H100 partitions into at most seven instances
  return kSuccess;
}

EXPORT int nvmlDeviceGetMigDeviceHandleByIndex(void* handle, unsigned index, void** mig) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  if (!d || d->parent) return kInvalidArgument;
  if (index >= d->migs.size()) return kNotFound;
  *mig = d->migs[index].get();
  return kSuccess;
}

EXPORT int nvmlDeviceGetGpuInstanceId(void* handle, unsigned* id) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  if (!d || !d->parent) return kNotSupported;
  *id = d->spec.value("gpu_instance_id", 0u);
  return kSuccess;
}

EXPORT int nvmlDeviceGetComputeInstanceId(void* handle, unsigned* id) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = device(handle);
  if (!d || !d->parent) return kNotSupported;
  *id = d->spec.value("compute_instance_id", 0u);
  return kSuccess;
}
