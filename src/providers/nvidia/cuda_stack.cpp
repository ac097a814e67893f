#include <algorithm>

#include "core/fs.hpp"
#include "core/text.hpp"
#include "providers/nvidia/libraries.hpp"
#include "providers/nvidia/provider.hpp"

namespace mainboard::nvidia {

namespace {

/// "libcupti.so.13.0.85" → "13.0.85"; "libcupti.so" → "".
std::string soname_version(const std::string& file) {
  auto pos = file.find(".so.");
  return pos == std::string::npos ? std::string() : file.substr(pos + 4);
}

/// Finds a library file by prefix ("libcupti.so") in the usual CUDA directories, through the
/// sysroot. The most specific version wins (libcupti.so.13.0.85 over libcupti.so.13).
LibraryInfo find_library(const providers::Context& context, const char* override_var,
                         const std::string& prefix, std::vector<std::string> extra_dirs) {
  LibraryInfo info;
  if (auto path = core::env_value(context.env, override_var)) {
    info.found = context.fs->exists(*path);
    info.path = *path;
    info.version = soname_version(std::filesystem::path(*path).filename().string());
    if (!info.found) info.reason = *path + " (from " + override_var + ") does not exist";
    return info;
  }
  std::vector<std::string> dirs;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (auto root = core::env_value(context.env, var)) {
      dirs.push_back(*root + "/lib64");
      dirs.push_back(*root + "/extras/CUPTI/lib64");
      dirs.push_back(*root + "/targets/x86_64-linux/lib");
      dirs.push_back(*root + "/targets/sbsa-linux/lib");
    }
  for (const char* root : {"/usr/local/cuda"}) {
    dirs.push_back(std::string(root) + "/lib64");
    dirs.push_back(std::string(root) + "/extras/CUPTI/lib64");
    dirs.push_back(std::string(root) + "/targets/x86_64-linux/lib");
    dirs.push_back(std::string(root) + "/targets/sbsa-linux/lib");
  }
  dirs.insert(dirs.end(), extra_dirs.begin(), extra_dirs.end());
  for (const auto& dir : dirs) {
    std::string best;
    for (const auto& name : context.fs->list(dir))
      if (core::starts_with(name, prefix) && name.size() > best.size()) best = name;
    if (best.empty()) continue;
    info.found = true;
    info.path = dir + "/" + best;
    info.version = soname_version(best);
    return info;
  }
  info.reason = prefix + " not found in the CUDA directories";
  return info;
}

std::string cuda_version_string(int v) {
  if (v <= 0) return {};
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

CudaStack probe_cuda_stack(const providers::Context& context) {
  CudaStack s;
  auto nvml = load_nvml(context.env, context.fs->is_live());
  auto cuda = load_cuda(context.env, context.fs->is_live());
  s.nvml.found = nvml->ok;
  s.nvml.path = nvml->lib.path();
  s.nvml.reason = nvml->error;
  if (nvml->ok) {
    char buf[96] = {};
    if (nvml->nvml_version && nvml->nvml_version(buf, sizeof buf - 1) == nvml::kSuccess)
      s.nvml.version = buf;
    buf[0] = '\0';
    if (nvml->driver_version && nvml->driver_version(buf, sizeof buf - 1) == nvml::kSuccess)
      s.driver_version = buf;
    int cuda_version = 0;
    if (nvml->cuda_driver_version && nvml->cuda_driver_version(&cuda_version) == nvml::kSuccess)
      s.cuda_driver_version = cuda_version_string(cuda_version);
  }
  s.cuda_driver.found = cuda->ok;
  s.cuda_driver.path = cuda->lib.path();
  s.cuda_driver.reason = cuda->error;
  if (cuda->ok) {
    s.cuda_driver.version = cuda_version_string(cuda->driver_version);
    if (s.cuda_driver_version.empty()) s.cuda_driver_version = s.cuda_driver.version;
  }
  const std::vector<std::string> system_dirs = {
      "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"};
  // Both are looked for in the same directories: each is listed once.
  core::SharedReads listed(*context.fs, {"/"});
  s.cupti = find_library(context, "MAINBOARD_CUPTI_LIBRARY", "libcupti.so", system_dirs);
  s.cuda_runtime = find_library(context, "MAINBOARD_CUDART_LIBRARY", "libcudart.so", system_dirs);
  return s;
}

}  // namespace mainboard::nvidia
