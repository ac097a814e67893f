// The sampler loop of Python stacks: a thread that reads every watched process's threads at the
// sampling rate (or, with pause, stops each process for the read: ProcessPause).
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "core/clock.hpp"
#include "sampling/python_frames.hpp"
#include "symbols/symbolizer.hpp"

namespace mainboard::sampling {

PythonPoller::PythonPoller(const PythonPollerOptions& options)
    : options_(options), period_ns_(1'000'000'000LL / std::max<std::uint32_t>(options.hz, 1)) {
  out_.wall = options.wall || options.gil;
  out_.gil = options.gil;
  next_due_ = core::monotonic_ns();
  if (!options.pause) thread_ = std::thread([this] { loop(); });
}

PythonPoller::~PythonPoller() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void PythonPoller::watch(const std::vector<std::int32_t>& pids) {
  std::lock_guard lock(mutex_);
  for (auto pid : pids)
    if (!readers_.count(pid) &&
        std::find(pending_.begin(), pending_.end(), pid) == pending_.end()) {
      pending_.push_back(pid);
      next_look_.erase(pid);  // a new watch (or a pid used again) is looked at soon
      look_every_.erase(pid);
    }
}

void PythonPoller::loop() {
  while (!stop_.load()) {
    auto next = poll();
    auto now = core::monotonic_ns();
    if (next > now) std::this_thread::sleep_for(std::chrono::nanoseconds(next - now));
  }
}

std::int64_t PythonPoller::poll() {
  auto now = core::monotonic_ns();
  if (now >= next_due_) {
    read_all();
    next_due_ += period_ns_;
    if (next_due_ < now) next_due_ = now + period_ns_;  // behind: skip rather than burst
  }
  return next_due_;
}

std::optional<int> PythonPoller::reaped(std::int32_t pid) {
  std::lock_guard lock(mutex_);
  auto it = reaped_.find(pid);
  if (it == reaped_.end()) return std::nullopt;
  return it->second;
}

void PythonPoller::read_all() {
  std::lock_guard lock(mutex_);
  auto now = core::monotonic_ns();
  // Processes not known to be Python: looked at again until they are, soon at first (a program
  // just started maps its interpreter within milliseconds, and a short one would end before a
  // second look), then four times a second.
  for (auto it = pending_.begin(); it != pending_.end();) {
    auto& when = next_look_[*it];
    if (now < when) {
      ++it;
      continue;
    }
    auto& every = look_every_[*it];
    every = every == 0 ? 10'000'000 : std::min<std::int64_t>(every * 2, 250'000'000);
    when = now + every;
    std::string why;
    auto reader = PythonReader::open(*it, &why);
    if (reader) {
      out_.interpreter_module[*it] = reader->interpreter_module();
      readers_[*it] = std::move(reader);
      it = pending_.erase(it);
      continue;
    }
    if (!why.empty()) {
      out_.notes.push_back(why);
      it = pending_.erase(it);  // Python, but not readable: said once
      continue;
    }
    if (::kill(*it, 0) != 0 && errno == ESRCH) {
      it = pending_.erase(it);
      continue;
    }
    ++it;
  }
  std::vector<PyThreadStack> threads;
  for (auto it = readers_.begin(); it != readers_.end();) {
    auto& reader = *it->second;
    auto start = core::monotonic_ns();
    // A list of threads that does not hold together is read again at once (twice): a thread
    // started or ended under the read; the next read most often finds it still.
    bool ok = false;
    // Stopped whole, or read as it runs (StackReads).
    if (!stack_reads_)
      // (With the whole process stopped for each read, no thread is stopped on its own.)
      stack_reads_ =
          std::make_unique<StackReads>(SettlePolicy{3, 2, options_.stop_torn && !options_.pause});
    if (options_.pause) {
      ProcessPause pause(it->first);
      if (pause.ended()) reaped_[it->first] = *pause.ended();
      if (pause.stopped()) ok = stack_reads_->read(reader, threads);
      if (pause.uninterruptible() && !uninterruptible_noted_) {
        uninterruptible_noted_ = true;
        out_.notes.push_back(
            "python: a thread of process " + std::to_string(it->first) +
            " was in uninterruptible sleep (D): such reads were made without stopping it");
      }
      if (!pause.stopped() && !pause.ended() && !pause.uninterruptible() && !pause_refused_) {
        pause_refused_ = true;
        out_.notes.push_back(std::string("python: cannot stop process ") +
                             std::to_string(it->first) + " to read it (" +
                             std::strerror(pause.error()) + "): read while it runs");
      }
      if (!pause.stopped() && !pause.ended()) ok = stack_reads_->read(reader, threads);
    } else {
      ok = stack_reads_->read(reader, threads);
    }
    if (!stack_reads_->refused().empty() && !stop_refused_noted_) {
      stop_refused_noted_ = true;
      out_.notes.push_back("python: cannot stop a thread of process " + std::to_string(it->first) +
                           " to read a stack that changed under every read (" +
                           stack_reads_->refused() + "): such stacks are left out");
    }
    auto end = core::monotonic_ns();
    ++out_.reads;
    out_.read_ns += end - start;
    if (!ok) {
      ++out_.dropped;
      auto& failures = failures_[it->first];
      bool gone = ::kill(it->first, 0) != 0 && errno == ESRCH;
      if (gone || ++failures >= 3) {
        // Ended, or three failures in a row: it may have run exec (a Python child starting
        // another program). Reads of an image that is gone are not torn reads.
        std::string why;
        std::unique_ptr<PythonReader> again;
        if (!gone) again = PythonReader::open(it->first, &why);
        if (!again || again->interpreter_module() != reader.interpreter_module()) {
          out_.dropped -= failures + (gone ? 1 : 0);
          out_.reads -= failures + (gone ? 1 : 0);
          failures_.erase(it->first);
          auto pid = it->first;
          it = readers_.erase(it);
          if (!gone) {
            pending_.push_back(pid);  // look again: it may become Python
            next_look_[pid] = now;
            look_every_[pid] = 0;
          }
          continue;
        }
        it->second = std::move(again);
        failures = 0;
      }
      ++it;
      continue;
    }
    failures_.erase(it->first);
    // Thread names, when a thread without one shows up: a thread enters threading's table a
    // moment after it starts running, and some never do (started from C), so the reads wait
    // 0.2 s, then twice as long each time, up to 3.2 s.
    bool unnamed = std::any_of(threads.begin(), threads.end(), [&](const PyThreadStack& t) {
      return t.tid > 0 && !out_.thread_names.count(t.tid);
    });
    if (auto& [due, wait] = next_names_[it->first]; unnamed && end >= due) {
      wait = std::clamp<std::int64_t>(wait * 2, 200'000'000, 3'200'000'000);
      due = end + wait;
      auto names = reader.thread_names();
      for (const auto& t : threads)
        if (auto n = names.find(t.thread_id); t.tid > 0 && n != names.end())
          out_.thread_names[t.tid] = n->second;
    }
    for (const auto& t : threads) {
      if (t.tid <= 0 && !t.frames.empty() && unmatched_noted_.insert(it->first).second)
        out_.notes.push_back(
            "python: a thread of process " + std::to_string(it->first) +
            " could not be matched to a thread of the kernel (its id is of the process's own PID "
            "namespace, and no thread's NSpid gives it): its Python frames are not in the "
            "profile");
      if (t.tid <= 0 || t.frames.empty()) continue;
      if (options_.gil && !t.holds_gil) continue;
      std::string key = std::to_string(it->first);
      for (const auto& f : t.frames)
        key += ';' + std::to_string(f.code) + ':' + std::to_string(f.line) + (f.entry ? "e" : "");
      auto [at, fresh] =
          stack_index_.emplace(std::move(key), static_cast<std::uint32_t>(out_.stacks.size()));
      if (fresh) {
        PythonSamples::Stack stack;
        for (const auto& f : t.frames) {
          stack.frames.push_back(reader.frame(f));
          stack.entries.push_back(f.entry);
        }
        out_.stacks.push_back(std::move(stack));
      }
      out_.threads[t.tid].emplace_back(start + (end - start) / 2, at->second);
      out_.thread_process[t.tid] = it->first;
    }
    ++it;
  }
}

bool StackReads::read_stopped(PythonReader& reader, PyThreadStack& t) {
  if (!policy_.stop_torn || t.tid <= 0 || !refused_.empty()) return false;
  auto held = core::monotonic_ns();
  ProcessPause stop(reader.pid(), t.tid);
  // Held still, its stack reads once: no frame is read twice.
  reader.set_checked(false);
  bool read = stop.stopped() && reader.read_thread(t.thread_state, t) && !t.torn;
  reader.set_checked(true);
  counts_.stopped_ns += core::monotonic_ns() - held;
  if (read) ++counts_.stacks_stopped;
  if (!stop.stopped() && !stop.ended() && !stop.uninterruptible() && stop.error())
    refused_ = std::strerror(stop.error());
  return stop.stopped();
}

bool StackReads::read(PythonReader& reader, std::vector<PyThreadStack>& threads) {
  bool ok = false;
  for (int attempt = 0; attempt < policy_.list_tries && !ok; ++attempt)
    ok = reader.read(threads, false);
  if (!ok) return false;
  std::map<std::pair<std::int32_t, std::uint64_t>, int> hot;
  for (auto& t : threads) {
    ++counts_.stack_reads;
    auto key = std::pair{reader.pid(), t.thread_state};
    auto state = t.thread_state;
    // Who held the GIL is as the list's read saw it, one moment for all threads: each thread's
    // own read comes a moment later, when another may hold it.
    struct KeepGil {
      PyThreadStack& t;
      bool held;
      ~KeepGil() { t.holds_gil = held; }
    } keep{t, t.holds_gil};
    int& stopped_left = hot[key];
    if (auto h = hot_.find(key); h != hot_.end()) stopped_left = h->second;
    if (stopped_left > 0) {
      --stopped_left;
      if (read_stopped(reader, t)) {
        if (t.torn) ++counts_.stacks_dropped;
        continue;
      }
    }
    // Without stopping it: again at once while it is torn (a stack caught mid-change most often
    // holds still the next time), then stopped.
    bool read = false;
    for (int attempt = 0; attempt <= policy_.stack_tries && !read; ++attempt) {
      if (!reader.read_thread(state, t)) break;
      if (attempt == 0 && t.torn) ++counts_.stacks_torn;
      read = !t.torn;
    }
    if (!read && t.torn && read_stopped(reader, t)) stopped_left = policy_.stopped_reads;
    if (t.torn) ++counts_.stacks_dropped;
  }
  hot_ = std::move(hot);  // threads that ended are forgotten
  return true;
}

PythonSamples PythonPoller::take() {
  std::lock_guard lock(mutex_);
  PythonSamples chunk;
  chunk.stacks = out_.stacks;
  chunk.threads = std::move(out_.threads);
  out_.threads.clear();
  chunk.thread_process = out_.thread_process;
  chunk.interpreter_module = out_.interpreter_module;
  chunk.thread_names = out_.thread_names;
  chunk.wall = out_.wall;
  chunk.gil = out_.gil;
  chunk.notes = out_.notes;
  return chunk;
}

PythonSamples PythonPoller::finish() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  if (stack_reads_) out_.counts = stack_reads_->counts();
  return std::move(out_);
}

ProcessPause::ProcessPause(std::int32_t pid, std::int32_t only_tid) : pid_(pid) {
  auto tids = only_tid ? std::vector<std::int32_t>{only_tid} : symbols::thread_ids(pid);
  // A thread in uninterruptible sleep (a read from a slow disk or NFS) stops only when that ends,
  // and the wait for it would hold the sampler as long: such a process is not stopped this time.
  // (A thread can still enter one between this look and the interrupt; that wait is the
  // system call's.)
  for (auto tid : tids)
    if (symbols::thread_state(pid, tid) == 'D') {
      uninterruptible_ = true;
      return;
    }
  std::vector<std::int32_t> seized;
  for (auto tid : tids) {
    if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) == 0) {
      seized.push_back(tid);
    } else if (!error_) {
      error_ = errno;
    }
  }
  for (auto tid : seized)
    ::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
  for (auto tid : seized) {
    int status = 0;
    pid_t r;
    do
      r = ::waitpid(tid, &status, __WALL);
    while (r < 0 && errno == EINTR);
    if (r != tid) continue;
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      if (tid == pid_) ended_ = status;  // the process is gone (and reaped by this wait)
      continue;
    }
    if (!WIFSTOPPED(status)) continue;
    // PTRACE_EVENT_STOP: our interrupt (or a group stop); otherwise a signal arrived first, and
    // is handed back when the thread is let go.
    int signal = (status >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(status);
    threads_.emplace_back(tid, signal);
  }
  if (!threads_.empty()) error_ = 0;
}

ProcessPause::~ProcessPause() {
  for (auto [tid, signal] : threads_)
    ::ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void*>(static_cast<long>(signal)));
}

}  // namespace mainboard::sampling
