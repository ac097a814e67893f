// A fake libcupti.so: the activity API the tracer calls, answering with records the test queues
// through the fake_cupti_* hooks. The records are the toolkit's own structs (cupti_activity.h),
// so the tracer's real parsing runs on the bytes CUPTI would hand it.
//
// Environment:
//   FAKE_CUPTI_REFUSE="2:35,38:1"  activity kinds refused with a result code (kind:code, …)
//   FAKE_CUPTI_DROPPED=N           CUPTI reports N dropped records with each completed buffer
#include <cupti.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {

// The fake's clock runs one hour (in ns) ahead of CLOCK_MONOTONIC, so a tracer that forgot to
// convert would place every record far outside the session.
constexpr std::uint64_t kOffset = 3'600'000'000'000ull;

std::uint64_t now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull +
         static_cast<std::uint64_t>(ts.tv_nsec) + kOffset;
}

struct Record {
  CUpti_ActivityKind kind;
  std::vector<std::uint8_t> bytes;
};

struct Fake {
  std::mutex mutex;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  std::set<int> enabled;
  std::vector<Record> queued;
  std::deque<std::string> names;  // kernel names live as long as the library, like CUPTI's
};
Fake& fake() {
  static Fake f;
  return f;
}

std::map<int, int> refusals() {
  std::map<int, int> out;
  const char* spec = std::getenv("FAKE_CUPTI_REFUSE");
  if (!spec) return out;
  std::string s = spec;
  std::size_t pos = 0;
  while (pos < s.size()) {
    auto comma = s.find(',', pos);
    auto item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    auto colon = item.find(':');
    if (colon != std::string::npos)
      out[std::atoi(item.substr(0, colon).c_str())] = std::atoi(item.substr(colon + 1).c_str());
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

/// Like CUPTI, records only what is enabled at the time the work happens.
template <class T>
void queue(CUpti_ActivityKind kind, const T& record) {
  Record r{kind, std::vector<std::uint8_t>(sizeof(T))};
  std::memcpy(r.bytes.data(), &record, sizeof(T));
  std::lock_guard<std::mutex> lock(fake().mutex);
  if (fake().enabled.count(static_cast<int>(kind))) fake().queued.push_back(std::move(r));
}

std::size_t record_size(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    default: return 0;
  }
}

std::size_t aligned(std::size_t n) {
  return (n + 7) & ~std::size_t{7};
}

}  // namespace

FAKE_API CUptiResult cuptiGetTimestamp(uint64_t* timestamp) {
  *timestamp = now();
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiGetResultString(CUptiResult result, const char** str) {
  switch (static_cast<int>(result)) {
    case 0: *str = "CUPTI_SUCCESS"; break;
    case 1: *str = "CUPTI_ERROR_INVALID_PARAMETER"; break;
    case 35: *str = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"; break;
    case 39: *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"; break;
    default: *str = "CUPTI_ERROR_UNKNOWN"; break;
  }
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                    CUpti_BuffersCallbackCompleteFunc complete) {
  if (!request || !complete) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(fake().mutex);
  fake().request = request;
  fake().complete = complete;
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  auto refused = refusals();
  if (auto it = refused.find(static_cast<int>(kind)); it != refused.end())
    return static_cast<CUptiResult>(it->second);
  std::lock_guard<std::mutex> lock(fake().mutex);
  fake().enabled.insert(static_cast<int>(kind));
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  std::lock_guard<std::mutex> lock(fake().mutex);
  fake().enabled.erase(static_cast<int>(kind));
  return CUPTI_SUCCESS;
}

/// Hands every queued record of an enabled kind to the tracer in one buffer.
FAKE_API CUptiResult cuptiActivityFlushAll(uint32_t) {
  std::vector<Record> records;
  CUpti_BuffersCallbackRequestFunc request;
  CUpti_BuffersCallbackCompleteFunc complete;
  {
    std::lock_guard<std::mutex> lock(fake().mutex);
    request = fake().request;
    complete = fake().complete;
    for (auto& r : fake().queued)
      if (fake().enabled.count(static_cast<int>(r.kind))) records.push_back(std::move(r));
    fake().queued.clear();
  }
  if (!request || !complete || records.empty()) return CUPTI_SUCCESS;
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  request(&buffer, &size, &max_records);
  if (!buffer) return CUPTI_ERROR_UNKNOWN;
  size_t used = 0;
  for (const auto& r : records) {
    if (used + aligned(r.bytes.size()) > size) break;
    std::memcpy(buffer + used, r.bytes.data(), r.bytes.size());
    used += aligned(r.bytes.size());
  }
  complete(nullptr, 0, buffer, size, used);
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid,
                                                CUpti_Activity** record) {
  uint8_t* next = buffer;
  if (*record) {
    auto size = record_size((*record)->kind);
    if (size == 0) return CUPTI_ERROR_INVALID_KIND;
    next = reinterpret_cast<uint8_t*>(*record) + aligned(size);
  }
  if (next >= buffer + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(next);
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  std::lock_guard<std::mutex> lock(fake().mutex);
  *dropped = 0;
  if (const char* n = std::getenv("FAKE_CUPTI_DROPPED"))
    *dropped = static_cast<size_t>(std::atoll(n));
  return CUPTI_SUCCESS;
}

// --- hooks for the tests -------------------------------------------------------------------

/// The fake CUPTI clock now (what a record that starts now carries).
FAKE_API uint64_t fake_cupti_now() {
  return now();
}

FAKE_API void fake_cupti_kernel(const char* mangled, uint64_t start, uint64_t end, uint32_t grid_x,
                                uint32_t block_x, uint16_t registers, int32_t dynamic_shared,
                                uint32_t stream) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.deviceId = 0;
  k.streamId = stream;
  k.gridX = static_cast<int32_t>(grid_x);
  k.gridY = k.gridZ = 1;
  k.blockX = static_cast<int32_t>(block_x);
  k.blockY = k.blockZ = 1;
  k.registersPerThread = registers;
  k.dynamicSharedMemory = dynamic_shared;
  k.correlationId = 7;
  {
    std::lock_guard<std::mutex> lock(fake().mutex);
    fake().names.emplace_back(mangled);
    k.name = fake().names.back().c_str();
  }
  queue(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k);
}

FAKE_API void fake_cupti_memcpy(uint8_t copy_kind, uint8_t src_kind, uint8_t dst_kind,
                                uint64_t bytes, uint64_t start, uint64_t end) {
  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = copy_kind;
  m.srcKind = src_kind;
  m.dstKind = dst_kind;
  m.bytes = bytes;
  m.start = start;
  m.end = end;
  m.streamId = 1;
  queue(CUPTI_ACTIVITY_KIND_MEMCPY, m);
}

FAKE_API void fake_cupti_memset(uint64_t bytes, uint64_t start, uint64_t end) {
  CUpti_ActivityMemset4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.bytes = bytes;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.start = start;
  m.end = end;
  queue(CUPTI_ACTIVITY_KIND_MEMSET, m);
}

FAKE_API void fake_cupti_sync(uint64_t start, uint64_t end) {
  CUpti_ActivitySynchronization2 y{};
  y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  y.start = start;
  y.end = end;
  queue(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, y);
}
