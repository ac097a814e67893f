#pragma once

// The subset of the CUDA driver API (libcuda.so.1) that mainboard calls, declared from NVIDIA's
// public cuda.h (CUDA 13; https://docs.nvidia.com/cuda/cuda-driver-api/). Looked up with dlsym
// by the versioned names the library exports (cuda.h #defines cuDeviceTotalMem to
// cuDeviceTotalMem_v2 and so on). Where the toolkit headers exist, a test checks these
// prototypes against cuda.h.
#include <cstddef>

namespace mainboard::nvidia::cuda {

using Result = int;  // CUresult
using Device = int;  // CUdevice
typedef struct CUctx_st* Context;
struct Uuid {
  char bytes[16];
};

constexpr Result kSuccess = 0;
constexpr Result kNotInitialized = 3;
constexpr Result kStubLibrary = 34;  // the toolkit's stubs/libcuda.so: every call fails
constexpr Result kNoDevice = 100;
constexpr Result kInvalidDevice = 101;

// CUdevice_attribute values.
constexpr int kAttrClockRate = 13;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrIntegrated = 18;
constexpr int kAttrMemoryClockRate = 36;       // kHz
constexpr int kAttrGlobalMemoryBusWidth = 37;  // bits
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrPageableMemoryAccess = 88;
constexpr int kAttrConcurrentManagedAccess = 89;
constexpr int kAttrPageableMemoryAccessUsesHostPageTables = 100;

using InitFn = Result(unsigned);
using DriverGetVersionFn = Result(int*);
using DeviceGetCountFn = Result(int*);
using DeviceGetFn = Result(Device*, int);
using DeviceGetNameFn = Result(char*, int, Device);
using DeviceGetUuidFn = Result(Uuid*, Device);
using DeviceTotalMemFn = Result(std::size_t*, Device);
using DeviceGetAttributeFn = Result(int*, int, Device);
using DeviceGetPciBusIdFn = Result(char*, int, Device);
using PrimaryCtxRetainFn = Result(Context*, Device);
using PrimaryCtxReleaseFn = Result(Device);
using CtxPushFn = Result(Context);
using CtxPopFn = Result(Context*);
using MemGetInfoFn = Result(std::size_t*, std::size_t*);
using GetErrorStringFn = Result(Result, const char**);

}  // namespace mainboard::nvidia::cuda
