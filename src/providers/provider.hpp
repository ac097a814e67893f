#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "core/environ.hpp"
#include "core/fs.hpp"
#include "host/run_probe.hpp"
#include "mainboard/gpu.hpp"
#include "mainboard/npu.hpp"
#include "mainboard/runner.hpp"
#include "mainboard/snapshot.hpp"

namespace mainboard::providers {

/// Outputs of commands already run during one probe of the machine, so providers that need the
/// same slow command (system_profiler for the Apple GPU and the Neural Engine) run it once.
struct CommandCache {
  std::mutex mutex;
  std::map<std::vector<std::string>, CommandResult> results;
};

/// What a provider may read: the sysroot, the environment, external commands.
struct Context {
  std::shared_ptr<const core::Fs> fs;
  const core::EnvMap& env;
  const Runner& runner;
  std::shared_ptr<CommandCache> cache = std::make_shared<CommandCache>();
  /// The same runner, owned, for units that run commands for their live readings.
  std::shared_ptr<const Runner> shared_runner = nullptr;
  /// A long-running reader: providers may start listeners (NVIDIA's XID events).
  bool listen_for_xids = false;
};

/// Runs a command through the context's runner once; later calls with the same argv get the
/// first result.
inline CommandResult run_cached(const Context& context, const Command& command) {
  std::lock_guard<std::mutex> lock(context.cache->mutex);
  auto it = context.cache->results.find(command.argv);
  if (it != context.cache->results.end()) return it->second;
  auto result = context.runner.run(command);
  context.cache->results[command.argv] = result;
  return result;
}

/// One vendor backend. It describes itself (name, what it reads) and lists its devices;
/// it may throw, and the registry then logs it once and carries on without it.
template <class UnitT>
struct Provider {
  const char* name;
  const char* reads;
  /// Lists the devices; says in `note` why there are none (library missing, no device…).
  std::vector<std::shared_ptr<UnitT>> (*probe)(const Context& context, host::Note& note);
};

using GpuProvider = Provider<Gpu>;
using NpuProvider = Provider<Npu>;

/// The explicit tables: adding a vendor is one line in registry.cpp.
std::span<const GpuProvider> gpu_providers();
std::span<const NpuProvider> npu_providers();

/// Every provider's devices, best-effort: a provider that throws or finds nothing is recorded
/// in `diagnostics` (as "<kind>:<name>") and the others carry on.
template <class UnitT>
std::vector<std::shared_ptr<UnitT>> probe_all(std::span<const providers::Provider<UnitT>> table,
                                              const providers::Context& context, const char* kind,
                                              std::vector<Diagnostic>& diagnostics) {
  std::vector<std::shared_ptr<UnitT>> all;
  for (const auto& provider : table) {
    std::string name = std::string(kind) + ":" + provider.name;
    Diagnostic diag;
    auto units = host::run_probe<std::vector<std::shared_ptr<UnitT>>>(
        name.c_str(), diag, [&](host::Note& note) { return provider.probe(context, note); });
    if (diag.status == ProbeStatus::ok && units.empty()) {
      diag.status = ProbeStatus::unsupported;
      diag.reason = std::string("no device (reads ") + provider.reads + ")";
    } else if (diag.status == ProbeStatus::unsupported && units.empty() && diag.reason.empty()) {
      diag.reason = std::string("no device (reads ") + provider.reads + ")";
    }
    diagnostics.push_back(std::move(diag));
    for (auto& u : units)
      if (u) all.push_back(std::move(u));
  }
  return all;
}

}  // namespace mainboard::providers
