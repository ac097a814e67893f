#include "providers/nvidia/libraries.hpp"

#include <unistd.h>

#include <map>
#include <mutex>

#include "core/log.hpp"

namespace mainboard::nvidia {

NvmlLibrary::~NvmlLibrary() {
  if (ok && shutdown) shutdown();
}

std::string NvmlLibrary::describe(nvml::Return r) const {
  if (error_string)
    if (const char* s = error_string(r)) return s;
  return "NVML error " + std::to_string(r);
}

std::string CudaLibrary::describe(cuda::Result r) const {
  const char* s = nullptr;
  if (error_string && error_string(r, &s) == cuda::kSuccess && s) return s;
  return "CUDA error " + std::to_string(r);
}

std::optional<int> CudaLibrary::device_attribute(cuda::Device dev, int attr) const {
  int v = 0;
  if (!ok || !attribute || attribute(&v, attr, dev) != cuda::kSuccess) return std::nullopt;
  return v;
}

namespace {

/// One loaded library per path at a time: every Machine and GPU object shares it, and it is
/// shut down when the last one goes away (so a test can swap the fake's scenario in between).
template <class Lib>
std::shared_ptr<Lib> shared(const std::string& key,
                            std::shared_ptr<Lib> (*load)(const std::string&)) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<Lib>> live;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto existing = live[key].lock()) return existing;
  auto fresh = load(key);
  live[key] = fresh;
  return fresh;
}

template <class Fn>
void bind(const core::DynamicLibrary& lib, Fn*& slot, std::initializer_list<const char*> names) {
  slot = lib.first_symbol<Fn>(names);
}

std::shared_ptr<NvmlLibrary> open_nvml(const std::string& path) {
  auto n = std::make_shared<NvmlLibrary>();
  std::string error;
  n->lib = core::DynamicLibrary::open({path}, &error);
  if (!n->lib.loaded()) {
    n->error = "NVML not loaded: " + error;
    return n;
  }
  const auto& lib = n->lib;
  auto* init = lib.first_symbol<nvml::InitFn>({"nvmlInit_v2", "nvmlInit"});
  bind(lib, n->shutdown, {"nvmlShutdown"});
  bind(lib, n->error_string, {"nvmlErrorString"});
  bind(lib, n->device_count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  bind(lib, n->handle_by_index, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  bind(lib, n->name, {"nvmlDeviceGetName"});
  bind(lib, n->uuid, {"nvmlDeviceGetUUID"});
  const char* missing = !init                 ? "nvmlInit_v2"
                        : !n->shutdown        ? "nvmlShutdown"
                        : !n->device_count    ? "nvmlDeviceGetCount_v2"
                        : !n->handle_by_index ? "nvmlDeviceGetHandleByIndex_v2"
                        : !n->name            ? "nvmlDeviceGetName"
                        : !n->uuid            ? "nvmlDeviceGetUUID"
                                              : nullptr;
  if (missing) {
    n->error = std::string("NVML at ") + lib.path() + " lacks " + missing;
    return n;
  }
  bind(lib, n->driver_version, {"nvmlSystemGetDriverVersion"});
  bind(lib, n->nvml_version, {"nvmlSystemGetNVMLVersion"});
  bind(lib, n->cuda_driver_version,
       {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"});
  bind(lib, n->handle_by_pci_bus_id,
       {"nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId"});
  bind(lib, n->handle_by_uuid, {"nvmlDeviceGetHandleByUUID"});
  bind(lib, n->pci_info, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"});
  bind(lib, n->compute_capability, {"nvmlDeviceGetCudaComputeCapability"});
  bind(lib, n->memory_bus_width, {"nvmlDeviceGetMemoryBusWidth"});
  bind(lib, n->memory_v2, {"nvmlDeviceGetMemoryInfo_v2"});
  bind(lib, n->memory_v1, {"nvmlDeviceGetMemoryInfo"});
  bind(lib, n->clock, {"nvmlDeviceGetClockInfo"});
  bind(lib, n->max_clock, {"nvmlDeviceGetMaxClockInfo"});
  bind(lib, n->utilization, {"nvmlDeviceGetUtilizationRates"});
  bind(lib, n->temperature_v, {"nvmlDeviceGetTemperatureV"});
  bind(lib, n->temperature, {"nvmlDeviceGetTemperature"});
  bind(lib, n->temperature_threshold, {"nvmlDeviceGetTemperatureThreshold"});
  bind(lib, n->clock_event_reasons,
       {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  bind(lib, n->power_usage, {"nvmlDeviceGetPowerUsage"});
  bind(lib, n->power_limit, {"nvmlDeviceGetEnforcedPowerLimit"});
  bind(lib, n->total_energy, {"nvmlDeviceGetTotalEnergyConsumption"});
  bind(lib, n->pcie_throughput, {"nvmlDeviceGetPcieThroughput"});
  bind(lib, n->pcie_link_gen, {"nvmlDeviceGetCurrPcieLinkGeneration"});
  bind(lib, n->pcie_link_width, {"nvmlDeviceGetCurrPcieLinkWidth"});
  bind(lib, n->pcie_max_link_gen, {"nvmlDeviceGetMaxPcieLinkGeneration"});
  bind(lib, n->pcie_max_link_width, {"nvmlDeviceGetMaxPcieLinkWidth"});
  bind(lib, n->fan_speed, {"nvmlDeviceGetFanSpeed"});
  bind(lib, n->processes,
       {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});
  bind(lib, n->processes_v1, {"nvmlDeviceGetComputeRunningProcesses"});
  bind(lib, n->mig_mode, {"nvmlDeviceGetMigMode"});
  bind(lib, n->persistence_mode, {"nvmlDeviceGetPersistenceMode"});
  bind(lib, n->ecc_mode, {"nvmlDeviceGetEccMode"});
  bind(lib, n->ecc_errors, {"nvmlDeviceGetTotalEccErrors"});
  bind(lib, n->remapped_rows, {"nvmlDeviceGetRemappedRows"});
  bind(lib, n->retired_pages_pending, {"nvmlDeviceGetRetiredPagesPendingStatus"});
  bind(lib, n->max_mig_devices, {"nvmlDeviceGetMaxMigDeviceCount"});
  bind(lib, n->mig_handle_by_index, {"nvmlDeviceGetMigDeviceHandleByIndex"});
  bind(lib, n->gpu_instance_id, {"nvmlDeviceGetGpuInstanceId"});
  bind(lib, n->compute_instance_id, {"nvmlDeviceGetComputeInstanceId"});
  bind(lib, n->nvlink_state, {"nvmlDeviceGetNvLinkState"});
  bind(lib, n->nvlink_version, {"nvmlDeviceGetNvLinkVersion"});
  bind(lib, n->nvlink_error_counter, {"nvmlDeviceGetNvLinkErrorCounter"});
  bind(lib, n->nvlink_remote_pci,
       {"nvmlDeviceGetNvLinkRemotePciInfo_v2", "nvmlDeviceGetNvLinkRemotePciInfo"});
  bind(lib, n->nvlink_remote_type, {"nvmlDeviceGetNvLinkRemoteDeviceType"});
  bind(lib, n->field_values, {"nvmlDeviceGetFieldValues"});
  bind(lib, n->event_set_create, {"nvmlEventSetCreate"});
  bind(lib, n->register_events, {"nvmlDeviceRegisterEvents"});
  bind(lib, n->event_set_wait, {"nvmlEventSetWait_v2"});
  bind(lib, n->event_set_free, {"nvmlEventSetFree"});
  bind(lib, n->gpm_query_support, {"nvmlGpmQueryDeviceSupport"});
  bind(lib, n->gpm_sample_alloc, {"nvmlGpmSampleAlloc"});
  bind(lib, n->gpm_sample_free, {"nvmlGpmSampleFree"});
  bind(lib, n->gpm_sample_get, {"nvmlGpmSampleGet"});
  bind(lib, n->gpm_metrics_get, {"nvmlGpmMetricsGet"});

  nvml::Return r = init();
  if (r != nvml::kSuccess) {
    n->error = "nvmlInit failed: " + n->describe(r);
    return n;
  }
  n->ok = true;
  return n;
}

std::shared_ptr<CudaLibrary> open_cuda(const std::string& path) {
  auto c = std::make_shared<CudaLibrary>();
  std::string error;
  c->lib = core::DynamicLibrary::open({path}, &error);
  if (!c->lib.loaded()) {
    c->error = "CUDA driver not loaded: " + error;
    return c;
  }
  const auto& lib = c->lib;
  auto* init = lib.symbol<cuda::InitFn>("cuInit");
  auto* version = lib.symbol<cuda::DriverGetVersionFn>("cuDriverGetVersion");
  bind(lib, c->device_count, {"cuDeviceGetCount"});
  bind(lib, c->device_get, {"cuDeviceGet"});
  bind(lib, c->name, {"cuDeviceGetName"});
  bind(lib, c->uuid, {"cuDeviceGetUuid_v2", "cuDeviceGetUuid"});
  bind(lib, c->total_mem, {"cuDeviceTotalMem_v2"});
  bind(lib, c->attribute, {"cuDeviceGetAttribute"});
  bind(lib, c->pci_bus_id, {"cuDeviceGetPCIBusId"});
  bind(lib, c->primary_ctx_retain, {"cuDevicePrimaryCtxRetain"});
  bind(lib, c->primary_ctx_release, {"cuDevicePrimaryCtxRelease_v2"});
  bind(lib, c->ctx_push, {"cuCtxPushCurrent_v2"});
  bind(lib, c->ctx_pop, {"cuCtxPopCurrent_v2"});
  bind(lib, c->mem_get_info, {"cuMemGetInfo_v2"});
  bind(lib, c->error_string, {"cuGetErrorString"});
  if (!init || !c->device_count || !c->device_get || !c->attribute) {
    c->error = "CUDA driver at " + lib.path() + " lacks cuInit/cuDeviceGetCount/cuDeviceGet";
    return c;
  }
  cuda::Result r = init(0);
  if (r == cuda::kStubLibrary) {
    c->error = "the CUDA library at " + lib.path() + " is the toolkit's stub, not a driver";
    return c;
  }
  if (r != cuda::kSuccess) {
    c->error = "cuInit failed: " + c->describe(r);
    return c;
  }
  if (version) version(&c->driver_version);
  c->ok = true;
  return c;
}

std::optional<std::string> library_path(const core::EnvMap& env, const char* variable,
                                        const char* fallback, bool live) {
  if (auto v = core::env_value(env, variable)) return *v;
  if (!live) return std::nullopt;
  return std::string(fallback);
}

/// Why the driver's libraries cannot work here, when no NVIDIA kernel driver is loaded (neither
/// its control device, its /proc directory, nor WSL's GPU device): a library of the driver looked
/// for anyway is looked for in about thirty directories, to fail in each.
std::optional<std::string> no_kernel_driver() {
  for (const char* path : {"/dev/nvidiactl", "/proc/driver/nvidia", "/dev/dxg"})
    if (::access(path, F_OK) == 0) return std::nullopt;
  return "no NVIDIA kernel driver (no /dev/nvidiactl, /proc/driver/nvidia or /dev/dxg)";
}

template <class Lib>
std::shared_ptr<Lib> not_for_recorded_host(const char* variable) {
  auto lib = std::make_shared<Lib>();
  lib->error =
      std::string("a recorded host loads no driver library unless ") + variable + " names one";
  return lib;
}

}  // namespace

std::shared_ptr<NvmlLibrary> load_nvml(const core::EnvMap& env, bool live) {
  auto path = library_path(env, "MAINBOARD_NVML_LIBRARY", "libnvidia-ml.so.1", live);
  if (!path) return not_for_recorded_host<NvmlLibrary>("MAINBOARD_NVML_LIBRARY");
  if (!core::env_value(env, "MAINBOARD_NVML_LIBRARY"))
    if (auto why = no_kernel_driver()) {
      auto n = std::make_shared<NvmlLibrary>();
      n->error = "NVML not loaded: " + *why;
      return n;
    }
  auto n = shared<NvmlLibrary>(*path, open_nvml);
  if (!n->ok) core::log().debug("nvidia: {}", n->error);
  return n;
}

std::shared_ptr<CudaLibrary> load_cuda(const core::EnvMap& env, bool live) {
  auto path = library_path(env, "MAINBOARD_CUDA_LIBRARY", "libcuda.so.1", live);
  if (!path) return not_for_recorded_host<CudaLibrary>("MAINBOARD_CUDA_LIBRARY");
  if (!core::env_value(env, "MAINBOARD_CUDA_LIBRARY"))
    if (auto why = no_kernel_driver()) {
      auto c = std::make_shared<CudaLibrary>();
      c->error = "CUDA driver not loaded: " + *why;
      return c;
    }
  auto c = shared<CudaLibrary>(*path, open_cuda);
  if (!c->ok) core::log().debug("nvidia: {}", c->error);
  return c;
}

}  // namespace mainboard::nvidia
