#pragma once

// How `meter`, `profile run` and `profile attach` are asked to stop (Ctrl-C, `kill`, Slurm's
// scancel and time limits), and how a run then ends the command it started: the signal passed
// on, a grace period for a program that handles it (a checkpoint to save), then SIGTERM, then
// SIGKILL — or sooner, on a second and a third signal.

#include <signal.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <vector>

namespace mainboard::detail {

/// What the handlers installed by InterruptHandlers saw.
struct Interrupts {
  std::atomic<int> count{0};   ///< signals received
  std::atomic<int> signal{0};  ///< the first one
  /// The first one came from a process (kill, a job scheduler), not from the terminal, which
  /// sends Ctrl-C to the whole foreground group, the command included: it is passed on.
  std::atomic<bool> forward{false};
};
extern Interrupts g_interrupts;

}  // namespace mainboard::detail

namespace mainboard::core {

/// Catches `signals` (SIGINT, SIGTERM, SIGHUP) into detail::g_interrupts while it lives (the
/// count starts from zero), and puts back what was there before.
class InterruptHandlers {
 public:
  explicit InterruptHandlers(std::vector<int> signals);
  ~InterruptHandlers();
  InterruptHandlers(const InterruptHandlers&) = delete;
  InterruptHandlers& operator=(const InterruptHandlers&) = delete;

 private:
  std::vector<std::pair<int, struct sigaction>> old_;
};

/// The end of a command this process started, step by step, driven by tick() from the loop that
/// waits for it: on the first interrupt the signal is passed on to every process of the command
/// (when it came from a process); after `grace` (or on a second interrupt) SIGTERM; two seconds
/// later (or on a third) SIGKILL. begin() starts the same without an interrupt (a timeout).
class Ending {
 public:
  /// `grace_s`: how long a command may take to end after the first interrupt.
  explicit Ending(double grace_s) : grace_(grace_s) {}
  /// Starts ending now with `signal`, SIGKILL after `grace_s`.
  void begin(int signal, double grace_s);
  /// Acts on new interrupts and on deadlines; `processes()` lists the command's processes now.
  void tick(const std::function<std::vector<int>()>& processes);
  bool began() const { return stage_ > 0; }
  /// The signal of the interrupt that began it (0: begin(), or none).
  int interrupted_by() const { return interrupted_by_; }

 private:
  using Clock = std::chrono::steady_clock;
  void signal_all(const std::function<std::vector<int>()>& processes, int signal);
  double grace_;
  int seen_ = 0;
  int stage_ = 0;  // 0 running, 1 asked, 2 SIGTERM sent, 3 SIGKILL sent
  int first_signal_ = 0;
  int interrupted_by_ = 0;
  int pending_signal_ = 0;
  Clock::time_point next_{Clock::time_point::max()};
};

}  // namespace mainboard::core
