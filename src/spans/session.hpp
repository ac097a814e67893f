#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mainboard/profiler.hpp"
#include "spans/extension.hpp"
#include "spans/thread_state.hpp"

namespace mainboard::detail {

/// Globals the span hot path reads. Only the session start and stop write them.
extern std::atomic<std::uint64_t> g_epoch;          // id of the active session, 0 for none
extern std::atomic<std::int64_t> g_budget;          // stored spans left to hand out
extern std::atomic<std::int64_t> g_open_outermost;  // threads inside at least one span
extern std::atomic<bool> g_count_open;              // whether to keep g_open_outermost
extern std::atomic<bool> g_nvtx;                    // spans also push NVTX ranges

/// Every ThreadState of the active session, so it can read them at stop. Threads register on
/// their first span of a session (the one lock of the hot path's life).
struct Registry {
  std::mutex mutex;
  std::uint64_t epoch = 0;  // the session registering now, 0 for none
  std::vector<std::shared_ptr<ThreadState>> threads;
  /// Tracks of this session whose owner closed them with no span open: the next track_open
  /// takes one, so a program with a million short tasks has as many tracks as it had at once.
  std::vector<std::shared_ptr<ThreadState>> idle_tracks;
};
Registry& registry();
/// This thread's state for the active session, or null.
ThreadState* current_state() noexcept;
/// Closes the innermost open span of `t` as having lasted `duration_ticks` (a caller's own
/// measure), or until now with kUntilNow (what span_exit does).
inline constexpr std::uint64_t kUntilNow = ~std::uint64_t{0};
void span_exit_after(ThreadState* t, std::uint64_t duration_ticks) noexcept;
/// A name that lives as long as the process (Profiler::enter copies run-time names here).
const char* intern(std::string_view name);
/// Distinct span names kept for the life of the process (Profiler::enter and Python's span):
/// a name past these is refused.
inline constexpr std::size_t kMaxNames = std::size_t{1} << 17;
/// Names refused since the process began, and the name their spans are kept under.
extern std::atomic<std::uint64_t> g_names_refused;
const char* other_names() noexcept;

/// Starts the session of the environment (MAINBOARD_PROFILE) if it names one; see autostart.cpp.
void start_from_environment() noexcept;
/// A Profiler for that session: spans only, no extension, giving way to the program's own.
Profiler* start_environment_session(const Collection& collection);

}  // namespace mainboard::detail

namespace mainboard {

struct Profiler::Session {
  Collection collection;
  std::int64_t pid = 0;  // the process it began in (a forked child's copy records nothing)
  bool from_environment = false;  // started by MAINBOARD_PROFILE: saved at exit, no extension
  std::uint64_t epoch = 0;
  bool active = false;
  std::uint64_t start_ticks = 0, stop_ticks = 0;
  std::int64_t start_ns = 0, stop_ns = 0;
  std::uint64_t names_refused_at_start = 0;  // detail::g_names_refused when it began
  std::string command;  // this process's program (comm) as the session began: read once
  std::vector<std::string> unavailable;
  std::unique_ptr<detail::SessionExtension> extension;
  Activity traced{};  // what the extension traced, kept after it finished
};

}  // namespace mainboard
