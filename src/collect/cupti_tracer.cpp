// GPU activity through CUPTI's activity API, loaded with dlopen. The record layouts come from the
// CUDA toolkit's headers (cupti_activity.h); a build without them reports the feature unavailable.
#include <cstdlib>
#include <memory>

#include "collect/gpu_trace.hpp"
#include "symbols/demangle.hpp"

#ifndef MAINBOARD_HAVE_CUPTI

namespace mainboard::detail {

std::unique_ptr<GpuTracer> GpuTracer::start(Activity, std::uint64_t,
                                            std::vector<std::string>& unavailable) {
  unavailable.push_back(
      "gpu_activity: this build has no CUPTI support (the CUDA toolkit's cupti_activity.h was not "
      "found when it was "
      "configured)");
  return nullptr;
}

}  // namespace mainboard::detail

#else

#include <cupti.h>

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "core/clock.hpp"
#include "core/dynamic_library.hpp"
#include "core/log.hpp"

namespace mainboard::detail {

namespace {

std::optional<std::string> getenv_string(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

struct Api {
  core::DynamicLibrary lib;
  bool ok = false;
  std::string error;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiGetTimestamp) timestamp = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) dropped_records = nullptr;
};

/// Loads the CUPTI that MAINBOARD_CUPTI_LIBRARY names, or the toolkit's. Each library is loaded
/// once and never unloaded: the driver may call into CUPTI until the process ends.
Api load(const std::optional<std::string>& override_path) {
  Api a;
  std::vector<std::string> candidates;
  if (override_path) {
    candidates.push_back(*override_path);
  } else {
    for (const char* name : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"})
      candidates.emplace_back(name);
    std::vector<std::string> roots;
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
      if (auto root = getenv_string(var)) roots.push_back(*root);
    roots.emplace_back("/usr/local/cuda");
    for (const auto& root : roots)
      for (const char* dir : {"/lib64/", "/extras/CUPTI/lib64/", "/targets/x86_64-linux/lib/",
                              "/targets/sbsa-linux/lib/"})
        for (const char* name : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"})
          candidates.push_back(root + dir + name);
  }
  a.lib = core::DynamicLibrary::open(candidates, &a.error);
  if (!a.lib) return a;
  a.enable = a.lib.symbol<std::remove_pointer_t<decltype(a.enable)> >("cuptiActivityEnable");
  a.disable = a.lib.symbol<std::remove_pointer_t<decltype(a.disable)> >("cuptiActivityDisable");
  a.register_callbacks = a.lib.symbol<std::remove_pointer_t<decltype(a.register_callbacks)> >(
      "cuptiActivityRegisterCallbacks");
  a.next_record =
      a.lib.symbol<std::remove_pointer_t<decltype(a.next_record)> >("cuptiActivityGetNextRecord");
  a.flush_all =
      a.lib.symbol<std::remove_pointer_t<decltype(a.flush_all)> >("cuptiActivityFlushAll");
  a.timestamp = a.lib.symbol<std::remove_pointer_t<decltype(a.timestamp)> >("cuptiGetTimestamp");
  a.result_string =
      a.lib.symbol<std::remove_pointer_t<decltype(a.result_string)> >("cuptiGetResultString");
  a.dropped_records = a.lib.symbol<std::remove_pointer_t<decltype(a.dropped_records)> >(
      "cuptiActivityGetNumDroppedRecords");
  a.ok =
      a.enable && a.disable && a.register_callbacks && a.next_record && a.flush_all && a.timestamp;
  if (!a.ok) a.error = a.lib.path() + " lacks the activity API (cuptiActivityEnable, …)";
  return a;
}

const Api& current_api() {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Api> > loaded;
  auto override_path = getenv_string("MAINBOARD_CUPTI_LIBRARY");
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = loaded[override_path.value_or("")];
  if (!slot) slot = std::make_unique<Api>(load(override_path));
  return *slot;
}

/// The library of the running trace: the callbacks use it.
std::atomic<const Api*> g_api{nullptr};
const Api& api() {
  return *g_api.load(std::memory_order_acquire);
}

std::string describe(CUptiResult code) {
  const char* text = nullptr;
  std::string out;
  const Api* a = g_api.load(std::memory_order_acquire);
  if (a && a->result_string && a->result_string(code, &text) == CUPTI_SUCCESS && text)
    out = text;
  else
    out = "CUPTI error " + std::to_string(static_cast<int>(code));
  switch (static_cast<int>(code)) {
    case 35:
      out +=
          " (profiling is restricted to administrators: load the driver with "
          "NVreg_RestrictProfilingToAdminUsers=0, "
          "or run with CAP_SYS_ADMIN)";
      break;
    case 39: out += " (another profiler, such as Nsight or cuda-gdb, is attached)"; break;
    case 33:
    case 40: out += " (not supported on a virtualized device)"; break;
    case 43: out += " (not supported on a MIG device)"; break;
    default: break;
  }
  return out;
}

/// Collected between start and finish; the CUPTI callbacks have no user pointer, so it is global.
struct State {
  std::mutex mutex;
  bool running = false;
  std::uint64_t max_records = 0;
  std::vector<GpuActivity> records;  // timestamps still CUPTI's
  std::vector<std::string> names;
  std::unordered_map<std::string, std::uint32_t> index;
  std::unordered_map<const void*, std::uint32_t> by_pointer;  // kernel names are shared pointers
  std::uint64_t dropped = 0;
  std::uint64_t incomplete = 0;
};
State& state() {
  static State s;
  return s;
}

std::uint32_t intern(State& s, const std::string& name) {
  auto [it, fresh] = s.index.try_emplace(name, static_cast<std::uint32_t>(s.names.size()));
  if (fresh) s.names.push_back(name);
  return it->second;
}

std::uint32_t kernel_name(State& s, const char* mangled) {
  auto it = s.by_pointer.find(mangled);
  if (it != s.by_pointer.end()) return it->second;
  auto i = intern(s, symbols::demangle(mangled));
  s.by_pointer.emplace(mangled, i);
  return i;
}

const char* memory_kind(std::uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return "array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return "device static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return "managed static";
    default: return "unknown";
  }
}

const char* copy_kind(std::uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "unknown";
  }
}

std::string overhead_name(CUpti_ActivityOverheadKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "overhead: driver JIT compilation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "overhead: CUPTI buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "overhead: CUPTI instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "overhead: CUPTI resources";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
      return "overhead: module loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "overhead: lazy function loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "overhead: command buffer full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
      return "overhead: activity buffer request";
    default: return "overhead: kind " + std::to_string(static_cast<int>(kind));
  }
}

std::string sync_name(CUpti_ActivitySynchronizationType type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "sync: event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "sync: stream wait event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "sync: stream";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "sync: context";
    default: return "sync: unknown";
  }
}

/// The fields every record of work on a device stream carries.
template <class Record>
void on_device(GpuActivity& a, const Record& r) {
  a.start_ns = static_cast<std::int64_t>(r.start);
  a.end_ns = static_cast<std::int64_t>(r.end);
  a.device = r.deviceId;
  a.stream = r.streamId;
  a.correlation = r.correlationId;
}

/// One record into `s` (locked by the caller). Records a forced flush cut short (no end yet)
/// are counted, not kept.
void take(State& s, const CUpti_Activity* record) {
  GpuActivity a;
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      a.kind = GpuActivity::Kind::kernel;
      a.name = kernel_name(s, k->name);
      on_device(a, *k);
      a.grid = {static_cast<std::uint32_t>(k->gridX), static_cast<std::uint32_t>(k->gridY),
                static_cast<std::uint32_t>(k->gridZ)};
      a.block = {static_cast<std::uint32_t>(k->blockX), static_cast<std::uint32_t>(k->blockY),
                 static_cast<std::uint32_t>(k->blockZ)};
      a.registers_per_thread = k->registersPerThread;
      a.static_shared_bytes = static_cast<std::uint32_t>(std::max(k->staticSharedMemory, 0));
      a.dynamic_shared_bytes = static_cast<std::uint32_t>(std::max(k->dynamicSharedMemory, 0));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      a.kind = GpuActivity::Kind::memcpy;
      a.name = intern(s, std::string("memcpy ") + copy_kind(m->copyKind) + " (" +
                             memory_kind(m->srcKind) + " → " + memory_kind(m->dstKind) + ")");
      on_device(a, *m);
      a.bytes = m->bytes;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      a.kind = GpuActivity::Kind::memset;
      a.name = intern(
          s, std::string("memset (") + memory_kind(static_cast<std::uint8_t>(m->memoryKind)) + ")");
      on_device(a, *m);
      a.bytes = m->bytes;
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* y = reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
      a.kind = GpuActivity::Kind::synchronization;
      a.name = intern(s, sync_name(y->type));
      a.start_ns = static_cast<std::int64_t>(y->start);
      a.end_ns = static_cast<std::int64_t>(y->end);
      a.stream = y->streamId;
      a.correlation = y->correlationId;
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto* o = reinterpret_cast<const CUpti_ActivityOverhead3*>(record);
      a.kind = GpuActivity::Kind::overhead;
      a.name = intern(s, overhead_name(o->overheadKind));
      a.start_ns = static_cast<std::int64_t>(o->start);
      a.end_ns = static_cast<std::int64_t>(o->end);
      a.correlation = o->correlationId;
      break;
    }
    default: return;  // kinds not asked for
  }
  if (a.start_ns <= 0 || a.end_ns < a.start_ns) {
    ++s.incomplete;
    return;
  }
  if (s.records.size() >= s.max_records) {
    ++s.dropped;
    return;
  }
  s.records.push_back(a);
}

constexpr std::size_t kBufferBytes = 8u << 20;

void CUPTIAPI on_buffer_request(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI on_buffer_complete(CUcontext context, uint32_t stream, uint8_t* buffer, size_t,
                                 size_t valid) {
  auto& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    CUpti_Activity* record = nullptr;
    while (api().next_record(buffer, valid, &record) == CUPTI_SUCCESS)
      if (s.running) take(s, record);
    size_t lost = 0;
    if (api().dropped_records && api().dropped_records(context, stream, &lost) == CUPTI_SUCCESS)
      s.dropped += lost;
  }
  std::free(buffer);
}

/// A CUPTI timestamp and the monotonic clock at the same instant (the midpoint of two reads).
struct Anchor {
  std::int64_t cupti = 0, monotonic = 0;
};
Anchor anchor() {
  std::uint64_t c = 0;
  auto before = core::monotonic_ns();
  api().timestamp(&c);
  auto after = core::monotonic_ns();
  return {static_cast<std::int64_t>(c), before + (after - before) / 2};
}

struct KindEntry {
  Activity bit;
  CUpti_ActivityKind kind;
};
constexpr KindEntry kKinds[] = {
    {Activity::kernel, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
    {Activity::memcpy, CUPTI_ACTIVITY_KIND_MEMCPY},
    {Activity::memset, CUPTI_ACTIVITY_KIND_MEMSET},
    {Activity::synchronization, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION},
    {Activity::overhead, CUPTI_ACTIVITY_KIND_OVERHEAD},
};

class CuptiTracer final : public GpuTracer {
 public:
  CuptiTracer(Activity traced, std::vector<CUpti_ActivityKind> kinds, Anchor start)
      : traced_(traced), kinds_(std::move(kinds)), start_(start) {}
  ~CuptiTracer() override {
    if (!finished_) finish();
  }
  Activity traced() const override { return traced_; }

  GpuTraceResult peek() override {
    GpuTraceResult out;
    if (finished_) return out;
    api().flush_all(0);  // completed buffers only: a forced flush would cut running records short
    auto now = anchor();
    auto& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    out.activities = s.records;
    out.names = s.names;
    out.dropped = s.dropped + s.incomplete;
    to_monotonic(out.activities, now);
    return out;
  }

  GpuTraceResult finish() override {
    GpuTraceResult out;
    if (finished_) return out;
    finished_ = true;
    const auto& a = api();
    a.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (auto kind : kinds_)
      a.disable(kind);
    a.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    auto stop = anchor();
    auto& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.running = false;
    to_monotonic(s.records, stop);
    out.activities = std::move(s.records);
    out.names = std::move(s.names);
    out.dropped = s.dropped + s.incomplete;
    if (s.incomplete)
      core::log().debug("gpu activity: {} records were still incomplete at the flush",
                        s.incomplete);
    s.records = {};
    s.names = {};
    s.index.clear();
    s.by_pointer.clear();
    s.dropped = s.incomplete = 0;
    return out;
  }

 private:
  /// CUPTI timestamps to CLOCK_MONOTONIC through the start anchor and `now`, by start time.
  void to_monotonic(std::vector<GpuActivity>& records, const Anchor& now) const {
    const core::ClockMap convert(start_.cupti, start_.monotonic, now.cupti, now.monotonic);
    for (auto& r : records) {
      r.start_ns = convert(r.start_ns);
      r.end_ns = convert(r.end_ns);
    }
    std::stable_sort(records.begin(), records.end(), [](const GpuActivity& x, const GpuActivity& y) {
      return x.start_ns < y.start_ns;
    });
  }

  Activity traced_;
  std::vector<CUpti_ActivityKind> kinds_;
  Anchor start_;
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<GpuTracer> GpuTracer::start(Activity kinds, std::uint64_t max_records,
                                            std::vector<std::string>& unavailable) {
  const auto& a = current_api();
  if (!a.ok) {
    unavailable.push_back("gpu_activity: CUPTI could not be loaded: " +
                          (a.error.empty() ? std::string("libcupti.so not found") : a.error));
    return nullptr;
  }
  auto& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.running) {
      unavailable.push_back("gpu_activity: another GPU trace is already running in this process");
      return nullptr;
    }
    s.records.clear();
    s.names.clear();
    s.index.clear();
    s.by_pointer.clear();
    s.dropped = s.incomplete = 0;
    s.max_records = max_records;
    s.running = true;
    g_api.store(&a, std::memory_order_release);
  }
  auto give_up = [&](const std::string& why) -> std::unique_ptr<GpuTracer> {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.running = false;
    unavailable.push_back("gpu_activity: " + why);
    return nullptr;
  };
  if (auto rc = a.register_callbacks(on_buffer_request, on_buffer_complete); rc != CUPTI_SUCCESS)
    return give_up("CUPTI refused the activity buffers: " + describe(rc));
  if (has(kinds, Activity::counters))
    unavailable.push_back(
        "gpu_activity: counters: the hardware-counter pass (CUPTI range profiler) is not "
        "implemented in this build");
  std::vector<CUpti_ActivityKind> enabled;
  std::uint32_t traced = 0;
  std::string no_driver;  // why, when CUPTI fails because there is no CUDA driver to trace
  bool checked_driver = false;
  for (const auto& k : kKinds) {
    if (!has(kinds, k.bit)) continue;
    auto rc = a.enable(k.kind);
    if (rc == CUPTI_SUCCESS) {
      enabled.push_back(k.kind);
      traced |= static_cast<std::uint32_t>(k.bit);
    } else {
      // CUPTI says only CUPTI_ERROR_UNKNOWN on a host without the driver: say that instead.
      if (!checked_driver && rc == CUPTI_ERROR_UNKNOWN) {
        checked_driver = true;
        if (void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL))
          ::dlclose(driver);
        else
          no_driver = "no CUDA driver (libcuda.so.1 cannot be loaded)";
      }
      unavailable.push_back("gpu_activity: " + to_string(k.bit) + ": " +
                            (rc == CUPTI_ERROR_UNKNOWN && !no_driver.empty()
                                 ? no_driver + "; CUPTI says " + describe(rc)
                                 : describe(rc)));
    }
  }
  if (enabled.empty()) return give_up("no activity kind could be traced");
  return std::make_unique<CuptiTracer>(static_cast<Activity>(traced), std::move(enabled), anchor());
}

}  // namespace mainboard::detail

#endif
