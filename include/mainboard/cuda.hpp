#pragma once

#include <optional>
#include <string>

#include "mainboard/export.hpp"

namespace mainboard {

/// One library of the CUDA stack as found on this host.
struct MAINBOARD_API LibraryInfo {
  bool found = false;
  std::string path;
  std::string version;
  std::string reason;  ///< why it was not found or not usable
  bool operator==(const LibraryInfo&) const = default;
};

/// The CUDA stack found on the host, so a user sees why a GPU reading is missing: the kernel
/// driver, NVML, the driver API, CUPTI, the runtime and the toolkit's compiler.
struct MAINBOARD_API CudaStack {
  std::string driver_version;       ///< NVIDIA kernel driver, e.g. "550.54.15"
  std::string cuda_driver_version;  ///< highest CUDA version the driver supports, e.g. "12.4"
  LibraryInfo nvml;
  LibraryInfo cuda_driver;
  LibraryInfo cupti;
  LibraryInfo cuda_runtime;
  std::optional<std::string> nvcc_path;
  std::optional<std::string> nvcc_version;
  /// When nvcc's CUDA is newer than the driver supports, the warning a user needs before the
  /// program fails with "CUDA driver version is insufficient for CUDA runtime version";
  /// empty when both are known and agree, or either is unknown.
  std::string toolkit_newer_than_driver() const;
  bool operator==(const CudaStack&) const = default;
};

}  // namespace mainboard
