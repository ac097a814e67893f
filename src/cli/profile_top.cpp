// `mainboard profile top PID` and `mainboard profile top -- CMD ARGS…`: py-spy top on the
// project's sampler. The sampling runs on a thread of its own (Sampler::watch), handing each
// interval's profile to the screen's loop, which reads the keys.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "core/atomic_file.hpp"
#include "core/process.hpp"
#include "core/text.hpp"
#include "mainboard/error.hpp"
#include "mainboard/view.hpp"
#include "symbols/symbolizer.hpp"
#include "view/format.hpp"
#include "view/profile_top.hpp"

namespace mainboard::cli {

namespace {

const std::vector<std::string>& profile_top_sort_keys() {
  static const std::vector<std::string> kKeys = {"own", "total", "own_time", "total_time"};
  return kKeys;
}

/// The program's threads now: name (comm) and state.
std::vector<view::ThreadNow> threads_of(std::int32_t pid) {
  std::vector<view::ThreadNow> out;
  for (auto tid : symbols::thread_ids(pid)) {
    view::ThreadNow t;
    t.tid = tid;
    t.state = symbols::thread_state(pid, tid);
    t.name = std::string(core::trim(symbols::read_proc_file(
        "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm")));
    out.push_back(std::move(t));
  }
  return out;
}

/// Starts `argv` with its streams on `output` (a file: the screen is the view's) and its input
/// from /dev/null (the keys are the view's). Throws CommandError (127/126) as `profile run`.
pid_t launch(const std::vector<std::string>& argv, int output) {
  core::check_arguments(argv);
  const char* path = std::getenv("PATH");
  auto program = argv[0].find('/') != std::string::npos
                     ? std::optional<std::string>(argv[0])
                     : core::find_program(argv[0], path ? path : "/usr/local/bin:/usr/bin:/bin");
  if (!program) core::throw_not_runnable(argv[0]);
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0)
    throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  pid_t pid = ::fork();
  if (pid < 0) throw Error(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(report[0]);
    if (null >= 0) ::dup2(null, 0);
    if (output >= 0) {
      ::dup2(output, 1);
      ::dup2(output, 2);
    }
    ::execv(program->c_str(), args.data());
    int e = errno;
    [[maybe_unused]] auto n = ::write(report[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(report[1]);
  if (null >= 0) ::close(null);
  int exec_errno = 0;
  ssize_t n;
  while ((n = ::read(report[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (n == sizeof exec_errno) {
    ::waitpid(pid, nullptr, 0);
    core::throw_exec_failed(argv[0], exec_errno);
  }
  return pid;
}

/// Ends a launched program as `profile run` ends one: `first` (the signal that ended the view,
/// or SIGTERM), SIGTERM after `grace_s`, SIGKILL two seconds later. Its exit status.
int end_program(pid_t pid, int first, double grace_s) {
  auto reaped = [&](int& status) { return ::waitpid(pid, &status, WNOHANG) == pid; };
  int status = 0;
  if (reaped(status)) return core::exit_status(status).exit_code;
  if (first) ::kill(pid, first);
  using clock = std::chrono::steady_clock;
  auto step = [&](double seconds) {
    auto until = clock::now() + std::chrono::duration_cast<clock::duration>(
                                    std::chrono::duration<double>(seconds));
    while (clock::now() < until) {
      if (reaped(status)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  };
  if (step(grace_s)) return core::exit_status(status).exit_code;
  ::kill(pid, SIGTERM);
  if (step(2)) return core::exit_status(status).exit_code;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return core::exit_status(status).exit_code;
}

}  // namespace

void ProfileTop::declare(CLI::App& cmd) {
  options.hz = 100;
  cmd.add_option("--hz", options.hz, "stack samples per second, 1 to 100000")
      ->capture_default_str()
      ->check(number(1, 100000))
      ->type_name("HZ");
  cmd.add_option("--interval", interval_s, "seconds between refreshes")
      ->capture_default_str()
      ->check(number(0.1, 3600))
      ->type_name("S");
  cmd.add_flag("--native", native,
               "also the native frames of C extensions and libraries (by default a Python "
               "program's time in them is its Python caller's)");
  cmd.add_flag("--wall", options.wall,
               "Python threads whether they run or wait (sleep, lock, I/O), not only on a CPU");
  cmd.add_flag("--gil", options.gil, "at each tick only the Python thread holding the GIL");
  cmd.add_flag("--nonblocking", options.nonblocking,
               "never stop the program (a stack that changes under every read is left out)");
  cmd.add_flag_callback(
      "--no-children", [this] { options.children = false; },
      "only the process itself, not the processes it starts");
  cmd.add_option("--sort", sort, "the first order of the table")
      ->capture_default_str()
      ->check(one_of(profile_top_sort_keys()))
      ->type_name("KEY");
  cmd.add_option("--count", count, "stop after N refreshes")
      ->type_name("N")
      ->check(number(1, kNoLimit));
  cmd.add_option("--program-output", program_output,
                 "with -- CMD: where the program's output goes (default: a new file in $TMPDIR, "
                 "named at the end; the screen is the view's)")
      ->type_name("FILE");
  cmd.footer(
      "Usage: mainboard profile top PID   or   mainboard profile top [options] -- CMD ARGS...\n"
      "Keys: q quit, space pause, ? help, 1-4 sort, l lines, n native, t thread, r reset.");
}

std::string ProfileTop::complete(const CLI::App&, std::vector<std::string> rest) {
  // One word of digits is a PID; anything else is a command to start.
  if (rest.size() == 1 && !rest[0].empty() &&
      rest[0].find_first_not_of("0123456789") == std::string::npos) {
    auto n = core::parse_i64(rest[0]);
    if (!n || *n <= 0 || *n > 0x7fffffff) return "profile top: " + rest[0] + " is not a PID";
    pid = *n;
    return "";
  }
  if (rest.empty())
    return "profile top needs a PID or a command: mainboard profile top PID, or mainboard "
           "profile top -- CMD ARGS";
  command = std::move(rest);
  return "";
}

int ProfileTop::run(const Global& g) {
  terminal::Signals signals;
  const char* term = std::getenv("TERM");
  bool full_screen = ::isatty(1) == 1 && !(term && std::strcmp(term, "dumb") == 0);

  // A launched program's output goes to a file of its own when the screen is the view's.
  std::string output_path;
  int output_fd = -1;
  pid_t child = 0;
  if (!command.empty()) {
    if (full_screen || !program_output.empty()) {
      output_path = program_output.empty()
                        ? core::make_fallback_file(std::filesystem::temp_directory_path() /
                                                   "mainboard-top-output.txt")
                              .string()
                        : program_output;
      output_fd = ::open(output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (output_fd < 0)
        throw Error("cannot write the program's output to " + output_path + ": " +
                    std::strerror(errno));
    }
    child = launch(command, output_fd);
    if (output_fd >= 0) ::close(output_fd);
    pid = child;
  }
  std::string title;
  if (!command.empty()) {
    title = core::terminal_text(core::shell_quote(command));
  } else {
    // /proc/PID/cmdline separates words with NULs: shown with spaces.
    std::string words = symbols::read_proc_file("/proc/" + std::to_string(pid) + "/cmdline");
    while (!words.empty() && words.back() == '\0')
      words.pop_back();
    std::replace(words.begin(), words.end(), '\0', ' ');
    title = core::terminal_text(words);
  }
  if (title.empty()) title = "process";
  title += " (pid " + std::to_string(pid) + ")";

  // The sampler's thread: each interval's profile into `arrived`.
  std::mutex mutex;
  std::deque<Profile> arrived;
  std::string failed;
  std::atomic<bool> stop{false}, finished{false};
  std::thread sampler([&] {
    try {
      Sampler::watch(
          pid, options, interval_s,
          [&](const Profile& p) {
            std::lock_guard lock(mutex);
            arrived.push_back(p);
            signals.wake();
            return true;
          },
          &stop);
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex);
      failed = e.what();
    }
    finished = true;
    signals.wake();
  });

  view::ProfileTop top;
  view::ProfileTopOptions o;
  o.title = title;
  o.sort = sort;
  o.native = native;
  terminal::Keyboard keyboard(full_screen && ::isatty(0) == 1 ? 0 : -1);
  std::optional<terminal::Screen> screen;
  if (full_screen) screen.emplace(keyboard.fd());

  bool quit = false, dirty = true;
  std::uint64_t refreshes = 0;
  auto take = [&](std::string_view in) -> std::string_view {
    if (o.help) {
      o.help = false;
      return in.substr(in[0] == '\033' && in.size() >= 3 ? 3 : 1);
    }
    if (in[0] == '\033' && in.size() >= 3 && in[1] == '[') {
      std::size_t end = 2;
      while (end < in.size() && !(in[end] >= '@' && in[end] <= '~'))
        ++end;
      return in.substr(std::min(end + 1, in.size()));
    }
    switch (in[0]) {
      case 'q':
      case 'Q': quit = true; break;
      case ' ': o.paused = !o.paused; break;
      case '?':
      case 'h': o.help = true; break;
      case 'l': o.lines = !o.lines; break;
      case 'n': o.native = !o.native; break;
      case 'r': top.reset(); break;
      case 't': {
        const auto& order = top.thread_order();
        if (order.empty()) break;
        auto it = o.thread ? std::find(order.begin(), order.end(), *o.thread) : order.end();
        if (!o.thread)
          o.thread = order.front();
        else if (it == order.end() || it + 1 == order.end())
          o.thread.reset();
        else
          o.thread = *(it + 1);
        break;
      }
      default:
        if (in[0] >= '1' && in[0] <= '4')
          o.sort = profile_top_sort_keys()[static_cast<std::size_t>(in[0] - '1')];
        break;
    }
    return in.substr(1);
  };

  while (!signals.ended_by() && !quit) {
    if (signals.suspend_if_asked(screen ? &*screen : nullptr)) dirty = true;
    if (signals.take_resized()) dirty = true;
    std::deque<Profile> now;
    {
      std::lock_guard lock(mutex);
      now.swap(arrived);
    }
    for (auto& p : now) {
      top.add(p, threads_of(static_cast<std::int32_t>(pid)));
      ++refreshes;
      if (!full_screen) {
        auto plain = o;
        auto area = terminal::plain_area(g.width, g.color);
        plain.color = area.color;
        plain.width = area.width;
        plain.height = 0;
        plain.interactive = false;
        plain.max_rows = 20;
        std::string out;
        for (const auto& l : top.render(plain))
          out += l + "\n";
        terminal::write_all(1, out + "\n");
      } else if (!o.paused) {
        dirty = true;
      }
    }
    if (dirty && full_screen) {
      auto area = terminal::screen_area(g.width, g.color);
      o.width = area.width;
      o.height = area.height;
      o.color = area.color;
      terminal::write_all(1, terminal::frame(top.render(o)));
      dirty = false;
    }
    if (finished || (count && refreshes >= count)) break;
    if (!keyboard.wait(signals, std::chrono::steady_clock::now() + std::chrono::milliseconds(250),
                       take, [&] { return quit; }))
      break;
    if (keyboard.typed()) dirty = true;
  }
  // Whether the program ended on its own, read before the sampler is told to stop (it says it
  // finished either way).
  bool ended = finished.load();
  stop = true;
  sampler.join();
  screen.reset();

  int sig = signals.ended_by();
  if (!failed.empty()) {
    if (child) end_program(child, SIGTERM, 2);
    throw Error(failed);
  }
  int code = 0;
  if (child) {
    // The terminal's Ctrl-C reached the program already (one foreground group); a signal sent
    // to this process alone is passed on; q (or --count) ends it as an interrupt ends `run`.
    code = end_program(child,
                       ended           ? 0
                       : sig == SIGINT ? 0
                       : sig           ? sig
                                       : SIGTERM,
                       options.kill_after_s);
    if (!output_path.empty())
      std::fprintf(stderr, "mainboard: the program's output is in %s\n", output_path.c_str());
  }
  if (sig) return 128 + sig;
  if (ended) {
    if (child) {
      std::fprintf(stderr, "mainboard: %s exited with status %d\n",
                   core::terminal_text(command[0]).c_str(), code);
      return code;
    }
    std::fprintf(stderr, "mainboard: process %lld exited\n", static_cast<long long>(pid));
  }
  return 0;
}

}  // namespace mainboard::cli
