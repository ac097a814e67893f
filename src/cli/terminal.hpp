// What the full-screen views (`top`, `profile top`) share: the terminal taken and given back,
// the signals they answer (through a pipe that poll() watches beside the keyboard), and a frame
// drawn over the last one.
#pragma once

#include <signal.h>
#include <termios.h>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mainboard::cli::terminal {

/// Writes all of `s` to `fd` (short writes and EINTR retried; an error drops the rest).
void write_all(int fd, const std::string& s);

/// The terminal's size on stdout: 80 × 24 when it cannot say.
std::pair<int, int> size();

/// What a frame is drawn in: columns, lines (0: as many as it takes) and colour.
struct Area {
  int width = 80;
  int height = 0;
  bool color = false;
};
/// The terminal's screen: its size (the width asked for, --width, where smaller), colour as
/// --color says (`color_mode`).
Area screen_area(int width_asked, const std::string& color_mode);
/// Off a screen (a pipe, TERM=dumb, --once): the width asked for, else the terminal's or 80;
/// no height.
Area plain_area(int width_asked, const std::string& color_mode);

/// The lines as one write: cursor home, each line followed by erase-to-end-of-line, and the
/// rest of the screen erased, so a frame replaces the last without a flash.
std::string frame(const std::vector<std::string>& lines);

/// The terminal taken for a view: the alternate screen, the cursor hidden, keys read as typed
/// without echo (Ctrl-C and Ctrl-Z still signal). Given back in the destructor, whatever ends
/// the view; leave() and enter() around a suspension.
class Screen {
 public:
  explicit Screen(int in) : in_(in) { enter(); }
  ~Screen() { leave(); }
  Screen(const Screen&) = delete;
  Screen& operator=(const Screen&) = delete;
  void enter();
  void leave();

 private:
  int in_;
  termios saved_{};
  bool have_saved_ = false;
  bool entered_ = false;
};

/// SIGINT, SIGTERM, SIGHUP, SIGWINCH and SIGTSTP caught while it lives, the old handlers put
/// back after. Each signal also writes to a pipe, so that poll() on wake_fd() returns for it.
class Signals {
 public:
  Signals();
  ~Signals();
  Signals(const Signals&) = delete;
  Signals& operator=(const Signals&) = delete;
  /// The first of SIGINT, SIGTERM, SIGHUP received, or 0.
  int ended_by() const;
  /// Whether the window changed size since the last call.
  bool take_resized();
  /// Ctrl-Z since the last call: gives the terminal back (`screen`), stops this process, and
  /// takes the terminal again when it is continued. True when that happened (redraw).
  bool suspend_if_asked(Screen* screen);
  int wake_fd() const;
  /// Wakes a wait() from another thread (new data for the screen).
  void wake();
  /// Empties the pipe after poll() said it had something.
  void drain();

 private:
  std::vector<std::pair<int, struct sigaction>> old_;
};

/// Keys typed, one at a time (an escape sequence whole, even when a read cut it).
class Keyboard {
 public:
  explicit Keyboard(int in) : in_(in) {}
  int fd() const { return in_; }
  /// Waits until `deadline`, a key or a signal. Each key read goes to `take`, which returns what
  /// is left after the key it took; it stops when `done()` says so. False when the terminal went
  /// away (the view should end).
  bool wait(Signals& signals, std::chrono::steady_clock::time_point deadline,
            const std::function<std::string_view(std::string_view)>& take,
            const std::function<bool()>& done);
  /// Whether the last wait() took a key.
  bool typed() const { return typed_; }

 private:
  int in_;
  std::string pending_;
  bool typed_ = false;
};

}  // namespace mainboard::cli::terminal
