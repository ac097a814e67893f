#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/dynamic_library.hpp"
#include "core/environ.hpp"
#include "providers/nvidia/cuda_api.hpp"
#include "providers/nvidia/nvml_api.hpp"

namespace mainboard::nvidia {

/// NVML, loaded and initialised. Required symbols decide whether it is usable at all; optional
/// ones (null when absent) make only their readings unsupported. Shut down and unloaded when the
/// last GPU object using it goes away.
struct NvmlLibrary {
  core::DynamicLibrary lib;
  bool ok = false;
  std::string error;  // why it is not usable

  nvml::ShutdownFn* shutdown = nullptr;
  nvml::ErrorStringFn* error_string = nullptr;
  nvml::SystemStringFn* driver_version = nullptr;
  nvml::SystemStringFn* nvml_version = nullptr;
  nvml::SystemIntFn* cuda_driver_version = nullptr;
  nvml::CountFn* device_count = nullptr;
  nvml::HandleByIndexFn* handle_by_index = nullptr;
  nvml::HandleByStringFn* handle_by_pci_bus_id = nullptr;
  nvml::HandleByStringFn* handle_by_uuid = nullptr;
  nvml::DeviceStringFn* name = nullptr;
  nvml::DeviceStringFn* uuid = nullptr;
  nvml::PciInfoFn* pci_info = nullptr;
  nvml::ComputeCapabilityFn* compute_capability = nullptr;
  nvml::DeviceUintFn* memory_bus_width = nullptr;
  nvml::MemoryV2Fn* memory_v2 = nullptr;
  nvml::MemoryFn* memory_v1 = nullptr;
  nvml::ClockFn* clock = nullptr;
  nvml::ClockFn* max_clock = nullptr;
  nvml::UtilizationFn* utilization = nullptr;
  nvml::TemperatureVFn* temperature_v = nullptr;
  nvml::ClockFn* temperature = nullptr;
  nvml::ClockFn* temperature_threshold = nullptr;
  nvml::DeviceUllFn* clock_event_reasons = nullptr;
  nvml::DeviceUintFn* power_usage = nullptr;
  nvml::DeviceUintFn* power_limit = nullptr;
  nvml::DeviceUllFn* total_energy = nullptr;
  nvml::PcieThroughputFn* pcie_throughput = nullptr;
  nvml::DeviceUintFn* pcie_link_gen = nullptr;
  nvml::DeviceUintFn* pcie_link_width = nullptr;
  nvml::DeviceUintFn* pcie_max_link_gen = nullptr;
  nvml::DeviceUintFn* pcie_max_link_width = nullptr;
  nvml::DeviceUintFn* fan_speed = nullptr;
  nvml::ProcessesFn* processes = nullptr;  // _v3 or _v2
  nvml::ProcessesV1Fn* processes_v1 = nullptr;
  nvml::MigModeFn* mig_mode = nullptr;
  nvml::DeviceUintFn* persistence_mode = nullptr;
  nvml::MigModeFn* ecc_mode = nullptr;
  nvml::EccCountFn* ecc_errors = nullptr;
  nvml::RemappedRowsFn* remapped_rows = nullptr;
  nvml::DeviceUintFn* retired_pages_pending = nullptr;
  nvml::DeviceUintFn* max_mig_devices = nullptr;
  nvml::MigHandleFn* mig_handle_by_index = nullptr;
  nvml::DeviceUintFn* gpu_instance_id = nullptr;
  nvml::DeviceUintFn* compute_instance_id = nullptr;
  nvml::NvLinkStateFn* nvlink_state = nullptr;
  nvml::NvLinkVersionFn* nvlink_version = nullptr;
  nvml::NvLinkErrorCounterFn* nvlink_error_counter = nullptr;
  nvml::NvLinkRemotePciInfoFn* nvlink_remote_pci = nullptr;
  nvml::NvLinkRemoteDeviceTypeFn* nvlink_remote_type = nullptr;
  nvml::FieldValuesFn* field_values = nullptr;
  nvml::EventSetCreateFn* event_set_create = nullptr;
  nvml::RegisterEventsFn* register_events = nullptr;
  nvml::EventSetWaitFn* event_set_wait = nullptr;
  nvml::EventSetFreeFn* event_set_free = nullptr;
  nvml::GpmSupportFn* gpm_query_support = nullptr;
  nvml::GpmSampleAllocFn* gpm_sample_alloc = nullptr;
  nvml::GpmSampleFreeFn* gpm_sample_free = nullptr;
  nvml::GpmSampleGetFn* gpm_sample_get = nullptr;
  nvml::GpmMetricsGetFn* gpm_metrics_get = nullptr;

  /// NVML's own words for a return code.
  std::string describe(nvml::Return r) const;

  NvmlLibrary() = default;
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;
  ~NvmlLibrary();
};

/// The CUDA driver API, loaded and cuInit'ed.
struct CudaLibrary {
  core::DynamicLibrary lib;
  bool ok = false;
  std::string error;
  int driver_version = 0;  // 1000 * major + 10 * minor

  cuda::DeviceGetCountFn* device_count = nullptr;
  cuda::DeviceGetFn* device_get = nullptr;
  cuda::DeviceGetNameFn* name = nullptr;
  cuda::DeviceGetUuidFn* uuid = nullptr;
  cuda::DeviceTotalMemFn* total_mem = nullptr;
  cuda::DeviceGetAttributeFn* attribute = nullptr;
  cuda::DeviceGetPciBusIdFn* pci_bus_id = nullptr;
  cuda::PrimaryCtxRetainFn* primary_ctx_retain = nullptr;
  cuda::PrimaryCtxReleaseFn* primary_ctx_release = nullptr;
  cuda::CtxPushFn* ctx_push = nullptr;
  cuda::CtxPopFn* ctx_pop = nullptr;
  cuda::MemGetInfoFn* mem_get_info = nullptr;
  cuda::GetErrorStringFn* error_string = nullptr;

  std::string describe(cuda::Result r) const;
  std::optional<int> device_attribute(cuda::Device dev, int attribute) const;
};

/// Loads (or shares the already loaded) NVML: MAINBOARD_NVML_LIBRARY, else libnvidia-ml.so.1.
/// Never null; check `ok`. One debug log line says why it is not usable.
/// A recorded host (`live == false`) loads only an explicitly named library: the machine we run
/// on is not the one the sysroot describes.
std::shared_ptr<NvmlLibrary> load_nvml(const core::EnvMap& env, bool live = true);
/// Loads the CUDA driver: MAINBOARD_CUDA_LIBRARY, else libcuda.so.1. The toolkit's stub library
/// (every call answers CUDA_ERROR_STUB_LIBRARY) counts as no driver.
std::shared_ptr<CudaLibrary> load_cuda(const core::EnvMap& env, bool live = true);

}  // namespace mainboard::nvidia
