#include <array>
#include <cstdint>
#include <thread>

#include "core/text.hpp"
#include "host/pid_namespace.hpp"
#include "mainboard/nvidia.hpp"
#include "providers/nvidia/state.hpp"
#include "providers/nvidia/visibility.hpp"

namespace mainboard {

using nvidia::nvml::Return;
namespace nvml = nvidia::nvml;
namespace cuda = nvidia::cuda;

NvidiaGpu::NvidiaGpu(GpuInfo info, std::shared_ptr<const State> state)
    : info_(std::move(info)), state_(std::move(state)) {}

NvidiaGpu::~NvidiaGpu() = default;

namespace {

/// Why a reading is missing: NVML absent, the symbol absent, or NVML's own error text.
struct Why {
  const NvidiaGpu::State& s;
  std::string missing_nvml() const {
    return s.nvml && !s.nvml->error.empty() ? s.nvml->error : std::string("NVML not available");
  }
  std::string symbol(const char* name) const { return std::string("this NVML lacks ") + name; }
  std::string error(Return r) const { return s.nvml->describe(r); }
  /// No NVML to ask.
  Unavailable no_nvml() const { return {ProbeStatus::unsupported, missing_nvml()}; }
  /// A call that answered `r`: unsupported where the GPU, the driver or this process's
  /// permissions offer none; failed where it is offered and went wrong (a lost GPU, a timeout).
  Unavailable call(Return r, std::string prefix = {}) const {
    bool none =
        r == nvml::kNotSupported || r == nvml::kNoPermission || r == nvml::kFunctionNotFound;
    return {none ? ProbeStatus::unsupported : ProbeStatus::failed, prefix + error(r)};
  }
};

bool usable(const NvidiaGpu::State& s) {
  return s.nvml && s.nvml->ok && s.device;
}

}  // namespace

std::vector<std::string> decode_clock_event_reasons(unsigned long long bits) {
  // nvmlClocksEventReasons bit values (nvml.h, "Clock Event Reasons").
  static constexpr std::array<std::pair<unsigned long long, const char*>, 9> kNames = {{
      {0x1, "GpuIdle"},
      {0x2, "ApplicationsClocksSetting"},
      {0x4, "SwPowerCap"},
      {0x8, "HwSlowdown"},
      {0x10, "SyncBoost"},
      {0x20, "SwThermalSlowdown"},
      {0x40, "HwThermalSlowdown"},
      {0x80, "HwPowerBrakeSlowdown"},
      {0x100, "DisplayClockSetting"},
  }};
  std::vector<std::string> out;
  for (auto [bit, name] : kNames)
    if (bits & bit) out.emplace_back(name);
  return out;
}

NvidiaGpu::Bindings NvidiaGpu::bindings() const {
  Bindings b;
  const auto& st = *state_;
  b.nvml = st.nvml && st.nvml->ok && st.device != nullptr;
  if (st.nvml && !st.nvml->ok) b.nvml_error = st.nvml->error;
  b.cuda = st.cuda && st.cuda->ok && st.cuda_device.has_value();
  if (st.cuda && !st.cuda->ok) b.cuda_error = st.cuda->error;
  b.cuda_device = st.cuda_device;
  b.nvml_handle = reinterpret_cast<std::uintptr_t>(st.device);
  b.mig = st.mig;
  return b;
}

Reading<Memory> NvidiaGpu::nvml_memory() const {
  const auto& s = *state_;
  Why why{s};
  if (!usable(s)) return why.no_nvml();
  Memory m;
  m.scope = "vram";
  m.unified = info_.coherent;
  Reading<Memory> out = Reading<Memory>::none(why.symbol("nvmlDeviceGetMemoryInfo"));
  // One call's answer: true when it settles the reading. A total of 0 settles it as none: some
  // drivers answer a unified-memory GPU (GB10) with zeros.
  auto take = [&](const char* call, Return r, const auto& answer, MemorySource source) {
    if (r != nvml::kSuccess) {
      out = why.call(r, std::string(call) + ": ");
      return false;
    }
    if (answer.total == 0) {
      out = Reading<Memory>::none(std::string(call) + " gave a total of 0 (unified memory)");
      return true;
    }
    m.total_bytes = answer.total;
    m.used_bytes = answer.used;
    m.free_bytes = answer.free;
    m.source = source;
    out = m;
    return true;
  };
  if (s.nvml->memory_v2) {
    nvml::MemoryV2 v2{};
    v2.version = nvml::kMemoryV2Version;
    if (take("nvmlDeviceGetMemoryInfo_v2", s.nvml->memory_v2(s.device, &v2), v2,
             MemorySource::nvml_v2))
      return out;
  }
  if (s.nvml->memory_v1) {
    nvml::Memory v1{};
    take("nvmlDeviceGetMemoryInfo", s.nvml->memory_v1(s.device, &v1), v1, MemorySource::nvml);
  }
  return out;
}

Reading<Memory> NvidiaGpu::runtime_memory() const {
  const auto& s = *state_;
  const auto* c = s.cuda.get();
  if (!c || !c->ok || !s.cuda_device)
    return Reading<Memory>::none(c && !c->error.empty() ? c->error : "CUDA driver not available");
  if (!c->primary_ctx_retain || !c->primary_ctx_release || !c->ctx_push || !c->ctx_pop ||
      !c->mem_get_info)
    return Reading<Memory>::none(
        "this CUDA driver lacks the context or cuMemGetInfo_v2 entry points");
  cuda::Context ctx = nullptr;
  cuda::Result r = c->primary_ctx_retain(&ctx, *s.cuda_device);
  if (r != cuda::kSuccess)
    return Reading<Memory>::none("cuDevicePrimaryCtxRetain: " + c->describe(r),
                                 ProbeStatus::failed);
  std::size_t free = 0, total = 0;
  r = c->ctx_push(ctx);
  if (r == cuda::kSuccess) {
    r = c->mem_get_info(&free, &total);
    cuda::Context popped = nullptr;
    c->ctx_pop(&popped);
  }
  c->primary_ctx_release(*s.cuda_device);
  if (r != cuda::kSuccess)
    return Reading<Memory>::none("cuMemGetInfo: " + c->describe(r), ProbeStatus::failed);
  Memory m;
  m.scope = "vram";
  m.unified = info_.coherent;
  m.source = MemorySource::cuda;
  m.total_bytes = total;
  m.free_bytes = free;
  m.used_bytes = total >= free ? total - free : 0;
  return m;
}

Reading<Memory> NvidiaGpu::memory() const {
  auto m = nvml_memory();
  if (m) return m;
  auto r = runtime_memory();
  if (r) return r;
  return Reading<Memory>::none(m.reason() + "; " + r.reason(), r.unavailable()->status);
}

std::vector<ClockReading> NvidiaGpu::clock_readings() const {
  const auto& s = *state_;
  std::vector<ClockReading> out;
  if (!usable(s) || !s.nvml->clock) return out;
  struct Domain {
    unsigned type;
    const char* name;
  };
  constexpr Domain kDomains[] = {{nvml::kClockGraphics, "graphics"},
                                 {nvml::kClockSm, "sm"},
                                 {nvml::kClockMem, "memory"},
                                 {nvml::kClockVideo, "video"}};
  for (auto [type, name] : kDomains) {
    unsigned current = 0, max = 0;
    ClockReading r;
    r.domain = name;
    r.source = "nvml";
    if (s.nvml->clock(s.device, type, &current) == nvml::kSuccess) r.current_mhz = current;
    if (s.nvml->max_clock && s.nvml->max_clock(s.device, type, &max) == nvml::kSuccess && max > 0)
      r.max_mhz = max;
    if (r.current_mhz || r.max_mhz) out.push_back(std::move(r));
  }
  return out;
}

Reading<Utilization> NvidiaGpu::utilization() const {
  const auto& s = *state_;
  Utilization u;
  Why why{s};
  if (!usable(s)) return why.no_nvml();
  if (!s.nvml->utilization)
    return Reading<Utilization>::none(why.symbol("nvmlDeviceGetUtilizationRates"));
  nvml::Utilization rates{};
  Return r = s.nvml->utilization(s.device, &rates);
  if (r != nvml::kSuccess) {
    // MIG instances report NOT_SUPPORTED here: NVML has no per-instance utilization.
    return why.call(r);
  }
  u.compute_pct = rates.gpu;
  u.memory_pct = rates.memory;
  return u;
}

Reading<Energy> NvidiaGpu::energy() const {
  const auto& s = *state_;
  Energy e;
  Why why{s};
  if (!usable(s)) return why.no_nvml();
  unsigned mw = 0;
  Return r = s.nvml->power_usage ? s.nvml->power_usage(s.device, &mw) : nvml::kFunctionNotFound;
  if (r == nvml::kSuccess) e.power_w = mw / 1000.0;  // a 1 s average on Ampere and newer
  if (s.nvml->power_limit && s.nvml->power_limit(s.device, &mw) == nvml::kSuccess)
    e.power_limit_w = mw / 1000.0;
  unsigned long long mj = 0;
  if (s.nvml->total_energy && s.nvml->total_energy(s.device, &mj) == nvml::kSuccess)
    e.energy_j = static_cast<double>(mj) / 1000.0;  // since the driver was loaded
  if (!e.power_w && !e.energy_j) return why.call(r, "power: ");
  return e;
}

Reading<Thermal> NvidiaGpu::thermal() const {
  const auto& s = *state_;
  Thermal t;
  Why why{s};
  if (!usable(s)) return why.no_nvml();
  Return r = nvml::kFunctionNotFound;
  if (s.nvml->temperature_v) {
    nvml::TemperatureV v{};
    v.version = nvml::kTemperatureVVersion;
    v.sensorType = nvml::kTemperatureGpu;
    r = s.nvml->temperature_v(s.device, &v);
    if (r == nvml::kSuccess) t.temperature_c = v.temperature;
  }
  if (!t.temperature_c && s.nvml->temperature) {
    unsigned c = 0;
    r = s.nvml->temperature(s.device, nvml::kTemperatureGpu, &c);
    if (r == nvml::kSuccess) t.temperature_c = c;
  }
  if (s.nvml->temperature_threshold) {
    unsigned c = 0;
    if (s.nvml->temperature_threshold(s.device, nvml::kThresholdSlowdown, &c) == nvml::kSuccess)
      t.slowdown_c = c;
    if (s.nvml->temperature_threshold(s.device, nvml::kThresholdShutdown, &c) == nvml::kSuccess)
      t.shutdown_c = c;
  }
  unsigned long long reasons = 0;
  if (s.nvml->clock_event_reasons &&
      s.nvml->clock_event_reasons(s.device, &reasons) == nvml::kSuccess)
    t.throttle_reasons = decode_clock_event_reasons(reasons);
  if (!t.temperature_c) return why.call(r, "temperature: ");
  return t;
}

Reading<PcieReading> NvidiaGpu::pcie() const {
  const auto& s = *state_;
  PcieReading p;
  Why why{s};
  if (!usable(s)) return why.no_nvml();
  unsigned v = 0;
  Return r = nvml::kFunctionNotFound;
  if (s.nvml->pcie_throughput) {
    // KB/s over a 20 ms window (Maxwell and newer; not in vGPU guests).
    r = s.nvml->pcie_throughput(s.device, nvml::kPcieTxBytes, &v);
    if (r == nvml::kSuccess) p.tx_kbps = v;
    if (s.nvml->pcie_throughput(s.device, nvml::kPcieRxBytes, &v) == nvml::kSuccess) p.rx_kbps = v;
  }
  auto read = [&](nvml::DeviceUintFn* fn, std::optional<int>& out) {
    if (fn && fn(s.device, &v) == nvml::kSuccess) out = static_cast<int>(v);
  };
  read(s.nvml->pcie_link_gen, p.link_gen);
  read(s.nvml->pcie_link_width, p.link_width);
  read(s.nvml->pcie_max_link_gen, p.max_link_gen);
  read(s.nvml->pcie_max_link_width, p.max_link_width);
  if (!p.tx_kbps && !p.link_gen) return why.call(r);
  return p;
}

std::optional<double> NvidiaGpu::fan_speed_pct() const {
  const auto& s = *state_;
  unsigned pct = 0;
  // Passively cooled parts answer NOT_SUPPORTED; the value may exceed 100 by design.
  if (usable(s) && s.nvml->fan_speed && s.nvml->fan_speed(s.device, &pct) == nvml::kSuccess)
    return pct;
  return std::nullopt;
}

std::vector<GpuProcess> NvidiaGpu::processes() const {
  const auto& s = *state_;
  std::vector<GpuProcess> out;
  if (!usable(s)) return out;
  // The driver's PIDs are the host's: each one as this process knows it (host/pid_namespace).
  std::optional<host::PidNamespaceView> pids;
  if (s.fs) pids.emplace(*s.fs);
  auto add = [&](unsigned pid, unsigned long long used) {
    GpuProcess p;
    p.pid = pid;
    if (used != nvml::kNotAvailable) p.used_memory_bytes = used;
    if (pids) {
      auto where = pids->resolve(pid);
      p.pid = where.pid;
      p.name = std::move(where.name);
      p.host_pid = where.host_pid;
      p.container_pid = where.container_pid;
      p.visible = where.visible;
    }
    out.push_back(std::move(p));
  };
  // Ask for the count first; processes may start between the two calls, hence the slack.
  if (s.nvml->processes) {
    unsigned count = 0;
    Return r = s.nvml->processes(s.device, &count, nullptr);
    if (r == nvml::kSuccess) return out;
    if (r != nvml::kInsufficientSize || count > 65536) return out;
    std::vector<nvml::ProcessInfo> infos(count + 8);
    count = static_cast<unsigned>(infos.size());
    if (s.nvml->processes(s.device, &count, infos.data()) != nvml::kSuccess) return out;
    for (unsigned i = 0; i < count && i < infos.size(); ++i)
      add(infos[i].pid, infos[i].usedGpuMemory);
    return out;
  }
  if (s.nvml->processes_v1) {
    unsigned count = 0;
    Return r = s.nvml->processes_v1(s.device, &count, nullptr);
    if (r != nvml::kInsufficientSize || count > 65536) return out;
    std::vector<nvml::ProcessInfoV1> infos(count + 8);
    count = static_cast<unsigned>(infos.size());
    if (s.nvml->processes_v1(s.device, &count, infos.data()) != nvml::kSuccess) return out;
    for (unsigned i = 0; i < count && i < infos.size(); ++i)
      add(infos[i].pid, infos[i].usedGpuMemory);
  }
  return out;
}

bool NvidiaGpu::lists_processes() const {
  const auto& s = *state_;
  if (!usable(s)) return false;
  // The count query alone: it succeeds (none) or asks for room (some) where the driver lists.
  unsigned count = 0;
  Return r = s.nvml->processes      ? s.nvml->processes(s.device, &count, nullptr)
             : s.nvml->processes_v1 ? s.nvml->processes_v1(s.device, &count, nullptr)
                                    : nvml::kNotSupported;
  return r == nvml::kSuccess || r == nvml::kInsufficientSize;
}

GpuHealth NvidiaGpu::health() const {
  const auto& s = *state_;
  GpuHealth h;
  if (!usable(s)) return h;
  Why why{s};
  // Each reading on its own: a GPU without ECC still has persistence, an older one no remapper.
  auto read = [&](const char* what, auto* fn, auto call) {
    if (!fn) {
      h.unavailable.emplace(what, Unavailable{ProbeStatus::unsupported, "not in this NVML"});
      return;
    }
    if (Return r = call(fn); r != nvml::kSuccess) h.unavailable.emplace(what, why.call(r));
  };
  read("persistence", s.nvml->persistence_mode, [&](auto* fn) {
    unsigned mode = 0;
    Return r = fn(s.device, &mode);
    if (r == nvml::kSuccess) h.persistence_mode = mode == 1;
    return r;
  });
  read("ecc", s.nvml->ecc_mode, [&](auto* fn) {
    unsigned current = 0, pending = 0;
    Return r = fn(s.device, &current, &pending);
    if (r == nvml::kSuccess) h.ecc_enabled = current == 1;
    return r;
  });
  if (h.ecc_enabled && *h.ecc_enabled) {
    // nvmlMemoryErrorType_t: 0 corrected, 1 uncorrected; nvmlEccCounterType_t: 0 volatile,
    // 1 aggregate.
    auto count = [&](unsigned type, unsigned counter, std::optional<std::uint64_t>& out) {
      read("ecc errors", s.nvml->ecc_errors, [&](auto* fn) {
        unsigned long long n = 0;
        Return r = fn(s.device, type, counter, &n);
        if (r == nvml::kSuccess) out = n;
        return r;
      });
    };
    count(0, 0, h.ecc_corrected_volatile);
    count(1, 0, h.ecc_uncorrected_volatile);
    count(1, 1, h.ecc_uncorrected_aggregate);
  }
  read("remapped rows", s.nvml->remapped_rows, [&](auto* fn) {
    unsigned corrected = 0, uncorrected = 0, pending = 0, failed = 0;
    Return r = fn(s.device, &corrected, &uncorrected, &pending, &failed);
    if (r == nvml::kSuccess) {
      h.remapped_rows_correctable = corrected;
      h.remapped_rows_uncorrectable = uncorrected;
      h.remap_pending = pending != 0;
      h.remap_failed = failed != 0;
    }
    return r;
  });
  // Page retirement is what GPUs before the row remapper have.
  if (!h.remap_pending)
    read("retired pages", s.nvml->retired_pages_pending, [&](auto* fn) {
      unsigned pending = 0;
      Return r = fn(s.device, &pending);
      if (r == nvml::kSuccess) h.retired_pages_pending = pending == 1;
      return r;
    });
  if (s.xids && !s.mig) {
    auto x = s.xids->for_gpu(info_.pci_bus_id);
    h.xid_errors = x.count;
    h.last_xid = std::move(x.last);
    h.xid_source = x.source;
    h.xid_since_unix_s = x.since_unix_s;
    if (!x.count) h.unavailable.emplace("xid", Unavailable{ProbeStatus::unsupported, x.reason});
  }
  read_links(h);
  return h;
}

void NvidiaGpu::read_links(GpuHealth& h) const {
  const auto& s = *state_;
  Why why{s};
  if (s.mig) return;  // links belong to the whole GPU
  if (!s.nvml->nvlink_state) {
    h.unavailable.emplace("nvlink", Unavailable{ProbeStatus::unsupported, "not in this NVML"});
    return;
  }
  for (unsigned link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
    unsigned active = 0;
    Return r = s.nvml->nvlink_state(s.device, link, &active);
    if (r == nvml::kInvalidArgument) break;  // past the GPU's last link
    if (r != nvml::kSuccess) {
      // A GPU without NVLink answers NOT_SUPPORTED for link 0: nothing to say beyond that.
      if (link == 0) h.unavailable.emplace("nvlink", why.call(r));
      break;
    }
    GpuLink l;
    l.link = link;
    l.active = active == 1;
    unsigned version = 0;
    if (s.nvml->nvlink_version &&
        s.nvml->nvlink_version(s.device, link, &version) == nvml::kSuccess)
      l.version = version;
    auto counter = [&](unsigned which, std::optional<std::uint64_t>& out) {
      unsigned long long n = 0;
      if (s.nvml->nvlink_error_counter &&
          s.nvml->nvlink_error_counter(s.device, link, which, &n) == nvml::kSuccess)
        out = n;
    };
    counter(nvml::kNvLinkErrorReplay, l.replay_errors);
    counter(nvml::kNvLinkErrorRecovery, l.recovery_errors);
    counter(nvml::kNvLinkErrorCrcFlit, l.crc_errors);
    // What the link reaches, by number (the _v1 call fills only the legacy string; the numbers
    // sit where they are in both).
    if (nvml::PciInfo remote{};
        s.nvml->nvlink_remote_pci &&
        s.nvml->nvlink_remote_pci(s.device, link, &remote) == nvml::kSuccess)
      l.remote_pci_bus_id =
          nvidia::format_pci_bus_id({remote.domain, remote.bus, remote.device, 0});
    if (int type = -1; s.nvml->nvlink_remote_type &&
                       s.nvml->nvlink_remote_type(s.device, link, &type) == nvml::kSuccess) {
      if (type == nvml::kNvLinkDeviceGpu) l.remote_kind = "gpu";
      if (type == nvml::kNvLinkDeviceSwitch) l.remote_kind = "switch";
      if (type == nvml::kNvLinkDeviceIbmNpu) l.remote_kind = "npu";
    }
    if (s.nvml->field_values) {
      nvml::FieldValue v[2] = {};
      v[0].fieldId = nvml::kFieldNvLinkDataTx;
      v[1].fieldId = nvml::kFieldNvLinkDataRx;
      v[0].scopeId = v[1].scopeId = link;
      if (s.nvml->field_values(s.device, 2, v) == nvml::kSuccess) {
        auto kib = [](const nvml::FieldValue& f) -> std::optional<std::uint64_t> {
          if (f.nvmlReturn != nvml::kSuccess) return std::nullopt;
          switch (f.valueType) {
            case 1: return std::uint64_t{f.value.ui} * 1024;
            case 2: return std::uint64_t{f.value.ul} * 1024;
            case 3: return std::uint64_t{f.value.ull} * 1024;
            default: return std::nullopt;
          }
        };
        l.tx_bytes = kib(v[0]);
        l.rx_bytes = kib(v[1]);
      }
    }
    h.links.push_back(l);
  }
}

NvidiaGpu::State::Gpm::~Gpm() {
  if (sample && nvml && nvml->gpm_sample_free) nvml->gpm_sample_free(sample);
}

namespace nvidia {

namespace {

/// Whether GPM can be read on this device; the reason when not. Called with the lock held.
bool gpm_usable(const NvidiaGpu::State& s, NvidiaGpu::State::Gpm& g) {
  if (g.checked) return g.reason.empty();
  g.checked = true;
  const auto* n = s.nvml.get();
  if (!usable(s)) {
    g.reason = Why{s}.missing_nvml();
  } else if (s.mig) {
    g.reason = "GPM is not read per MIG instance";
  } else if (!n->gpm_query_support || !n->gpm_sample_alloc || !n->gpm_sample_free ||
             !n->gpm_sample_get || !n->gpm_metrics_get) {
    g.reason = "this NVML has no GPM (it came with NVML 11.5)";
  } else {
    nvml::GpmSupport support{};
    support.version = 1;
    Return r = n->gpm_query_support(s.device, &support);
    if (r != nvml::kSuccess)
      g.reason = "nvmlGpmQueryDeviceSupport: " + n->describe(r);
    else if (!support.isSupportedDevice)
      g.reason = "GPM needs a Hopper or later GPU";
  }
  return g.reason.empty();
}

/// A new sample in place of `out`; false (and the reason) when the driver refuses.
bool take_sample(const NvidiaGpu::State& s, nvml::GpmSample& out, std::string& reason) {
  const auto* n = s.nvml.get();
  nvml::GpmSample fresh = nullptr;
  Return r = n->gpm_sample_alloc(&fresh);
  if (r == nvml::kSuccess) r = n->gpm_sample_get(s.device, fresh);
  if (r != nvml::kSuccess) {
    if (fresh) n->gpm_sample_free(fresh);
    reason = "nvmlGpmSampleGet: " + n->describe(r);
    return false;
  }
  out = fresh;
  return true;
}

}  // namespace

void start_unit_activity(const NvidiaGpu::State& s) {
  auto& g = *s.gpm;
  std::lock_guard<std::mutex> lock(g.mutex);
  if (!gpm_usable(s, g) || g.sample) return;
  std::string reason;
  if (take_sample(s, g.sample, reason)) g.taken = std::chrono::steady_clock::now();
}

}  // namespace nvidia

Reading<GpuUnitActivity> NvidiaGpu::unit_activity() const {
  using namespace std::chrono;
  const auto& s = *state_;
  GpuUnitActivity a;
  std::string why;
  auto none = [&](std::string reason) { return Reading<GpuUnitActivity>::none(std::move(reason)); };
  if (!s.gpm) return none("GPM not available");
  auto& g = *s.gpm;
  std::lock_guard<std::mutex> lock(g.mutex);
  if (!nvidia::gpm_usable(s, g)) return none(g.reason);
  constexpr auto kMinWindow = milliseconds(100);
  if (!g.sample) {
    if (!nvidia::take_sample(s, g.sample, why)) return none(why);
    g.taken = steady_clock::now();
  }
  auto age = steady_clock::now() - g.taken;
  if (age < kMinWindow) {
    // A second reading this soon gives the last window again rather than a noisy short one.
    if (g.last) return *g.last;
    std::this_thread::sleep_for(kMinWindow - age);
  }
  nvml::GpmSample next = nullptr;
  if (!nvidia::take_sample(s, next, why)) return none(why);
  auto now = steady_clock::now();
  const auto* n = s.nvml.get();
  auto get = std::make_unique<nvml::GpmMetricsGet>();
  get->version = 1;
  get->sample1 = g.sample;
  get->sample2 = next;
  constexpr unsigned kIds[] = {nvml::kGpmSmUtil, nvml::kGpmSmOccupancy, nvml::kGpmAnyTensorUtil,
                               nvml::kGpmDramBwUtil, nvml::kGpmGraphicsUtil};
  get->numMetrics = std::size(kIds);
  for (unsigned i = 0; i < get->numMetrics; ++i)
    get->metrics[i].metricId = kIds[i];
  Return r = n->gpm_metrics_get(get.get());
  double window = duration<double>(now - g.taken).count();
  n->gpm_sample_free(g.sample);
  g.sample = next;
  g.taken = now;
  if (r != nvml::kSuccess) return none("nvmlGpmMetricsGet: " + n->describe(r));
  std::optional<double>* slots[] = {&a.sm_active_pct, &a.sm_occupancy_pct, &a.tensor_active_pct,
                                    &a.dram_bandwidth_pct, &a.graphics_active_pct};
  for (unsigned i = 0; i < get->numMetrics; ++i) {
    const auto& m = get->metrics[i];
    if (m.nvmlReturn == nvml::kSuccess && m.value >= 0 && m.value <= 100.0001) *slots[i] = m.value;
  }
  if (!a.sm_active_pct && !a.sm_occupancy_pct && !a.tensor_active_pct && !a.dram_bandwidth_pct &&
      !a.graphics_active_pct) {
    g.last.reset();
    return none("the driver gave none of the GPM metrics asked for");
  }
  a.window_s = window;
  g.last = a;
  return a;
}

}  // namespace mainboard
