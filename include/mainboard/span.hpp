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
