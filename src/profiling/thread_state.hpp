#pragma once

// The span hot path's data. One ThreadState per thread per session, written only by its
// thread; the session reads it while the thread may still be writing, so everything the reader
// touches is either an atomic or lives in storage that never moves (chunks published with a
// release store). Nothing here takes a lock after the thread's first span of a session.

#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "core/clock.hpp"

namespace mainboard::detail {

/// A cheap, monotonic tick counter: the TSC on x86 (constant-rate on every CPU this targets),
/// the virtual counter on Arm, the monotonic clock elsewhere. Sessions convert ticks to the
/// monotonic clock with a calibration taken at their start and stop.
inline std::uint64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#elif defined(__aarch64__)
  std::uint64_t v;
  asm volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  return static_cast<std::uint64_t>(core::monotonic_ns());
#endif
}

/// Append-only storage for one writer and concurrent readers of the published prefix. Chunks
/// are allocated as it grows and never move.
template <class T, std::size_t ChunkSize, std::size_t MaxChunks>
class ChunkedLog {
 public:
  ChunkedLog() = default;
  ChunkedLog(const ChunkedLog&) = delete;
  ChunkedLog& operator=(const ChunkedLog&) = delete;
  ~ChunkedLog() {
    for (auto& c : chunks_)
      if (T* p = c.load(std::memory_order_relaxed)) release(p);
  }

  /// The next slot to fill, or null when full or out of memory. Writer only.
  T* next() noexcept {
    std::size_t n = count_.load(std::memory_order_relaxed);
    std::size_t chunk = n / ChunkSize;
    if (chunk >= MaxChunks) return nullptr;
    T* c = chunks_[chunk].load(std::memory_order_relaxed);
    if (!c) {
      c = allocate();
      if (!c) return nullptr;
      chunks_[chunk].store(c, std::memory_order_release);
    }
    return &c[n % ChunkSize];
  }
  /// Makes the slot next() returned visible to readers. Writer only.
  void publish() noexcept {
    count_.store(count_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  std::size_t size() const noexcept { return count_.load(std::memory_order_acquire); }
  /// Element i < size(). Writers may use any index they have filled.
  T& operator[](std::size_t i) noexcept {
    return chunks_[i / ChunkSize].load(std::memory_order_acquire)[i % ChunkSize];
  }
  const T& operator[](std::size_t i) const noexcept {
    return chunks_[i / ChunkSize].load(std::memory_order_acquire)[i % ChunkSize];
  }

 private:
  static constexpr std::size_t kBytes = sizeof(T) * ChunkSize;

  /// A chunk straight from the kernel, populated in one call: one page fault per span would cost
  /// more than the span itself. A thread pays for its first chunk (1.5 MiB of events) only when
  /// it stores its first span.
  static T* allocate() noexcept {
    void* p = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    return new (p) T[ChunkSize];
  }
  static void release(T* p) noexcept {
    for (std::size_t i = 0; i < ChunkSize; ++i)
      p[i].~T();
    ::munmap(p, kBytes);
  }

  std::atomic<T*> chunks_[MaxChunks] = {};
  std::atomic<std::size_t> count_{0};
};

/// A span path on one thread: a node of the thread's path tree, with exact statistics. The
/// statistics are relaxed atomics written by the owning thread alone (plain loads and stores on
/// the hardware we run on) so the session can read them at any time.
struct PathNode {
  const char* name = nullptr;  // null for the root
  std::uint32_t parent = 0;
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> total{0};  // ticks
  std::atomic<std::uint64_t> self{0};
  std::atomic<std::uint64_t> min{~0ull};
  std::atomic<std::uint64_t> max{0};
};

struct RawEvent {
  std::uint32_t node;
  std::uint64_t start;  // ticks
  std::uint64_t end;
};

struct ThreadState {
  std::uint64_t epoch = 0;  // the session it belongs to
  std::uint32_t index = 0;
  std::int64_t tid = 0;
  std::string name;

  ChunkedLog<PathNode, 1024, 1024> nodes;
  ChunkedLog<RawEvent, 65536, 1024> events;  // 1.5 MiB chunks, up to 64 Mi events a thread
  std::atomic<std::uint64_t> dropped{0};

  // Owner-only from here on.
  struct Open {
    std::uint32_t node;
    bool nvtx;  // an NVTX range was pushed for it (fits in the padding)
    std::uint64_t start;
    std::uint64_t child;  // ticks spent in child spans
  };
  std::vector<Open> stack;
  std::vector<std::vector<std::pair<const char*, std::uint32_t>>> children;  // per node
  std::int64_t quota = 0;  // events this thread may still store without asking the session

  ThreadState() {
    stack.reserve(64);
    children.reserve(256);
    // Node 0 is the root every top-level span hangs from.
    nodes.next();
    nodes.publish();
    children.emplace_back();
  }

  /// The child of `parent` named `name`, created on first use (the only allocation of a steady
  /// state is a new path). 0 when the tree is full.
  std::uint32_t child(std::uint32_t parent, const char* span_name) noexcept {
    for (const auto& [n, at] : children[parent])
      if (n == span_name) return at;
    PathNode* node = nodes.next();
    if (!node) return 0;
    try {
      node->name = span_name;
      node->parent = parent;
      auto at = static_cast<std::uint32_t>(nodes.size());
      children[parent].emplace_back(span_name, at);
      children.emplace_back();
      nodes.publish();
      return at;
    } catch (...) {
      return 0;
    }
  }
};

}  // namespace mainboard::detail
