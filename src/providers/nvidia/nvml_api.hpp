#pragma once

// The subset of NVML (libnvidia-ml.so.1) that mainboard calls, declared from NVIDIA's public
// nvml.h (NVML 13; https://docs.nvidia.com/deploy/nvml-api/). We never include nvml.h nor link
// the library: these are the types of the function pointers we look up with dlsym, by the
// versioned names the library exports (the header #defines the plain names to them).
#include <cstddef>
#include <cstdint>

namespace mainboard::nvidia::nvml {

typedef struct nvmlDevice_st* Device;  // nvmlDevice_t
using Return = int;                    // nvmlReturn_t

// nvmlReturn_t values.
constexpr Return kSuccess = 0;
constexpr Return kUninitialized = 1;
constexpr Return kInvalidArgument = 2;
constexpr Return kNotSupported = 3;
constexpr Return kNoPermission = 4;
constexpr Return kNotFound = 6;
constexpr Return kInsufficientSize = 7;
constexpr Return kDriverNotLoaded = 9;
constexpr Return kTimeout = 10;
constexpr Return kFunctionNotFound = 13;
constexpr Return kGpuIsLost = 15;
constexpr Return kUnknown = 999;

// nvmlClockType_t
constexpr unsigned kClockGraphics = 0, kClockSm = 1, kClockMem = 2, kClockVideo = 3;
// nvmlTemperatureSensors_t / nvmlTemperatureThresholds_t
constexpr unsigned kTemperatureGpu = 0;
constexpr unsigned kThresholdShutdown = 0, kThresholdSlowdown = 1;
// nvmlPcieUtilCounter_t
constexpr unsigned kPcieTxBytes = 0, kPcieRxBytes = 1;

// nvmlPciInfo_t (68 bytes on x86-64).
struct PciInfo {
  char busIdLegacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pciDeviceId;  // device id << 16 | vendor id
  unsigned pciSubSystemId;
  char busId[32];  // "%08X:%02X:%02X.0"
};
static_assert(sizeof(PciInfo) == 68);

struct Memory {  // nvmlMemory_t: used includes memory the driver reserves
  unsigned long long total, free, used;
};
struct MemoryV2 {  // nvmlMemory_v2_t: used excludes `reserved`
  unsigned version;
  unsigned long long total, reserved, free, used;
};
static_assert(sizeof(MemoryV2) == 40);
constexpr unsigned kMemoryV2Version = static_cast<unsigned>(sizeof(MemoryV2)) | (2u << 24);

struct Utilization {  // nvmlUtilization_t, percent over the last sample period
  unsigned gpu, memory;
};

struct ProcessInfo {  // nvmlProcessInfo_t as the _v2/_v3 process queries fill it
  unsigned pid;
  unsigned long long usedGpuMemory;  // ~0ull: not available (e.g. Windows WDDM, some MIG cases)
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
};
static_assert(sizeof(ProcessInfo) == 24);
struct ProcessInfoV1 {  // the original layout the unversioned query fills
  unsigned pid;
  unsigned long long usedGpuMemory;
};
static_assert(sizeof(ProcessInfoV1) == 16);

struct TemperatureV {  // nvmlTemperature_t for nvmlDeviceGetTemperatureV
  unsigned version;
  int sensorType;
  int temperature;
};
constexpr unsigned kTemperatureVVersion = static_cast<unsigned>(sizeof(TemperatureV)) | (1u << 24);

constexpr unsigned long long kNotAvailable = ~0ull;

using InitFn = Return();
using ShutdownFn = Return();
using ErrorStringFn = const char*(Return);
using SystemStringFn = Return(char*, unsigned);  // driver / NVML version
using SystemIntFn = Return(int*);                // CUDA driver version
using CountFn = Return(unsigned*);
using HandleByIndexFn = Return(unsigned, Device*);
using HandleByStringFn = Return(const char*, Device*);   // by PCI bus id, by UUID
using DeviceStringFn = Return(Device, char*, unsigned);  // name, UUID
using PciInfoFn = Return(Device, PciInfo*);
using ComputeCapabilityFn = Return(Device, int*, int*);
using MemoryFn = Return(Device, Memory*);
using MemoryV2Fn = Return(Device, MemoryV2*);
using DeviceUintFn = Return(Device, unsigned*);  // bus width, power, limits, fan, PCIe link…
using DeviceUllFn = Return(Device, unsigned long long*);  // energy, clock event reasons
using ClockFn = Return(Device, unsigned, unsigned*);      // clock info, temperature, thresholds
using UtilizationFn = Return(Device, Utilization*);
using PcieThroughputFn = Return(Device, unsigned, unsigned*);
using ProcessesFn = Return(Device, unsigned*, ProcessInfo*);
using ProcessesV1Fn = Return(Device, unsigned*, ProcessInfoV1*);
using TemperatureVFn = Return(Device, TemperatureV*);
using MigModeFn = Return(Device, unsigned*, unsigned*);  // also ECC mode: current, pending
using EccCountFn = Return(Device, unsigned, unsigned, unsigned long long*);  // error, counter
using RemappedRowsFn = Return(Device, unsigned*, unsigned*, unsigned*, unsigned*);
using MigHandleFn = Return(Device, unsigned, Device*);

// NVLink. NVML 12 allows 18 links a GPU (Hopper), NVML 13 36 (Blackwell); a link index past
// the GPU's own links answers INVALID_ARGUMENT.
constexpr unsigned kNvLinkMaxLinks = 36;
// nvmlNvLinkErrorCounter_t
constexpr unsigned kNvLinkErrorReplay = 0, kNvLinkErrorRecovery = 1, kNvLinkErrorCrcFlit = 2;
using NvLinkStateFn = Return(Device, unsigned, unsigned*);  // nvmlEnableState_t: 1 active
using NvLinkVersionFn = Return(Device, unsigned, unsigned*);
using NvLinkErrorCounterFn = Return(Device, unsigned, unsigned, unsigned long long*);
// What a link reaches: nvmlDeviceGetNvLinkRemotePciInfo_v2 and
// nvmlDeviceGetNvLinkRemoteDeviceType (nvmlIntNvLinkDeviceType_t).
using NvLinkRemotePciInfoFn = Return(Device, unsigned, PciInfo*);
using NvLinkRemoteDeviceTypeFn = Return(Device, unsigned, int*);
constexpr int kNvLinkDeviceGpu = 0, kNvLinkDeviceIbmNpu = 1, kNvLinkDeviceSwitch = 2;

// nvmlFieldValue_t, for nvmlDeviceGetFieldValues.
struct FieldValue {
  unsigned fieldId;
  unsigned scopeId;  // the link, for per-link fields
  long long timestamp;
  long long latencyUsec;
  int valueType;  // nvmlValueType_t: 0 double, 1 uint, 2 ulong, 3 ull, 4 sll, 5 int, 6 ushort
  int nvmlReturn;
  union {
    double d;
    unsigned ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
    int si;
    unsigned short us;
  } value;
};
static_assert(sizeof(FieldValue) == 40);
// NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX / _RX: payload KiB through a link since the driver loaded.
constexpr unsigned kFieldNvLinkDataTx = 138, kFieldNvLinkDataRx = 139;
using FieldValuesFn = Return(Device, int, FieldValue*);

// Events (XIDs): nvmlEventSet_t, nvmlEventData_t, nvmlEventType flags.
typedef struct nvmlEventSet_st* EventSet;
struct EventData {
  Device device;
  unsigned long long eventType;
  unsigned long long eventData;  // the XID; 999 unknown
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
};
static_assert(sizeof(EventData) == 32);
constexpr unsigned long long kEventXidCriticalError = 0x8;
using EventSetCreateFn = Return(EventSet*);
using RegisterEventsFn = Return(Device, unsigned long long, EventSet);
using EventSetWaitFn = Return(EventSet, EventData*, unsigned);  // timeout in ms
using EventSetFreeFn = Return(EventSet);

// GPU performance monitoring (GPM, Hopper and later): two samples, and metrics between them.
typedef struct nvmlGpmSample_st* GpmSample;
struct GpmSupport {  // nvmlGpmSupport_t
  unsigned version;  // 1
  unsigned isSupportedDevice;
};
struct GpmMetric {  // nvmlGpmMetric_t
  unsigned metricId;
  int nvmlReturn;
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
};
static_assert(sizeof(GpmMetric) == 40);
constexpr unsigned kGpmMetricsCapacity = 333;  // NVML_GPM_METRIC_MAX: the array nvml.h declares
struct GpmMetricsGet {                         // nvmlGpmMetricsGet_t
  unsigned version;                            // 1
  unsigned numMetrics;
  GpmSample sample1;
  GpmSample sample2;
  GpmMetric metrics[kGpmMetricsCapacity];
};
static_assert(offsetof(GpmMetricsGet, metrics) == 24);
// nvmlGpmMetricId_t: percentages.
constexpr unsigned kGpmGraphicsUtil = 1, kGpmSmUtil = 2, kGpmSmOccupancy = 3, kGpmAnyTensorUtil = 5,
                   kGpmDramBwUtil = 10;
using GpmSupportFn = Return(Device, GpmSupport*);
using GpmSampleAllocFn = Return(GpmSample*);
using GpmSampleFreeFn = Return(GpmSample);
using GpmSampleGetFn = Return(Device, GpmSample);
using GpmMetricsGetFn = Return(GpmMetricsGet*);
using ParentHandleFn = Return(Device, Device*);

}  // namespace mainboard::nvidia::nvml
