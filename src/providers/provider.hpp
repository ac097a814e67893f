#pragma once

#include <memory>
#include <span>
#include <vector>

#include "core/environ.hpp"
#include "core/fs.hpp"
#include "mainboard/gpu.hpp"
#include "mainboard/npu.hpp"
#include "mainboard/runner.hpp"

namespace mainboard::providers {

/// What a provider may read: the sysroot, the environment, external commands.
struct Context {
  std::shared_ptr<const core::Fs> fs;
  const core::EnvMap& env;
  const Runner& runner;
};

/// One vendor backend. It describes itself (name, what it reads) and lists its devices;
/// it may throw, and the registry then logs it once and carries on without it.
template <class UnitT>
struct Provider {
  const char* name;
  const char* reads;
  std::vector<std::shared_ptr<UnitT>> (*probe)(const Context& context);
};

using GpuProvider = Provider<Gpu>;
using NpuProvider = Provider<Npu>;

/// The explicit tables: adding a vendor is one line in registry.cpp.
std::span<const GpuProvider> gpu_providers();
std::span<const NpuProvider> npu_providers();

}  // namespace mainboard::providers
