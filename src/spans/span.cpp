// The span hot path: per-thread states, the path tree, stored events. No lock and no allocation
// in steady state; the one lock is a thread's registration on its first span of a session.
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "mainboard/span.hpp"
#include "spans/session.hpp"

#ifdef MAINBOARD_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace mainboard {

namespace detail {

std::atomic<std::uint32_t> g_profiling{0};
std::atomic<std::uint64_t> g_epoch{0};
std::atomic<std::int64_t> g_budget{0};
std::atomic<std::int64_t> g_open_outermost{0};
std::atomic<bool> g_count_open{false};
std::atomic<bool> g_nvtx{false};

Registry& registry() {
  static Registry r;
  return r;
}

namespace {

/// This thread's state for the current session, and states of ended sessions that still have
/// spans open on this thread (a Span object outliving its session points at one of those).
struct Local {
  std::shared_ptr<ThreadState> current;
  std::vector<std::shared_ptr<ThreadState>> retired;
};
thread_local Local t_local;

ThreadState* register_thread() noexcept {
  try {
    auto& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.epoch == 0) return nullptr;  // the session ended meanwhile
    if (t_local.current) {
      // Keep the old state while spans of its session are still open here.
      if (!t_local.current->stack.empty()) t_local.retired.push_back(std::move(t_local.current));
      std::erase_if(t_local.retired, [](const auto& s) { return s->stack.empty(); });
    }
    auto state = std::make_shared<ThreadState>();
    state->epoch = r.epoch;
    state->index = static_cast<std::uint32_t>(r.threads.size());
    state->tid = static_cast<std::int64_t>(::syscall(SYS_gettid));
    char name[64] = {};
    if (pthread_getname_np(pthread_self(), name, sizeof name) == 0) state->name = name;
    r.threads.push_back(state);
    t_local.current = std::move(state);
    return t_local.current.get();
  } catch (...) {
    return nullptr;
  }
}

/// Takes up to 256 stored-span slots from the session at once: one shared atomic per batch.
/// Once the session has none left, the thread stops asking (quota -1) so that the statistics of
/// a long session do not pay for an atomic on every span.
bool take_quota(ThreadState& t) noexcept {
  constexpr std::int64_t kBatch = 256;
  if (t.quota < 0) return false;
  std::int64_t before = g_budget.fetch_sub(kBatch, std::memory_order_relaxed);
  if (before <= 0) {
    t.quota = -1;
    return false;
  }
  t.quota = std::min(before, kBatch);
  return true;
}

}  // namespace

namespace {

/// Opens a span on `t` (its thread's state, or a track).
ThreadState* enter_on(ThreadState* t, const char* name) noexcept {
  std::uint32_t parent = t->stack.empty() ? 0 : t->stack.back().node;
  std::uint32_t node = t->child(parent, name);
  if (t->stack.size() == t->ghosts && g_count_open.load(std::memory_order_relaxed))
    g_open_outermost.fetch_add(1, std::memory_order_relaxed);
  bool nvtx = g_nvtx.load(std::memory_order_relaxed);
#ifdef MAINBOARD_HAVE_NVTX
  if (nvtx) [[unlikely]]
    nvtxRangePushA(name);
#endif
  try {
    t->stack.push_back({node, nvtx, ticks(), 0});
  } catch (...) {
    return nullptr;
  }
  return t;
}

}  // namespace

ThreadState* span_enter(const char* name) noexcept {
  std::uint64_t epoch = g_epoch.load(std::memory_order_acquire);
  if (epoch == 0) return nullptr;
  ThreadState* t = t_local.current.get();
  if (!t || t->epoch != epoch) {
    t = register_thread();
    if (!t) return nullptr;
  }
  return enter_on(t, name);
}

ThreadState* span_enter_on(ThreadState* track, const char* name) noexcept {
  if (!track || track->epoch != g_epoch.load(std::memory_order_acquire)) return nullptr;
  return enter_on(track, name);
}

struct Track {
  std::shared_ptr<ThreadState> state;
};

Track* track_open(const char* name, const char* const* path, std::size_t depth) noexcept {
  try {
    auto& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.epoch == 0) return nullptr;
    std::shared_ptr<ThreadState> state;
    if (!r.idle_tracks.empty()) {
      state = std::move(r.idle_tracks.back());
      r.idle_tracks.pop_back();
      state->stack.clear();
    } else {
      state = std::make_shared<ThreadState>();
      state->epoch = r.epoch;
      state->index = static_cast<std::uint32_t>(r.threads.size());
      state->tid = 0;  // no thread of the system: its spans run on whichever thread runs it
      state->name = name ? name : "track";
      r.threads.push_back(state);
    }
    // The spans open where the track begins: its spans are their children.
    for (std::size_t i = 0; i < depth; ++i) {
      std::uint32_t parent = state->stack.empty() ? 0 : state->stack.back().node;
      state->stack.push_back({state->child(parent, path[i]), false, 0, 0});
    }
    state->ghosts = static_cast<std::uint32_t>(state->stack.size());
    return new Track{std::move(state)};
  } catch (...) {
    return nullptr;
  }
}

ThreadState* track_state(Track* track) noexcept {
  return track ? track->state.get() : nullptr;
}

void track_close(Track* track) noexcept {
  if (!track) return;
  try {
    auto& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto& t = *track->state;
    // A track left with spans open (a coroutine dropped inside one) is not handed on.
    if (t.epoch == r.epoch && t.stack.size() == t.ghosts) r.idle_tracks.push_back(track->state);
  } catch (...) {
  }
  delete track;
}

std::size_t open_path(const char** names, std::size_t capacity) noexcept {
  ThreadState* t = t_local.current.get();
  if (!t || t->epoch != g_epoch.load(std::memory_order_acquire)) return 0;
  std::size_t n = 0;
  for (const auto& open : t->stack) {
    if (n == capacity) break;
    names[n++] = t->nodes[open.node].name;
  }
  return n;
}

void span_exit(ThreadState* t) noexcept { span_exit_after(t, kUntilNow); }

void span_exit_after(ThreadState* t, std::uint64_t duration_ticks) noexcept {
  std::uint64_t now = ticks();
  if (t->stack.size() <= t->ghosts) return;
  auto open = t->stack.back();
  if (duration_ticks != kUntilNow) [[unlikely]]
    now = open.start + duration_ticks;
  t->stack.pop_back();
#ifdef MAINBOARD_HAVE_NVTX
  if (open.nvtx) [[unlikely]]
    nvtxRangePop();
#endif
  bool outermost = t->stack.size() == t->ghosts;
  // A span of an ended session only unwinds its stack.
  if (t->epoch != g_epoch.load(std::memory_order_relaxed)) return;
  if (outermost && g_count_open.load(std::memory_order_relaxed))
    g_open_outermost.fetch_sub(1, std::memory_order_relaxed);
  std::uint64_t duration = now - open.start;
  if (!outermost) t->stack.back().child += duration;
  auto relaxed = std::memory_order_relaxed;
  if (open.node == 0) {  // the path tree was full: counted, and said at the end
    t->unattributed.store(t->unattributed.load(relaxed) + 1, relaxed);
    return;
  }
  PathNode& n = t->nodes[open.node];
  n.calls.store(n.calls.load(relaxed) + 1, relaxed);
  n.total.store(n.total.load(relaxed) + duration, relaxed);
  n.self.store(n.self.load(relaxed) + (duration > open.child ? duration - open.child : 0), relaxed);
  if (duration < n.min.load(relaxed)) n.min.store(duration, relaxed);
  if (duration > n.max.load(relaxed)) n.max.store(duration, relaxed);
  if (t->quota <= 0 && !take_quota(*t)) {
    t->dropped.store(t->dropped.load(relaxed) + 1, relaxed);
    return;
  }
  RawEvent* e = t->events.next();
  if (!e) {
    t->dropped.store(t->dropped.load(relaxed) + 1, relaxed);
    return;
  }
  *e = {open.node, open.start, now};
  t->events.publish();
  --t->quota;
}

ThreadState* current_state() noexcept {
  ThreadState* t = t_local.current.get();
  if (!t || t->epoch != g_epoch.load(std::memory_order_acquire)) return nullptr;
  return t;
}

std::atomic<std::uint64_t> g_names_refused{0};

const char* other_names() noexcept {
  return "[other names]";
}

/// Names opened with Profiler::enter live as long as the process: a stale span may still hold
/// one. They are few in a program that names its spans for what they do; one that puts a
/// counter or an id in each name would grow without end, so past kMaxNames a new name is
/// refused (counted, its span kept under other_names()).
const char* intern(std::string_view name) {
  static std::mutex mutex;
  static std::set<std::string, std::less<>> names;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = names.find(name);
  if (it == names.end()) {
    if (names.size() >= kMaxNames) {
      g_names_refused.fetch_add(1, std::memory_order_relaxed);
      return other_names();
    }
    it = names.emplace(name).first;
  }
  return it->c_str();
}

const char* span_name(const char* name, std::size_t size) noexcept {
  try {
    return intern(std::string_view(name, size));
  } catch (...) {
    return nullptr;
  }
}

}  // namespace detail

}  // namespace mainboard
