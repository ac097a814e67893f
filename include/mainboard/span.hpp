#pragma once

/// Named spans: mark a block or a call so that an active mainboard::Profiler times it.
///
///   void step() {
///     MAINBOARD_SPAN("step");          // until the end of the block
///     { MAINBOARD_SPAN("forward"); forward(); }   // recorded as step/forward
///     auto loss = mainboard::spanned("loss", [&] { return compute_loss(); });
///   }
///
/// With no profiler active a span costs one relaxed atomic load and a branch: no clock read, no
/// allocation, no thread-local access. Names must live for the whole program (string literals):
/// the hot path stores the pointer. For names made at run time, use Profiler::enter/exit.
/// Defining MAINBOARD_NO_PROFILING before including this header removes spans entirely.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "mainboard/export.hpp"

namespace mainboard {

namespace detail {

/// Non-zero while a Profiler is active; every span reads it once.
MAINBOARD_API extern std::atomic<std::uint32_t> g_profiling;

struct ThreadState;

/// Opens a span on this thread's state for the active session; null when none is (any more).
MAINBOARD_API ThreadState* span_enter(const char* name) noexcept;
MAINBOARD_API void span_exit(ThreadState* state) noexcept;

/// A span stack of its own, for code whose nesting is not its thread's: an asyncio task, a
/// coroutine, a fiber. A track is a "thread" of the session's profile, named `name`; its spans
/// are children of `path` (the `depth` span names open where it begins). Null when no session
/// records spans. Spans open on it with span_enter_on and close with span_exit; its owner closes
/// it with track_close (after its session, too), which hands it to the next track_open. Tracks
/// have no tid: they are rows of their own in a trace.
struct Track;
MAINBOARD_API Track* track_open(const char* name, const char* const* path,
                                std::size_t depth) noexcept;
MAINBOARD_API ThreadState* track_state(Track* track) noexcept;
MAINBOARD_API void track_close(Track* track) noexcept;
/// Opens a span on a track's state; null when the track belongs to an ended session.
MAINBOARD_API ThreadState* span_enter_on(ThreadState* track, const char* name) noexcept;
/// The names of the spans open on this thread (outermost first), at most `capacity`; how many.
MAINBOARD_API std::size_t open_path(const char** names, std::size_t capacity) noexcept;
/// A copy of a run-time span name that lives as long as the process (the hot path keeps the
/// pointer): the same pointer for the same name. Past a bound on distinct names, a new one is
/// refused and counted, and its span is kept under "[other names]"; null when out of memory.
MAINBOARD_API const char* span_name(const char* name, std::size_t size) noexcept;

}  // namespace detail

/// A span for the lifetime of the object. `name` must outlive the program (a literal).
class MAINBOARD_API Span {
 public:
#ifdef MAINBOARD_NO_PROFILING
  explicit Span(const char*) noexcept {}
#else
  explicit Span(const char* name) noexcept {
    if (detail::g_profiling.load(std::memory_order_relaxed) == 0) [[likely]]
      return;
    state_ = detail::span_enter(name);
  }
  ~Span() {
    if (state_) [[unlikely]]
      detail::span_exit(state_);
  }
#endif
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
#ifndef MAINBOARD_NO_PROFILING
  detail::ThreadState* state_ = nullptr;
#endif
};

/// Runs `fn` inside a span named `name` and returns what it returns.
template <class F>
decltype(auto) spanned(const char* name, F&& fn) {
  Span span(name);
  return std::forward<F>(fn)();
}

}  // namespace mainboard

#define MAINBOARD_CONCAT_INNER(a, b) a##b
#define MAINBOARD_CONCAT(a, b) MAINBOARD_CONCAT_INNER(a, b)

#ifdef MAINBOARD_NO_PROFILING
#define MAINBOARD_SPAN(name) static_cast<void>(0)
#else
/// A span named `name` (a string literal) until the end of the enclosing block.
#define MAINBOARD_SPAN(name) ::mainboard::Span MAINBOARD_CONCAT(mainboard_span_, __LINE__)(name)
#endif
