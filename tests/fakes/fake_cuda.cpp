// A stand-in for libcuda.so.1 (the CUDA driver API), answering from the same scenario as the
// fake NVML. Like the real driver it applies CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER from its
// own process environment at cuInit; it does so with the project's rule (visibility.cpp,
// compiled in here), which has its own unit tests against the CUDA documentation.
#include <cstdio>
#include <cstring>
#include <mutex>

#include "providers/nvidia/visibility.hpp"
#include "scenario.hpp"

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using fake::Device;
namespace nv = mainboard::nvidia;

enum : int {
  kSuccess = 0,
  kInvalidValue = 1,
  kNotInitialized = 3,
  kInvalidDevice = 101,
  kInvalidContext = 201,
};

struct Visible {
  Device* device;  // the physical GPU, or a MIG instance
};

std::mutex g_mutex;
std::unique_ptr<fake::Scenario> g_scenario;
std::vector<Visible> g_visible;
int t_current = -1;  // device of the current context, -1 for none (one thread in tests)

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::optional<std::string>(v) : std::nullopt;
}

Device* visible(int ordinal) {
  if (!g_scenario || ordinal < 0 || static_cast<std::size_t>(ordinal) >= g_visible.size())
    return nullptr;
  return g_visible[static_cast<std::size_t>(ordinal)].device;
}

Device* physical(Device* d) { return d->parent ? d->parent : d; }

bool uuid_bytes(const std::string& uuid, char out[16]) {
  std::string hex;
  for (char c : uuid.substr(4))
    if (c != '-') hex += c;
  if (hex.size() != 32) return false;
  for (int i = 0; i < 16; ++i) {
    unsigned v = 0;
    if (std::sscanf(hex.c_str() + 2 * i, "%2x", &v) != 1) return false;
    out[i] = static_cast<char>(v);
  }
  return true;
}

}  // namespace

EXPORT int cuInit(unsigned flags) {
  if (flags != 0) return kInvalidValue;
  std::lock_guard<std::mutex> lock(g_mutex);
  // The real driver initialises once per process. Tests run many machines in one process and
  // the library may stay mapped after dlclose, so the fake reloads when its inputs change.
  static std::string loaded_for;
  std::string inputs = env("MAINBOARD_FAKE_GPU_SCENARIO").value_or("") + "|" +
                       env("CUDA_VISIBLE_DEVICES").value_or("<unset>") + "|" +
                       env("CUDA_DEVICE_ORDER").value_or("");
  if (g_scenario && inputs == loaded_for) return kSuccess;
  loaded_for = inputs;
  g_visible.clear();
  g_scenario = fake::load_scenario();
  std::vector<nv::Candidate> candidates;
  for (const auto& d : g_scenario->devices) {
    nv::Candidate c;
    c.uuid = d->text("uuid");
    auto cc = d->spec.value("cc", fake::json::array());
    if (cc.size() == 2) {
      c.cc_major = cc[0].get<int>();
      c.cc_minor = cc[1].get<int>();
    }
    if (auto pci = nv::parse_pci_bus_id(d->text("pci_bus_id"))) {
      c.pci_domain = pci->domain;
      c.pci_bus = pci->bus;
      c.pci_device = pci->device;
    }
    for (const auto& m : d->migs) c.mig_uuids.push_back(m->text("uuid"));
    candidates.push_back(std::move(c));
  }
  auto selected = nv::select_visible(candidates, nv::parse_visible_devices(env("CUDA_VISIBLE_DEVICES")),
                                     nv::parse_device_order(env("CUDA_DEVICE_ORDER")));
  for (const auto& s : selected) {
    Device* d = g_scenario->devices[s.device].get();
    g_visible.push_back({s.mig ? d->migs[*s.mig].get() : d});
  }
  return kSuccess;
}

EXPORT int cuDriverGetVersion(int* version) {
  std::lock_guard<std::mutex> lock(g_mutex);
  *version = g_scenario ? g_scenario->root.value("cuda_driver_version", 0) : 0;
  return kSuccess;
}

EXPORT int cuDeviceGetCount(int* count) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_scenario) return kNotInitialized;
  *count = static_cast<int>(g_visible.size());
  return kSuccess;
}

EXPORT int cuDeviceGet(int* device, int ordinal) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_scenario) return kNotInitialized;
  if (!visible(ordinal)) return kInvalidDevice;
  *device = ordinal;
  return kSuccess;
}

EXPORT int cuDeviceGetName(char* name, int length, int dev) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = visible(dev);
  if (!d) return kInvalidDevice;
  fake::copy_string(d->text("name"), name, static_cast<unsigned>(length));
  return kSuccess;
}

EXPORT int cuDeviceGetUuid_v2(char* uuid, int dev) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = visible(dev);
  if (!d) return kInvalidDevice;
  // In MIG mode CUDA's device is the instance, and so is its UUID.
  return uuid_bytes(d->text("uuid"), uuid) ? kSuccess : kInvalidValue;
}

EXPORT int cuDeviceTotalMem_v2(std::size_t* bytes, int dev) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = visible(dev);
  if (!d) return kInvalidDevice;
  *bytes = static_cast<std::size_t>(d->spec.value("/memory/total"_json_pointer, 0ll));
  return kSuccess;
}

EXPORT int cuDeviceGetAttribute(int* value, int attribute, int dev) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = visible(dev);
  if (!d) return kInvalidDevice;
  Device* p = physical(d);
  auto cc = p->spec.value("cc", fake::json::array());
  auto number = [&](const char* key) { return static_cast<int>(p->spec.value(key, 0ll)); };
  switch (attribute) {
    case 75: *value = cc.size() == 2 ? cc[0].get<int>() : 0; return kSuccess;
    case 76: *value = cc.size() == 2 ? cc[1].get<int>() : 0; return kSuccess;
    case 16:
      // A MIG instance has only its share of the SMs.
      *value = d->parent ? static_cast<int>(d->spec.value("sm_count", 0ll)) : number("sm_count");
      return kSuccess;
    case 36: *value = number("memory_clock_khz"); return kSuccess;
    case 37: *value = number("bus_width"); return kSuccess;
    case 88: *value = number("pageable_memory_access"); return kSuccess;
    case 89: *value = number("concurrent_managed_access"); return kSuccess;
    case 100: *value = number("host_page_tables"); return kSuccess;
    case 18: *value = number("integrated"); return kSuccess;
    default: return kInvalidValue;
  }
}

EXPORT int cuDeviceGetPCIBusId(char* out, int length, int dev) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = visible(dev);
  if (!d) return kInvalidDevice;
  auto pci = nv::parse_pci_bus_id(physical(d)->text("pci_bus_id"));
  if (!pci) return kInvalidValue;
  // CUDA prints a four-digit domain, NVML eight.
  std::snprintf(out, static_cast<std::size_t>(length), "%04x:%02x:%02x.%x", pci->domain, pci->bus,
                pci->device, pci->function);
  return kSuccess;
}

EXPORT int cuDevicePrimaryCtxRetain(void** ctx, int dev) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!visible(dev)) return kInvalidDevice;
  // The context "pointer" encodes the device; it is never dereferenced.
  *ctx = reinterpret_cast<void*>(static_cast<std::uintptr_t>(dev + 1));
  return kSuccess;
}

EXPORT int cuDevicePrimaryCtxRelease_v2(int dev) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return visible(dev) ? kSuccess : kInvalidDevice;
}

EXPORT int cuCtxPushCurrent_v2(void* ctx) {
  t_current = static_cast<int>(reinterpret_cast<std::uintptr_t>(ctx)) - 1;
  return kSuccess;
}

EXPORT int cuCtxPopCurrent_v2(void** ctx) {
  if (ctx) *ctx = reinterpret_cast<void*>(static_cast<std::uintptr_t>(t_current + 1));
  t_current = -1;
  return kSuccess;
}

EXPORT int cuMemGetInfo_v2(std::size_t* free, std::size_t* total) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Device* d = visible(t_current);
  if (!d) return kInvalidContext;
  auto t = d->number("/memory/total").value_or(0);
  auto reserved = d->number("/memory/reserved").value_or(0);
  auto used = d->number("/memory/used").value_or(0);
  *total = static_cast<std::size_t>(t);
  *free = static_cast<std::size_t>(t - reserved - used);
  return kSuccess;
}

EXPORT int cuGetErrorString(int error, const char** text) {
  switch (error) {
    case kSuccess: *text = "no error"; return kSuccess;
    case kInvalidValue: *text = "invalid argument"; return kSuccess;
    case kNotInitialized: *text = "initialization error"; return kSuccess;
    case kInvalidDevice: *text = "invalid device ordinal"; return kSuccess;
    case kInvalidContext: *text = "invalid device context"; return kSuccess;
    default: *text = nullptr; return kInvalidValue;
  }
}
