#include "providers/apple/apple.hpp"

#include "core/text.hpp"
#include "host/darwin.hpp"
#include "providers/apple/system_profiler.hpp"

namespace mainboard {

namespace {

const char* kPrivileged = "Apple does not expose this without privileged sampling (powermetrics)";

/// The unified pool: the machine's RAM, with usage from vm_stat when the runner can give it.
Reading<Memory> unified_memory(std::uint64_t total, const std::shared_ptr<const Runner>& runner) {
  if (runner && host::darwin::available(*runner))
    if (auto m = host::darwin::read_memory(*runner, "unified", true)) return m;
  if (total == 0) return Reading<Memory>::none("no memory size from system_profiler or sysctl");
  Memory m;
  m.total_bytes = total;
  m.source = MemorySource::system_profiler_ram;
  m.scope = "unified";
  m.unified = true;
  return m;
}

}  // namespace

AppleGpu::AppleGpu(GpuInfo info, std::uint64_t vram_bytes, bool unified,
                   std::shared_ptr<const Runner> runner)
    : info_(std::move(info)),
      vram_bytes_(vram_bytes),
      unified_(unified),
      runner_(std::move(runner)) {}

Reading<Memory> AppleGpu::memory() const {
  if (unified_) return unified_memory(vram_bytes_, runner_);
  if (vram_bytes_ == 0) return Reading<Memory>::none("system_profiler reports no VRAM size");
  Memory m;  // the size only: usage needs IOKit accounting we do not read
  m.scope = "vram";
  m.source = MemorySource::system_profiler;
  m.total_bytes = vram_bytes_;
  return m;
}

Reading<Utilization> AppleGpu::utilization() const {
  return Reading<Utilization>::none(kPrivileged);
}

Reading<Energy> AppleGpu::energy() const {
  return Reading<Energy>::none(kPrivileged);
}

Reading<Thermal> AppleGpu::thermal() const {
  return Reading<Thermal>::none(kPrivileged);
}

AppleNpu::AppleNpu(NpuInfo info, std::uint64_t memory_bytes, std::shared_ptr<const Runner> runner)
    : info_(std::move(info)), memory_bytes_(memory_bytes), runner_(std::move(runner)) {}

Reading<Memory> AppleNpu::memory() const {
  return unified_memory(memory_bytes_, runner_);
}

namespace apple {

namespace {

struct Profile {
  std::vector<DisplayRecord> displays;
  std::optional<HardwareRecord> hardware;
};

std::optional<Profile> system_profile(const providers::Context& context, host::Note& note) {
  auto exe = context.runner.find_executable("system_profiler");
  if (!exe) {
    note.unsupported("system_profiler not found (not macOS)");
    return std::nullopt;
  }
  Command cmd;
  cmd.argv = {*exe, "SPDisplaysDataType", "SPHardwareDataType", "-json"};
  cmd.timeout = std::chrono::milliseconds(15000);  // it can take seconds on a busy Mac
  auto r = providers::run_cached(context, cmd);
  if (!r.ok()) {
    note.unsupported("system_profiler failed: " + (r.error.empty() ? r.err : r.error));
    return std::nullopt;
  }
  return Profile{parse_displays(r.out), parse_hardware(r.out)};
}

/// The runner, owned, so units can take live memory readings for as long as they live.
std::shared_ptr<const Runner> share(const providers::Context& context) {
  if (context.shared_runner) return context.shared_runner;
  return nullptr;  // readings then fall back to the sizes system_profiler gave
}

}  // namespace

std::vector<std::shared_ptr<Gpu>> probe_gpus(const providers::Context& context, host::Note& note) {
  std::vector<std::shared_ptr<Gpu>> out;
  auto profile = system_profile(context, note);
  if (!profile) return out;
  auto memory = profile->hardware ? profile->hardware->memory_bytes.value_or(0) : 0;
  for (const auto& d : profile->displays) {
    GpuInfo info;
    info.index = static_cast<std::uint32_t>(out.size());
    info.provider = "apple";
    info.label = d.model;
    info.vendor = d.vendor;
    info.core_count = d.cores;
    info.metal_support = core::metal_label(d.metal);
    bool unified = d.apple_silicon();
    if (unified) {
      const auto& chip =
          profile->hardware && !profile->hardware->chip.empty() ? profile->hardware->chip : d.model;
      info.architecture = soc_family(chip);
      info.arch_key = core_key(info.architecture);
      // The integrated GPU has no identifier of its own; the machine's hardware UUID is stable.
      if (profile->hardware) info.uuid = profile->hardware->uuid;
      info.coherent = true;
      info.memory_total_bytes = memory ? std::optional<std::uint64_t>(memory) : std::nullopt;
    } else {
      info.memory_total_bytes = d.vram_bytes ? d.vram_bytes : d.vram_shared_bytes;
    }
    std::uint64_t size = unified ? memory : info.memory_total_bytes.value_or(0);
    out.push_back(std::make_shared<AppleGpu>(std::move(info), size, unified, share(context)));
  }
  if (out.empty()) note.unsupported("system_profiler lists no GPU");
  return out;
}

std::vector<std::shared_ptr<Npu>> probe_npus(const providers::Context& context, host::Note& note) {
  std::vector<std::shared_ptr<Npu>> out;
  auto profile = system_profile(context, note);
  if (!profile) return out;
  if (!profile->hardware || profile->hardware->chip.rfind("Apple M", 0) != 0) {
    note.unsupported("not an Apple-silicon Mac");
    return out;
  }
  NpuInfo info;
  info.provider = "apple";
  info.vendor = "Apple";
  info.label = profile->hardware->chip + " Neural Engine";
  info.architecture = soc_family(profile->hardware->chip);
  out.push_back(std::make_shared<AppleNpu>(
      std::move(info), profile->hardware->memory_bytes.value_or(0), share(context)));
  return out;
}

}  // namespace apple

}  // namespace mainboard
