#include "mainboard/profiler.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "core/clock.hpp"
#include "core/log.hpp"
#include "core/text.hpp"
#include "mainboard/error.hpp"
#include "mainboard/machine.hpp"
#include "profiling/instrument.hpp"
#include "profiling/session.hpp"

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

ThreadState* span_enter(const char* name) noexcept {
  std::uint64_t epoch = g_epoch.load(std::memory_order_acquire);
  if (epoch == 0) return nullptr;
  ThreadState* t = t_local.current.get();
  if (!t || t->epoch != epoch) {
    t = register_thread();
    if (!t) return nullptr;
  }
  std::uint32_t parent = t->stack.empty() ? 0 : t->stack.back().node;
  std::uint32_t node = t->child(parent, name);
  if (t->stack.empty() && g_count_open.load(std::memory_order_relaxed))
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

void span_exit(ThreadState* t) noexcept {
  std::uint64_t now = ticks();
  if (t->stack.empty()) return;
  auto open = t->stack.back();
  t->stack.pop_back();
#ifdef MAINBOARD_HAVE_NVTX
  if (open.nvtx) [[unlikely]]
    nvtxRangePop();
#endif
  bool outermost = t->stack.empty();
  // A span of an ended session only unwinds its stack.
  if (t->epoch != g_epoch.load(std::memory_order_relaxed)) return;
  if (outermost && g_count_open.load(std::memory_order_relaxed))
    g_open_outermost.fetch_sub(1, std::memory_order_relaxed);
  std::uint64_t duration = now - open.start;
  if (!outermost) t->stack.back().child += duration;
  if (open.node == 0) return;  // the path tree was full
  PathNode& n = t->nodes[open.node];
  auto relaxed = std::memory_order_relaxed;
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

namespace {

/// Names opened with Profiler::enter live as long as the process: a stale span may still hold
/// one, and there are few distinct names.
const char* intern(std::string_view name) {
  static std::mutex mutex;
  static std::set<std::string, std::less<>> names;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = names.find(name);
  if (it == names.end()) it = names.emplace(name).first;
  return it->c_str();
}

}  // namespace

}  // namespace detail

namespace {

std::mutex g_active_mutex;
Profiler* g_active = nullptr;

// A session started from the environment (MAINBOARD_PROFILE, set by `mainboard profile run`):
// it records the spans of the whole program and saves them at exit.
Profiler* g_auto = nullptr;
std::string* g_auto_output = nullptr;
std::atomic<bool> g_exiting{false};

void save_auto_session() {
  if (!g_auto || !g_auto_output) return;
  g_exiting = true;  // statics such as Machine::instance() may be gone: no machine snapshot
  try {
    g_auto->stop();
    g_auto->result().save(*g_auto_output);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mainboard: cannot save the profile for `mainboard profile run`: %s\n",
                 e.what());
  }
}

/// MAINBOARD_PROFILE="out=/dir/spans-%p.json,max_spans=100000": %p becomes this process's id.
const bool g_autostarted = [] {
  const char* spec = std::getenv("MAINBOARD_PROFILE");
  if (!spec || !*spec) return false;
  try {
    std::string out;
    Collection c;
    c.features = Feature::spans;
    for (auto item : core::split(spec, ',')) {
      auto eq = item.find('=');
      if (eq == std::string_view::npos) continue;
      auto key = item.substr(0, eq), value = item.substr(eq + 1);
      if (key == "out")
        out = std::string(value);
      else if (key == "max_spans")
        if (auto n = core::parse_u64(value)) c.max_spans = *n;
    }
    auto p = out.find("%p");
    if (p != std::string::npos) out.replace(p, 2, std::to_string(::getpid()));
    if (out.empty()) return false;
    g_auto_output = new std::string(out);
    g_auto = new Profiler(c);  // lives until exit, like the process it profiles
    std::atexit(save_auto_session);
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mainboard: MAINBOARD_PROFILE is set but no session could start: %s\n",
                 e.what());
    return false;
  }
}();

}  // namespace

void Profiler::Session::take_sample() {
  if (!gpu) return;
  DeviceSample s;
  s.t_ns = core::monotonic_ns();
  s.gpu = gpu->info().index;
  auto pid = static_cast<std::uint32_t>(::getpid());
  for (const auto& p : gpu->processes())
    if (p.pid == pid && p.used_memory_bytes)
      s.process_memory_bytes = s.process_memory_bytes.value_or(0) + *p.used_memory_bytes;
  auto mem = gpu->memory();
  if (mem.supported && mem.used_bytes) s.device_memory_used_bytes = mem.used_bytes;
  auto util = gpu->utilization();
  if (util.supported) {
    s.utilization_pct = util.compute_pct;
    s.memory_utilization_pct = util.memory_pct;
  }
  std::lock_guard<std::mutex> lock(samples_mutex);
  samples.push_back(s);
}

Profiler::Profiler(const Collection& collection) : session_(std::make_unique<Session>()) {
  auto& s = *session_;
  s.collection = collection;
  {
    std::unique_lock<std::mutex> lock(g_active_mutex);
    if (g_active && g_active == g_auto && this != g_auto) {
      // The program starts its own session: the one from the environment gives way (what it
      // recorded so far is still saved at exit).
      lock.unlock();
      g_auto->stop();
      lock.lock();
    }
    if (g_active)
      throw Error(
          "a profiling session is already active in this process; stop it first "
          "(only one Profiler can be active at a time)");
    g_active = this;
  }
  // The machine is needed for GPU sampling, and for the snapshot at stop.
  s.machine = collection.machine;
  if (!s.machine && has(collection.features, Feature::device)) s.machine = &Machine::instance();

  auto refuse = [&](const std::string& what) {
    if (collection.strict) {
      std::lock_guard<std::mutex> lock(g_active_mutex);
      g_active = nullptr;
      throw Error(what);
    }
    s.unavailable.push_back(what);
  };
  if (has(collection.features, Feature::device)) {
    const auto& gpus = s.machine->gpus();
    if (collection.device_index < gpus.size())
      s.gpu = gpus[collection.device_index];
    else
      refuse("device: no GPU at index " + std::to_string(collection.device_index) + " (" +
             std::to_string(gpus.size()) + " found)");
  }
  if (has(collection.features, Feature::gpu_activity)) {
    std::vector<std::string> why;
    s.tracer = detail::GpuTracer::start(collection.activities, collection.max_activities, why);
    if (!s.tracer && collection.strict) {
      refuse(why.empty() ? "gpu_activity: unavailable" : why.back());
    }
    s.unavailable.insert(s.unavailable.end(), why.begin(), why.end());
  }
  if (has(collection.features, Feature::stacks))
    refuse("stacks: stack sampling applies to Profiler::run and attach, not an in-process session");

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

  // Start: reset the globals, then open the gate.
  static std::atomic<std::uint64_t> next_epoch{1};
  s.epoch = next_epoch.fetch_add(1);
  {
    auto& r = detail::registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.epoch = s.epoch;
    r.threads.clear();
  }
  detail::g_budget.store(static_cast<std::int64_t>(collection.max_spans),
                         std::memory_order_relaxed);
  detail::g_open_outermost.store(0, std::memory_order_relaxed);
  detail::g_count_open.store(s.gpu != nullptr, std::memory_order_relaxed);
  detail::g_nvtx.store(nvtx, std::memory_order_relaxed);
  s.start_ns = core::monotonic_ns();
  s.start_ticks = detail::ticks();
  s.active = true;
  detail::g_epoch.store(s.epoch, std::memory_order_release);
  if (has(collection.features, Feature::spans))
    detail::g_profiling.store(1, std::memory_order_release);

  if (s.gpu) {
    auto interval =
        std::chrono::milliseconds(std::max<std::uint32_t>(collection.sample_interval_ms, 1));
    s.sampler = std::thread([this, interval] {
      auto& ss = *session_;
      std::unique_lock<std::mutex> lock(ss.sampler_mutex);
      while (!ss.sampler_stop) {
        ss.sampler_wake.wait_for(lock, interval, [&] { return ss.sampler_stop; });
        if (ss.sampler_stop) break;
        // Only while some span is open: an idle process records nothing.
        if (detail::g_open_outermost.load(std::memory_order_relaxed) > 0) {
          lock.unlock();
          ss.take_sample();
          lock.lock();
        }
      }
    });
  }
}

std::unique_ptr<Profiler> Profiler::under(const Collection& collection) {
  return std::make_unique<Profiler>(collection);
}

Profiler::~Profiler() {
  try {
    stop();
  } catch (const std::exception& e) {
    core::log().warn("profiler: stopping failed: {}", e.what());
  }
}

bool Profiler::active() const {
  return session_ && session_->active;
}

void Profiler::stop_sampler() {
  auto& s = *session_;
  {
    std::lock_guard<std::mutex> lock(s.sampler_mutex);
    s.sampler_stop = true;
  }
  s.sampler_wake.notify_all();
  if (s.sampler.joinable()) s.sampler.join();
}

void Profiler::sample() {
  if (session_ && session_->active) session_->take_sample();
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

void Profiler::stop() {
  auto& s = *session_;
  if (!s.active) return;
  s.stop_ticks = detail::ticks();
  s.stop_ns = core::monotonic_ns();
  detail::g_profiling.store(0, std::memory_order_release);
  detail::g_epoch.store(0, std::memory_order_release);
  detail::g_nvtx.store(false, std::memory_order_relaxed);
  stop_sampler();
  std::vector<std::shared_ptr<detail::ThreadState>> threads;
  {
    auto& r = detail::registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.epoch = 0;
    threads.swap(r.threads);
  }
  s.active = false;
  {
    std::lock_guard<std::mutex> lock(g_active_mutex);
    if (g_active == this) g_active = nullptr;
  }

  detail::GpuTraceResult trace;
  if (s.tracer) {
    s.traced = s.tracer->traced();
    trace = s.tracer->finish();
    s.tracer.reset();
  }

  // Ticks to the monotonic clock through the two calibration points.
  const core::ClockMap clock(static_cast<std::int64_t>(s.start_ticks), s.start_ns,
                             static_cast<std::int64_t>(s.stop_ticks), s.stop_ns);
  auto to_ns = [&](std::uint64_t t) { return clock(static_cast<std::int64_t>(t)); };
  auto span_ns = [&](std::uint64_t ticks) { return clock.length(static_cast<std::int64_t>(ticks)); };

  auto profile = std::make_unique<Profile>();
  profile->pid = ::getpid();
  profile->start_ns = s.start_ns;
  profile->end_ns = s.stop_ns;
  profile->unavailable = s.unavailable;
  std::map<std::string, std::uint32_t> path_index;
  for (const auto& t : threads) {
    profile->threads.push_back({t->index, t->tid, t->name});
    std::size_t n = t->nodes.size();
    std::vector<std::string> node_path(n);
    std::vector<std::uint32_t> node_global(n, 0);
    for (std::size_t i = 1; i < n; ++i) {
      const auto& node = t->nodes[i];
      // Parents come before their children, so the parent's path is known.
      node_path[i] =
          node.parent == 0 ? std::string(node.name) : node_path[node.parent] + "/" + node.name;
      auto [it, inserted] =
          path_index.emplace(node_path[i], static_cast<std::uint32_t>(profile->paths.size()));
      if (inserted) {
        profile->paths.push_back(node_path[i]);
        SpanStat stat;
        stat.path = node_path[i];
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
  {
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
  }
  std::sort(profile->spans.begin(), profile->spans.end(),
            [](const SpanEvent& a, const SpanEvent& b) { return a.start_ns < b.start_ns; });
  {
    std::lock_guard<std::mutex> lock(s.samples_mutex);
    profile->device_samples = std::move(s.samples);
  }
  profile->activity_names = std::move(trace.names);
  profile->activities = std::move(trace.activities);
  profile->dropped_activities = trace.dropped;
  detail::name_instrumented_functions(*profile);
  try {
    if (s.machine)
      profile->machine = s.machine->snapshot({.toolchain = false});
    else if (!g_exiting)
      profile->machine = Machine::instance().snapshot({.toolchain = false});
  } catch (const std::exception& e) {
    core::log().debug("profiler: no machine snapshot: {}", e.what());
  }
  result_ = std::move(profile);
}

const Profile& Profiler::result() {
  stop();
  return *result_;
}

std::vector<SpanStat> Profiler::stats() {
  return result().stats();
}
std::vector<SpanStat> Profiler::bottlenecks(std::size_t top) {
  return result().bottlenecks(top);
}
TraceReport Profiler::trace_report(std::size_t top) {
  return result().trace_report(top);
}
Activity Profiler::traced_activities() const {
  if (!session_) return Activity{};
  return session_->tracer ? session_->tracer->traced() : session_->traced;
}
std::string Profiler::report() {
  return result().report();
}

std::string to_string(Activity set) {
  static constexpr std::pair<Activity, const char*> kNames[] = {
      {Activity::kernel, "kernel"},     {Activity::memcpy, "memcpy"},
      {Activity::memset, "memset"},     {Activity::synchronization, "synchronization"},
      {Activity::overhead, "overhead"}, {Activity::counters, "counters"},
  };
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if (!has(set, bit)) continue;
    if (!out.empty()) out += "|";
    out += name;
  }
  return out;
}
void Profiler::show(bool color) {
  result().show(color);
}

}  // namespace mainboard
