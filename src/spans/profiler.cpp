// The profiling session: opens the span gate, lets the extension of mainboard::mainboard collect
// what it can beyond spans, and freezes everything into a Profile at stop.
#include "mainboard/profiler.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "core/clock.hpp"
#include "mainboard/error.hpp"
#include "model/enum_names.hpp"
#include "spans/instrument.hpp"
#include "spans/session.hpp"

namespace mainboard {

namespace detail {

namespace {
std::atomic<ExtensionFactory> g_extension{nullptr};
}  // namespace

void install_session_extension(ExtensionFactory factory) noexcept {
  g_extension.store(factory, std::memory_order_release);
}
ExtensionFactory session_extension() noexcept {
  return g_extension.load(std::memory_order_acquire);
}

}  // namespace detail

namespace {

/// This process's program as the kernel names it ("python3", "train"): the profile's command,
/// as a sampled run's is (an empty string where it cannot be read).
std::string this_program() {
  char name[64] = {};
  int fd = ::open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  auto n = ::read(fd, name, sizeof name - 1);
  ::close(fd);
  std::string out(name, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\0'))
    out.pop_back();
  return out;
}

std::mutex g_active_mutex;
Profiler* g_active = nullptr;

/// In the child of a fork: the parent's session is not this process's. Spans stop recording at
/// once, and a session may start here; the parent's Profiler object, copied into the child,
/// ends without touching the threads it had (they do not exist here). Locks another thread
/// held at the fork are made anew (that thread does not exist here either).
void forget_session_after_fork() {
  detail::g_profiling.store(0, std::memory_order_relaxed);
  detail::g_epoch.store(0, std::memory_order_relaxed);
  detail::g_nvtx.store(false, std::memory_order_relaxed);
  new (&g_active_mutex) std::mutex();
  g_active = nullptr;
  auto& r = detail::registry();
  new (&r.mutex) std::mutex();
  r.epoch = 0;
}

void watch_forks() {
  static std::once_flag once;
  std::call_once(once, [] { ::pthread_atfork(nullptr, nullptr, forget_session_after_fork); });
}
// Set while start_environment_session constructs its Profiler.
thread_local bool t_from_environment = false;

/// What a program without mainboard::mainboard cannot collect, in the words of `unavailable`.
std::vector<std::string> beyond_spans(const Collection& c) {
  const char* link = "this program links only mainboard::spans (link mainboard::mainboard)";
  std::vector<std::string> out;
  if (has(c.features, Feature::device)) out.push_back(std::string("device: not sampled: ") + link);
  if (has(c.features, Feature::gpu_activity))
    out.push_back(std::string("gpu_activity: not traced: ") + link);
  if (c.machine_snapshot) out.push_back(std::string("machine: no snapshot: ") + link);
  return out;
}

/// Ticks to the monotonic clock for a session, one rate both ways: what exit() turns a caller's
/// nanoseconds into and what freeze() turns every tick back with. Where the hardware states
/// the counter's rate (Arm's CNTFRQ_EL0) that rate is exact; a rate measured between two
/// calibration points of a short session is not (the two clocks are read one after the other,
/// and under an emulator microseconds apart: 10% of a 300 µs session). The TSC states none,
/// so it is measured between the session's start and `to`.
core::ClockMap session_clock(std::uint64_t from_ticks, std::int64_t from_ns, std::uint64_t to_ticks,
                             std::int64_t to_ns) {
  if (auto hz = detail::tick_stated_hz())
    return core::ClockMap::at_rate(static_cast<std::int64_t>(from_ticks), from_ns,
                                   1e9 / static_cast<double>(hz));
  return core::ClockMap(static_cast<std::int64_t>(from_ticks), from_ns,
                        static_cast<std::int64_t>(to_ticks), to_ns);
}

}  // namespace

namespace detail {

Profiler* start_environment_session(const Collection& collection) {
  t_from_environment = true;
  try {
    auto* p = new Profiler(collection);
    t_from_environment = false;
    return p;
  } catch (...) {
    t_from_environment = false;
    throw;
  }
}

}  // namespace detail

Profiler::Profiler(const Collection& collection) : session_(std::make_unique<Session>()) {
  watch_forks();
  auto& s = *session_;
  s.collection = collection;
  s.pid = ::getpid();
  s.from_environment = t_from_environment;
  {
    std::unique_lock<std::mutex> lock(g_active_mutex);
    if (g_active && g_active->session_->from_environment && !s.from_environment) {
      // The program starts its own session: the one from the environment gives way (what it
      // recorded so far is still saved at exit).
      Profiler* environment = g_active;
      lock.unlock();
      environment->stop();
      lock.lock();
    }
    if (g_active)
      throw Error(
          "a profiling session is already active in this process; stop it first "
          "(only one Profiler can be active at a time)");
    g_active = this;
  }
  auto leave = [this] {
    std::lock_guard<std::mutex> lock(g_active_mutex);
    if (g_active == this) g_active = nullptr;
  };
  auto refuse = [&](const std::string& what) {
    if (collection.strict) throw Error(what);
    s.unavailable.push_back(what);
  };

  // Reset the hot path's globals before anything can read them.
  static std::atomic<std::uint64_t> next_epoch{1};
  s.epoch = next_epoch.fetch_add(1);
  detail::g_budget.store(static_cast<std::int64_t>(collection.max_spans),
                         std::memory_order_relaxed);
  detail::g_open_outermost.store(0, std::memory_order_relaxed);

  try {
    if (has(collection.features, Feature::stacks))
      refuse(
          "stacks: stack sampling applies to Sampler::run and attach, not an in-process session");
    if (!s.from_environment) {
      if (auto factory = detail::session_extension()) {
        detail::SessionContext context{&detail::g_open_outermost};
        s.extension = factory(collection, context, s.unavailable);
      } else {
        for (auto& why : beyond_spans(collection))
          refuse(why);
      }
    }
  } catch (...) {
    leave();
    throw;
  }

  const char* nvtx_tool = std::getenv("NVTX_INJECTION64_PATH");
  bool nvtx = collection.nvtx == NvtxBridge::always ||
              (collection.nvtx == NvtxBridge::when_attached && nvtx_tool && *nvtx_tool);
#ifndef MAINBOARD_HAVE_NVTX
  if (nvtx) {
    s.unavailable.push_back(
        "nvtx: spans cannot appear in the attached NVTX tool: this build has no NVTX headers");
    nvtx = false;
  }
#endif

  // Start: register threads for this session, then open the gate.
  {
    auto& r = detail::registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.epoch = s.epoch;
    r.threads.clear();
    r.idle_tracks.clear();
  }
  detail::g_count_open.store(s.extension && s.extension->count_open_spans(),
                             std::memory_order_relaxed);
  detail::g_nvtx.store(nvtx, std::memory_order_relaxed);
  // Read before the clock pair below: anything between the two skews the span clock's rate.
  s.command = this_program();
  s.names_refused_at_start = detail::g_names_refused.load(std::memory_order_relaxed);
  s.start_ns = core::monotonic_ns();
  s.start_ticks = detail::ticks();
  s.active = true;
  detail::g_epoch.store(s.epoch, std::memory_order_release);
  if (has(collection.features, Feature::spans))
    detail::g_profiling.store(1, std::memory_order_release);
}

std::unique_ptr<Profiler> Profiler::under(const Collection& collection) {
  return std::make_unique<Profiler>(collection);
}

Profiler::~Profiler() {
  try {
    stop();
  } catch (...) {
    // A destructor never throws; what stop() could not finish is lost with the session.
  }
}

bool Profiler::active() const {
  return session_ && session_->active;
}

void Profiler::stop_sampler() {
  if (session_->extension) session_->extension->stop_sampler();
}

void Profiler::sample() {
  if (session_ && session_->active && session_->extension) session_->extension->sample();
}

SpanToken Profiler::enter(std::string_view name) {
  if (!active()) return {};
  auto* t = detail::span_enter(detail::intern(name));
  if (!t) return {};
  return SpanToken{static_cast<std::uint32_t>(t->stack.size()), session_->epoch};
}

void Profiler::exit(const SpanToken& token) {
  if (!active() || token.session != session_->epoch || token.depth == 0) return;
  // The token's span and any opened inside it since.
  auto* t = detail::current_state();
  if (!t) return;
  while (!t->stack.empty() && t->stack.size() >= token.depth)
    detail::span_exit(t);
}

void Profiler::exit(const SpanToken& token, std::int64_t wall_ns) {
  if (!active() || token.session != session_->epoch || token.depth == 0) return;
  auto* t = detail::current_state();
  if (!t) return;
  while (!t->stack.empty() && t->stack.size() > token.depth)
    detail::span_exit(t);
  if (t->stack.size() != token.depth) return;
  // Nanoseconds to ticks at the rate the session's result will turn them back with.
  const auto clock = session_clock(session_->start_ticks, session_->start_ns, detail::ticks(),
                                   core::monotonic_ns());
  auto duration = static_cast<std::uint64_t>(
      static_cast<double>(std::max<std::int64_t>(wall_ns, 0)) / clock.rate());
  detail::span_exit_after(t, std::min(duration, detail::kUntilNow - 1));
}

namespace {

/// The span clock and its rate, as freeze() turned ticks into nanoseconds.
void describe_clock(Profile& p, const core::ClockMap& clock) {
  p.span_clock = detail::tick_source();
  if (clock.rate() > 0) p.span_clock_hz = 1e9 / clock.rate();
}

/// What the session's bounds left out, said in `unavailable`: spans whose path tree was full,
/// names refused past the distinct names kept.
void note_span_bounds(Profile& p, const std::vector<std::shared_ptr<detail::ThreadState>>& threads,
                      std::uint64_t names_refused_at_start) {
  std::uint64_t unattributed = 0;
  for (const auto& t : threads)
    unattributed += t->unattributed.load(std::memory_order_relaxed);
  if (unattributed)
    p.unavailable.push_back(
        "spans: " + std::to_string(unattributed) +
        " spans were timed but kept in no path: a thread's path tree holds at most " +
        std::to_string(detail::ThreadState::kMaxPaths) + " distinct paths");
  auto refused = detail::g_names_refused.load(std::memory_order_relaxed) - names_refused_at_start;
  if (refused)
    p.unavailable.push_back(
        "spans: " + std::to_string(refused) + " spans had a name past the " +
        std::to_string(detail::kMaxNames) + " distinct names kept, and are counted under \"" +
        detail::other_names() +
        "\" (a name that carries a counter or an id makes a new one each time)");
}

/// The per-thread path trees and stored events of a session, on the monotonic clock.
std::unique_ptr<Profile> freeze(const std::vector<std::shared_ptr<detail::ThreadState>>& threads,
                                const core::ClockMap& clock) {
  auto to_ns = [&](std::uint64_t t) { return clock(static_cast<std::int64_t>(t)); };
  auto span_ns = [&](std::uint64_t ticks) {
    return clock.length(static_cast<std::int64_t>(ticks));
  };
  auto profile = std::make_unique<Profile>();
  std::unordered_map<std::string, std::uint32_t> path_index;
  for (const auto& t : threads) {
    profile->threads.push_back({t->index, t->tid, t->name});
    std::size_t n = t->nodes.size();
    // A path names every span it is inside, so spelling each in full costs the square of the
    // depth (10 000 nested spans: 510 MB). A path deeper than kHead + kTail names keeps its
    // first kHead and last kTail with the count of those between: "a/…/[9969 more]/…/z".
    constexpr std::uint32_t kHead = 16, kTail = 15;
    std::vector<std::uint32_t> depth(n, 0), head_of(n, 0), node_global(n, 0);
    std::vector<std::string> short_path(n);  // the whole path, for depth ≤ kHead + kTail only
    std::string path;
    for (std::size_t i = 1; i < n; ++i) {
      const auto& node = t->nodes[i];
      // Parents come before their children, so the parent's path is known.
      std::uint32_t parent = node.parent;
      depth[i] = parent == 0 ? 1 : depth[parent] + 1;
      head_of[i] = depth[i] == kHead  ? static_cast<std::uint32_t>(i)
                   : depth[i] > kHead ? head_of[parent]
                                      : 0;
      if (depth[i] <= kHead + kTail) {
        path = parent == 0 ? std::string(node.name) : short_path[parent] + "/" + node.name;
        short_path[i] = path;
      } else {
        std::vector<const char*> tail;
        for (std::uint32_t at = static_cast<std::uint32_t>(i); tail.size() < kTail;
             at = t->nodes[at].parent)
          tail.push_back(t->nodes[at].name);
        path = short_path[head_of[i]] + "/[" + std::to_string(depth[i] - kHead - kTail) + " more]";
        for (auto it = tail.rbegin(); it != tail.rend(); ++it)
          (path += '/') += *it;
      }
      auto [it, inserted] =
          path_index.emplace(path, static_cast<std::uint32_t>(profile->paths.size()));
      if (inserted) {
        profile->paths.push_back(path);
        SpanStat stat;
        stat.path = path;
        stat.name = node.name;
        profile->span_stats.push_back(stat);
      }
      node_global[i] = it->second;
      auto& stat = profile->span_stats[it->second];
      auto calls = node.calls.load(std::memory_order_relaxed);
      if (calls == 0) continue;
      auto min = span_ns(node.min.load(std::memory_order_relaxed));
      auto max = span_ns(node.max.load(std::memory_order_relaxed));
      stat.min_ns = stat.calls ? std::min(stat.min_ns, min) : min;
      stat.max_ns = std::max(stat.max_ns, max);
      stat.calls += calls;
      stat.total_ns += span_ns(node.total.load(std::memory_order_relaxed));
      stat.self_ns += span_ns(node.self.load(std::memory_order_relaxed));
    }
    std::size_t events = t->events.size();
    profile->spans.reserve(profile->spans.size() + events);
    for (std::size_t i = 0; i < events; ++i) {
      const auto& e = t->events[i];
      profile->spans.push_back({node_global[e.node], t->index, to_ns(e.start), to_ns(e.end)});
    }
    profile->dropped_spans += t->dropped.load(std::memory_order_relaxed);
  }
  // Paths never closed (still open at stop) have no calls: keep only observed evidence.
  std::vector<std::uint32_t> remap(profile->paths.size());
  std::vector<std::string> paths;
  std::vector<SpanStat> stats;
  for (std::size_t i = 0; i < profile->paths.size(); ++i) {
    if (profile->span_stats[i].calls == 0) continue;
    remap[i] = static_cast<std::uint32_t>(paths.size());
    paths.push_back(profile->paths[i]);
    stats.push_back(profile->span_stats[i]);
  }
  for (auto& e : profile->spans)
    e.path = remap[e.path];
  profile->paths = std::move(paths);
  profile->span_stats = std::move(stats);
  std::sort(profile->spans.begin(), profile->spans.end(),
            [](const SpanEvent& a, const SpanEvent& b) { return a.start_ns < b.start_ns; });
  return profile;
}

}  // namespace

void Profiler::stop() {
  auto& s = *session_;
  if (!s.active) return;
  if (s.pid != ::getpid()) {  // a copy in a forked child: nothing of it is this process's
    s.active = false;
    (void)s.extension.release();  // its threads are the parent's: never joined here
    result_ = std::make_unique<Profile>();
    result_->pid = ::getpid();
    result_->unavailable.push_back(
        "spans: this session began in process " + std::to_string(s.pid) +
        ", which forked this one; a forked child records nothing in its parent's session "
        "(start a Profiler in the child)");
    return;
  }
  // Spans this thread still has open are closed now, at the stop, and said to be.
  std::vector<std::string> still_open;
  if (auto* t = detail::current_state(); t && t->epoch == s.epoch) {
    while (t->stack.size() > t->ghosts) {
      std::string path;
      for (std::size_t i = t->ghosts; i < t->stack.size(); ++i) {
        const char* name = t->stack[i].node ? t->nodes[t->stack[i].node].name : nullptr;
        path += (i > t->ghosts ? "/" : "") + std::string(name ? name : "?");
      }
      still_open.push_back(path);
      detail::span_exit(t);
    }
  }
  s.stop_ticks = detail::ticks();
  s.stop_ns = core::monotonic_ns();
  detail::g_profiling.store(0, std::memory_order_release);
  detail::g_epoch.store(0, std::memory_order_release);
  detail::g_nvtx.store(false, std::memory_order_relaxed);
  if (s.extension) s.extension->stop_sampler();
  std::vector<std::shared_ptr<detail::ThreadState>> threads;
  {
    auto& r = detail::registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.epoch = 0;
    threads.swap(r.threads);
    r.idle_tracks.clear();
  }
  s.active = false;
  {
    std::lock_guard<std::mutex> lock(g_active_mutex);
    if (g_active == this) g_active = nullptr;
  }

  const auto clock = session_clock(s.start_ticks, s.start_ns, s.stop_ticks, s.stop_ns);
  auto profile = freeze(threads, clock);
  describe_clock(*profile, clock);
  profile->pid = ::getpid();
  if (profile->command.empty()) profile->command = s.command;
  profile->record_origin();
  profile->start_ns = s.start_ns;
  profile->end_ns = s.stop_ns;
  profile->unavailable = s.unavailable;
  if (!still_open.empty()) {
    std::string list;
    for (std::size_t i = still_open.size(); i-- > 0;)
      list += (list.empty() ? "" : ", ") + still_open[i];
    profile->unavailable.push_back("spans: " + std::to_string(still_open.size()) +
                                   (still_open.size() == 1 ? " span was" : " spans were") +
                                   " still open at stop and closed at the stop time: " + list);
  }
  note_span_bounds(*profile, threads, s.names_refused_at_start);
  profile->function_maps = detail::instrumented_function_maps(*profile);
  if (s.extension) {
    s.extension->finish(*profile);
    s.traced = s.extension->traced();
    s.extension.reset();
  }
  result_ = std::move(profile);
}

Profile Profiler::result() const {
  const auto& s = *session_;
  if (!s.active) return result_ ? *result_ : Profile{};
  // The thread states are written by their threads while we read: everything freeze() reads is
  // published (atomics, or storage that never moves), so what it sees is a consistent prefix.
  std::vector<std::shared_ptr<detail::ThreadState>> threads;
  {
    auto& r = detail::registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    threads = r.threads;
  }
  auto now_ticks = detail::ticks();
  auto now_ns = core::monotonic_ns();
  const auto clock = session_clock(s.start_ticks, s.start_ns, now_ticks, now_ns);
  auto profile = freeze(threads, clock);
  describe_clock(*profile, clock);
  profile->pid = ::getpid();
  if (profile->command.empty()) profile->command = s.command;
  profile->record_origin();
  profile->start_ns = s.start_ns;
  profile->end_ns = now_ns;
  profile->unavailable = s.unavailable;
  note_span_bounds(*profile, threads, s.names_refused_at_start);
  profile->function_maps = detail::instrumented_function_maps(*profile);
  if (s.extension) s.extension->peek(*profile);
  return std::move(*profile);
}

std::vector<SpanStat> Profiler::stats() const {
  return result().stats();
}
std::vector<SpanStat> Profiler::bottlenecks(std::size_t top) const {
  return result().bottlenecks(top);
}
TraceReport Profiler::trace_report(std::size_t top) const {
  return result().trace_report(top);
}
Activity Profiler::traced_activities() const {
  if (!session_) return Activity{};
  return session_->extension ? session_->extension->traced() : session_->traced;
}

void Profiler::auto_instrument(std::vector<std::string> modules) {
  detail::set_instrumented_modules(std::move(modules));
}

std::string to_string(Activity set) {
  return detail::names_of(set);
}

}  // namespace mainboard
