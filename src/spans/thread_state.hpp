#pragma once

// The span hot path's data. One ThreadState per thread per session, written only by its
// thread; the session reads it while the thread may still be writing, so everything the reader
// touches is either an atomic or lives in storage that never moves (chunks published with a
// release store). Nothing here takes a lock after the thread's first span of a session.

#include <sys/mman.h>

#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
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

/// What ticks() reads.
inline const char* tick_source() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return "tsc";
#elif defined(__aarch64__)
  return "cntvct_el0";
#else
  return "monotonic";
#endif
}

/// ticks()'s rate where it is known without measuring: Arm states its counter's frequency in
/// CNTFRQ_EL0; the monotonic clock counts nanoseconds. 0 for the TSC, measured instead.
inline std::uint64_t tick_stated_hz() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return 0;
#elif defined(__aarch64__)
  std::uint64_t hz;
  asm volatile("mrs %0, cntfrq_el0" : "=r"(hz));
  return hz;
#else
  return 1'000'000'000;
#endif
}

/// Append-only storage for one writer and concurrent readers of the published prefix. Chunks
/// never move, so a reader can follow the writer. They double in size from `First` elements up
/// to `Cap`, then stay at `Cap`: memory follows use, so a thread that stores one span maps one
/// small chunk, and a thread that stores millions pays one allocation per `Cap` of them.
template <class T, std::size_t First, std::size_t Cap, std::size_t MaxChunks>
class ChunkedLog {
  static_assert((First & (First - 1)) == 0 && (Cap & (Cap - 1)) == 0 && First <= Cap);
  /// Chunks 0 … kGrowing-1 double (First << k elements); the rest hold Cap each.
  static constexpr std::size_t kGrowing = std::bit_width(Cap / First);
  static constexpr std::size_t kGrown = First * ((std::size_t{1} << kGrowing) - 1);

 public:
  ChunkedLog() = default;
  ChunkedLog(const ChunkedLog&) = delete;
  ChunkedLog& operator=(const ChunkedLog&) = delete;
  ~ChunkedLog() {
    for (std::size_t k = 0; k < MaxChunks; ++k)
      if (T* p = chunks_[k].load(std::memory_order_relaxed)) release(p, chunk_size(k));
  }

  /// Elements the log can hold at most.
  static constexpr std::size_t capacity() { return kGrown + (MaxChunks - kGrowing) * Cap; }

  /// The next slot to fill, or null when full or out of memory. Writer only.
  T* next() noexcept {
    if (cursor_ == end_) [[unlikely]]
      return grow();
    return cursor_;
  }
  /// Makes the slot next() returned visible to readers. Writer only.
  void publish() noexcept {
    ++cursor_;
    count_.store(count_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  std::size_t size() const noexcept { return count_.load(std::memory_order_acquire); }
  /// Bytes of the chunks mapped so far. Writer only.
  std::size_t mapped_bytes() const noexcept {
    std::size_t n = 0;
    for (std::size_t k = 0; k < used_; ++k)
      n += chunk_size(k) * sizeof(T);
    return n;
  }
  /// Element i < size(). Writers may use any index they have filled.
  T& operator[](std::size_t i) noexcept {
    auto [k, at] = locate(i);
    return chunks_[k].load(std::memory_order_acquire)[at];
  }
  const T& operator[](std::size_t i) const noexcept {
    auto [k, at] = locate(i);
    return chunks_[k].load(std::memory_order_acquire)[at];
  }

 private:
  static constexpr std::size_t chunk_size(std::size_t k) { return k < kGrowing ? First << k : Cap; }
  /// The chunk holding element i, and its place there.
  static constexpr std::pair<std::size_t, std::size_t> locate(std::size_t i) {
    if (i < kGrown) {
      std::size_t k = static_cast<std::size_t>(std::bit_width(i / First + 1)) - 1;
      return {k, i - First * ((std::size_t{1} << k) - 1)};
    }
    return {kGrowing + (i - kGrown) / Cap, (i - kGrown) % Cap};
  }

  /// The next chunk, out of the hot path.
  [[gnu::noinline]] T* grow() noexcept {
    if (used_ >= MaxChunks) return nullptr;
    std::size_t size = chunk_size(used_);
    T* c = allocate(size);
    if (!c) return nullptr;
    chunks_[used_].store(c, std::memory_order_release);
    ++used_;
    cursor_ = c;
    end_ = c + size;
    return cursor_;
  }

  /// A chunk straight from the kernel, populated in one call: a page fault in the middle of a
  /// span would cost more than the span itself.
  static T* allocate(std::size_t n) noexcept {
    void* p = ::mmap(nullptr, sizeof(T) * n, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    return new (p) T[n];
  }
  static void release(T* p, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i)
      p[i].~T();
    ::munmap(p, sizeof(T) * n);
  }

  std::atomic<T*> chunks_[MaxChunks] = {};
  std::atomic<std::size_t> count_{0};
  // Writer only.
  T* cursor_ = nullptr;   // the next slot
  T* end_ = nullptr;      // the end of the current chunk
  std::size_t used_ = 0;  // chunks allocated
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

  // Up to about a million paths and 64 Mi stored spans a thread; 896 B and 6 KiB at first.
  using Nodes = ChunkedLog<PathNode, 16, 65536, 27>;
  static constexpr std::size_t kMaxPaths = Nodes::capacity() - 1;  // node 0 is the root
  Nodes nodes;
  ChunkedLog<RawEvent, 256, 1u << 20, 75> events;
  std::atomic<std::uint64_t> dropped{0};
  /// Spans closed while the path tree was full: timed for their parents, but in no path.
  std::atomic<std::uint64_t> unattributed{0};

  // Owner-only from here on.
  struct Open {
    std::uint32_t node;
    bool nvtx;  // an NVTX range was pushed for it (fits in the padding)
    std::uint64_t start;
    std::uint64_t child;  // ticks spent in child spans
  };
  std::vector<Open> stack;
  /// The bottom frames of a track's stack that only give its spans their parents' path (the
  /// spans open where the track began); they are never closed or counted.
  std::uint32_t ghosts = 0;
  /// Each node's first kListed children, looked up by a scan (a handful at most, as spans
  /// usually have: faster than hashing); children past those are in `more_children`, so that a
  /// node with 240 000 distinct child names costs one hash lookup per span, not a scan of all.
  static constexpr std::size_t kListed = 16;
  std::vector<std::vector<std::pair<const char*, std::uint32_t>>> children;  // per node
  struct EdgeHash {
    std::size_t operator()(const std::pair<std::uint32_t, const char*>& e) const noexcept {
      auto h = reinterpret_cast<std::uintptr_t>(e.second) * 0x9E3779B97F4A7C15ull;
      return static_cast<std::size_t>(h ^ (std::uint64_t{e.first} << 32 | e.first));
    }
  };
  std::unordered_map<std::pair<std::uint32_t, const char*>, std::uint32_t, EdgeHash> more_children;
  std::int64_t quota = 0;  // events this thread may still store without asking the session

  ThreadState() {
    stack.reserve(16);
    children.reserve(16);
    // Node 0 is the root every top-level span hangs from.
    nodes.next();
    nodes.publish();
    children.emplace_back();
  }

  /// The child of `parent` named `name`, created on first use (the only allocation of a steady
  /// state is a new path). 0 when the tree is full.
  std::uint32_t child(std::uint32_t parent, const char* span_name) noexcept {
    auto& listed = children[parent];
    for (const auto& [n, at] : listed)
      if (n == span_name) return at;
    bool full = listed.size() >= kListed;
    if (full) [[unlikely]] {
      if (auto it = more_children.find({parent, span_name}); it != more_children.end())
        return it->second;
    }
    PathNode* node = nodes.next();
    if (!node) return 0;
    try {
      node->name = span_name;
      node->parent = parent;
      auto at = static_cast<std::uint32_t>(nodes.size());
      if (full)
        more_children.emplace(std::pair{parent, span_name}, at);
      else
        listed.emplace_back(span_name, at);
      children.emplace_back();
      nodes.publish();
      return at;
    } catch (...) {
      return 0;
    }
  }
};

}  // namespace mainboard::detail
