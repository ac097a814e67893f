#include "core/interrupts.hpp"

#include <algorithm>
#include <cerrno>

namespace mainboard::detail {
Interrupts g_interrupts;
}  // namespace mainboard::detail

namespace mainboard::core {

namespace {

void on_signal(int signal, siginfo_t* info, void*) {
  auto& g = detail::g_interrupts;
  if (g.count.fetch_add(1) == 0) {
    g.signal = signal;
    // The terminal's signals come from the kernel (SI_KERNEL); kill(2) and sigqueue(3) from a
    // process (SI_USER, SI_QUEUE).
    g.forward = info && info->si_code != SI_KERNEL;
  }
}

}  // namespace

InterruptHandlers::InterruptHandlers(std::vector<int> signals) {
  auto& g = detail::g_interrupts;
  g.count = 0;
  g.signal = 0;
  g.forward = false;
  struct sigaction action {};
  action.sa_sigaction = on_signal;
  action.sa_flags = SA_SIGINFO;  // no SA_RESTART: a wait in poll() or sleep wakes up
  sigemptyset(&action.sa_mask);
  for (int s : signals) {
    struct sigaction old {};
    if (::sigaction(s, &action, &old) == 0) old_.emplace_back(s, old);
  }
}

InterruptHandlers::~InterruptHandlers() {
  for (auto& [s, old] : old_)
    ::sigaction(s, &old, nullptr);
}

void Ending::signal_all(const std::function<std::vector<int>()>& processes, int signal) {
  for (int pid : processes())
    if (pid > 0) ::kill(pid, signal);
}

void Ending::begin(int signal, double grace_s) {
  if (stage_ > 0) return;
  first_signal_ = signal;
  stage_ = 1;
  grace_ = grace_s;
  next_ = Clock::now() +
          std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace_s));
  pending_signal_ = signal;
}

void Ending::tick(const std::function<std::vector<int>()>& processes) {
  auto& g = detail::g_interrupts;
  auto now = Clock::now();
  if (pending_signal_) {  // begin()'s signal, sent from here where the processes are known
    signal_all(processes, pending_signal_);
    pending_signal_ = 0;
  }
  int count = g.count.load();
  if (count > 0 && stage_ == 0) {
    stage_ = 1;
    interrupted_by_ = first_signal_ = g.signal.load();
    if (g.forward.load()) signal_all(processes, first_signal_);
    next_ =
        now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace_));
  }
  // Each interrupt after the first skips one wait: the second, the grace; the third, the wait
  // after SIGTERM.
  int wanted = interrupted_by_ ? std::min(count, 3) : 0;
  while (stage_ > 0 && stage_ < 3 && (stage_ < wanted || now >= next_)) {
    if (stage_ == 1 && first_signal_ != SIGTERM) {
      stage_ = 2;
      signal_all(processes, SIGTERM);
      next_ = now + std::chrono::seconds(2);
    } else {
      stage_ = 3;  // after SIGTERM's time (or the command was sent SIGTERM first)
      signal_all(processes, SIGKILL);
      next_ = Clock::time_point::max();
    }
  }
}

}  // namespace mainboard::core
