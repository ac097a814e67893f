#include "cli/terminal.hpp"

#include "mainboard/view.hpp"
#include "view/format.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace mainboard::cli::terminal {

namespace {

int g_pipe[2] = {-1, -1};
volatile sig_atomic_t g_ended_by = 0;
volatile sig_atomic_t g_resized = 0;
volatile sig_atomic_t g_stopped = 0;

void on_signal(int sig) {
  int saved = errno;
  if (sig == SIGWINCH)
    g_resized = 1;
  else if (sig == SIGTSTP)
    g_stopped = 1;
  else if (g_ended_by == 0)
    g_ended_by = sig;
  char c = 0;
  [[maybe_unused]] auto n = ::write(g_pipe[1], &c, 1);
  errno = saved;
}

void catch_signal(int sig, struct sigaction* old) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(sig, &sa, old);
}

}  // namespace

void write_all(int fd, const std::string& s) {
  std::size_t at = 0;
  while (at < s.size()) {
    ssize_t n = ::write(fd, s.data() + at, s.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    at += static_cast<std::size_t>(n);
  }
}

std::pair<int, int> size() {
  winsize ws{};
  if (::ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0)
    return {ws.ws_col, ws.ws_row};
  return {80, 24};
}

Area screen_area(int width_asked, const std::string& color_mode) {
  auto [w, h] = size();
  return {width_asked > 0 ? std::min(width_asked, w) : w, h, view::want_color(color_mode, 1)};
}

Area plain_area(int width_asked, const std::string& color_mode) {
  return {width_asked > 0 ? width_asked : terminal_width(1), 0, view::want_color(color_mode, 1)};
}

std::string frame(const std::vector<std::string>& lines) {
  std::string out = "\033[H";
  for (std::size_t i = 0; i < lines.size(); ++i) {
    out += lines[i] + "\033[0m\033[K";
    if (i + 1 < lines.size()) out += "\r\n";
  }
  return out + "\033[J";
}

void Screen::enter() {
  if (in_ >= 0 && ::tcgetattr(in_, &saved_) == 0) {
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    have_saved_ = ::tcsetattr(in_, TCSANOW, &raw) == 0;
  }
  // The alternate screen, the cursor hidden, the screen cleared.
  write_all(1, "\033[?1049h\033[?25l\033[H\033[2J");
  entered_ = true;
}

void Screen::leave() {
  if (!entered_) return;
  write_all(1, "\033[0m\033[?25h\033[?1049l");
  if (have_saved_) ::tcsetattr(in_, TCSANOW, &saved_);
  have_saved_ = false;
  entered_ = false;
}

Signals::Signals() {
  if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_pipe[0] = g_pipe[1] = -1;
  g_ended_by = 0;
  g_resized = 0;
  g_stopped = 0;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGTSTP}) {
    struct sigaction old {};
    catch_signal(sig, &old);
    old_.emplace_back(sig, old);
  }
}

Signals::~Signals() {
  for (auto& [sig, old] : old_)
    ::sigaction(sig, &old, nullptr);
  for (int& fd : g_pipe)
    if (fd >= 0) {
      ::close(fd);
      fd = -1;
    }
}

int Signals::ended_by() const {
  return g_ended_by;
}

bool Signals::take_resized() {
  if (!g_resized) return false;
  g_resized = 0;
  return true;
}

bool Signals::suspend_if_asked(Screen* screen) {
  if (!g_stopped) return false;
  g_stopped = 0;
  if (screen) screen->leave();
  ::signal(SIGTSTP, SIG_DFL);
  ::raise(SIGTSTP);  // stops here until SIGCONT
  catch_signal(SIGTSTP, nullptr);
  if (screen) screen->enter();
  return true;
}

int Signals::wake_fd() const {
  return g_pipe[0];
}

void Signals::wake() {
  char c = 0;
  if (g_pipe[1] >= 0) [[maybe_unused]]
    auto n = ::write(g_pipe[1], &c, 1);
}

void Signals::drain() {
  char buf[64];
  while (g_pipe[0] >= 0 && ::read(g_pipe[0], buf, sizeof buf) > 0) {
  }
}

bool Keyboard::wait(Signals& signals, std::chrono::steady_clock::time_point deadline,
                    const std::function<std::string_view(std::string_view)>& take,
                    const std::function<bool()>& done) {
  typed_ = false;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  pollfd fds[2] = {{signals.wake_fd(), POLLIN, 0}, {in_, POLLIN, 0}};
  int ready = ::poll(fds, 2, static_cast<int>(std::clamp<long long>(left.count() + 1, 0, 60000)));
  if (ready <= 0) return true;
  if (fds[0].revents & POLLIN) signals.drain();
  if (in_ < 0) return true;
  if (fds[1].revents & (POLLHUP | POLLERR | POLLNVAL)) return false;
  if (!(fds[1].revents & POLLIN)) return true;
  char buf[256];
  ssize_t n = ::read(in_, buf, sizeof buf);
  if (n == 0) return false;  // end of input: the terminal went away
  if (n < 0) return true;
  pending_.append(buf, static_cast<std::size_t>(n));
  std::string_view rest = pending_;
  while (!rest.empty() && !done()) {
    // An escape sequence cut by the read waits for its end (a lone Esc is taken as it is).
    if (rest[0] == '\033' && rest.size() == 2 && rest[1] == '[') break;
    rest = take(rest);
  }
  pending_ = std::string(rest);
  typed_ = true;
  return true;
}

}  // namespace mainboard::cli::terminal
