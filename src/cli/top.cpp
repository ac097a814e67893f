// `mainboard top`: the machine live. On a terminal it takes the screen (the alternate screen, the
// cursor hidden, keys read as they are typed) and gives it back as it found it on every way out:
// q, Ctrl-C, SIGTERM, SIGHUP, an error. Elsewhere (a pipe, TERM=dumb) it prints a compact frame
// per interval; --json writes one JSON line per interval; --once prints one frame.
//
// The screen is drawn with the project's own ANSI sequences (cursor home, erase to the end of
// each line and below), not curses: a frame is a few dozen lines of text the view already
// makes, redrawn whole, as btop does (docs/architecture.md says why).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "mainboard/live.hpp"
#include "mainboard/view.hpp"
#include "view/format.hpp"

namespace mainboard::cli {

namespace {

const std::vector<std::string>& top_sort_keys() {
  static const std::vector<std::string> kKeys = {"pid", "user",   "gpu",  "gpu_memory",
                                                 "cpu", "memory", "time", "command"};
  return kKeys;
}

std::string frame_json(const LiveFrame& f) {
  nlohmann::json j = f;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

/// A frame off a screen: every line, no key hints.
std::string plain_frame(const LiveView& view, LiveViewOptions o, const terminal::Area& area) {
  o.width = area.width;
  o.height = 0;
  o.color = area.color;
  o.interactive = false;
  std::string out;
  for (const auto& l : view.render(o))
    out += l + "\n";
  return out;
}

int exit_status(int sig) {
  return sig == 0 ? 0 : 128 + sig;
}

/// What the keys change, and the text typed after "/".
struct Keys {
  LiveViewOptions& o;
  LiveView& view;
  MachineWatch& watch;
  bool filtering = false;
  bool quit = false;
  bool reread = false;  // a reading is wanted now (the list of processes changed)

  void move(int by) {
    auto rows = view.rows(o);
    if (rows.empty()) return;
    std::ptrdiff_t at = -1;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (o.selected_pid && rows[i]->pid == *o.selected_pid) at = static_cast<std::ptrdiff_t>(i);
    std::ptrdiff_t next = at < 0 ? 0
                                 : std::clamp<std::ptrdiff_t>(
                                       at + by, 0, static_cast<std::ptrdiff_t>(rows.size()) - 1);
    o.selected_pid = rows[static_cast<std::size_t>(next)]->pid;
  }

  void sort_by(std::size_t k) {
    const auto& keys = top_sort_keys();
    if (o.sort == keys[k])
      o.ascending = !o.ascending;
    else {
      o.sort = keys[k];
      // Names and numbers that read best small first; figures largest first.
      o.ascending = o.sort == "pid" || o.sort == "user" || o.sort == "command" || o.sort == "gpu";
    }
  }

  void cycle_sort(int by) {
    const auto& keys = top_sort_keys();
    auto it = std::find(keys.begin(), keys.end(), o.sort);
    std::size_t at = it == keys.end() ? 0 : static_cast<std::size_t>(it - keys.begin());
    at = static_cast<std::size_t>(static_cast<int>(at) + static_cast<int>(keys.size()) + by) %
         keys.size();
    o.sort = "";
    sort_by(at);
  }

  void cycle_gpu() {
    const auto* f = view.last();
    std::size_t n = f ? f->gpus.size() : 0;
    if (n == 0) {
      o.gpu.reset();
      o.status = "no GPU on this host";
      return;
    }
    if (!o.gpu)
      o.gpu = f->gpus[0].reading.info.index;
    else {
      std::size_t at = 0;
      for (std::size_t i = 0; i < n; ++i)
        if (f->gpus[i].reading.info.index == *o.gpu) at = i;
      if (at + 1 < n)
        o.gpu = f->gpus[at + 1].reading.info.index;
      else
        o.gpu.reset();
    }
  }

  /// One key (or escape sequence) from `in`; what is left of `in` after it.
  std::string_view take(std::string_view in) {
    if (o.help) {  // any key closes the help
      o.help = false;
      if (in[0] == '\033' && in.size() > 1) return in.substr(std::min<std::size_t>(in.size(), 3));
      return in.substr(1);
    }
    if (in[0] == '\033' && in.size() >= 3 && in[1] == '[') {
      std::size_t end = 2;
      while (end < in.size() && !(in[end] >= '@' && in[end] <= '~'))
        ++end;
      std::string_view seq = in.substr(0, std::min(end + 1, in.size()));
      if (!filtering) {
        if (seq == "\033[A")
          move(-1);
        else if (seq == "\033[B")
          move(1);
        else if (seq == "\033[5~")
          move(-10);
        else if (seq == "\033[6~")
          move(10);
        else if (seq == "\033[H" || seq == "\033[1~")
          move(-1000000);
        else if (seq == "\033[F" || seq == "\033[4~")
          move(1000000);
      }
      return in.substr(seq.size());
    }
    char c = in[0];
    if (filtering) {
      if (c == '\n' || c == '\r') {
        filtering = false;
        o.status.clear();
      } else if (c == '\033') {
        filtering = false;
        o.filter.clear();
        o.status.clear();
      } else if (c == 0x7f || c == 0x08) {
        if (!o.filter.empty()) {
          // Remove the last code point.
          std::size_t k = o.filter.size() - 1;
          while (k > 0 && (static_cast<unsigned char>(o.filter[k]) & 0xC0) == 0x80)
            --k;
          o.filter.erase(k);
        }
      } else if (static_cast<unsigned char>(c) >= 0x20) {
        o.filter += c;
      }
      if (filtering) o.status = "filter: " + o.filter + "▏ (Enter keeps it, Esc clears it)";
      return in.substr(1);
    }
    o.status.clear();
    switch (c) {
      case 'q':
      case 'Q': quit = true; break;
      case ' ': o.paused = !o.paused; break;
      case '?':
      case 'h': o.help = true; break;
      case 's': cycle_sort(1); break;
      case 'S': cycle_sort(-1); break;
      case 'r': o.ascending = !o.ascending; break;
      case '/':
        filtering = true;
        o.status = "filter: " + o.filter + "▏ (Enter keeps it, Esc clears it)";
        break;
      case 'g': cycle_gpu(); break;
      case 'a':
        watch.list_all_processes(!view.last() || !view.last()->all_processes);
        reread = true;
        break;
      case 't': o.tree = !o.tree; break;
      case 'e':
        if (!o.selected_pid) move(0);
        o.expand_selected = !o.expand_selected;
        break;
      case 'k': move(-1); break;
      case 'j': move(1); break;
      case '\033':
        o.filter.clear();
        o.selected_pid.reset();
        o.expand_selected = false;
        break;
      default:
        if (c >= '1' && c <= '8') sort_by(static_cast<std::size_t>(c - '1'));
        break;
    }
    return in.substr(1);
  }
};

}  // namespace

void Top::declare(CLI::App& cmd) {
  cmd.add_option("--interval", interval_s, "seconds between readings")
      ->capture_default_str()
      ->check(number(0.1, 86400))
      ->type_name("S");
  cmd.add_flag("--once", once, "print one frame (its rates over a first half second) and exit");
  cmd.add_flag("--json", json, "one JSON object per interval, a line each (JSON Lines)");
  cmd.add_option("--count", count, "stop after N frames")
      ->type_name("N")
      ->check(number(1, kNoLimit));
  cmd.add_flag("--all", all, "list every process, not only the GPUs' (key a)");
  cmd.add_option("--sort", sort,
                 "order of the processes (default: gpu_memory, or cpu without GPUs)")
      ->check(one_of(top_sort_keys()))
      ->type_name("KEY");
  cmd.footer(
      "Keys: q quit, space pause, ? help, s sort, / filter, g GPU, a all processes, t tree, "
      "e command line.\nExample: mainboard top --interval 2    mainboard top --json --count 5");
}

std::string Top::complete(const CLI::App&, std::vector<std::string>) {
  if (once && json) return "--once and --json: choose one (--json --count 1 writes one line)";
  return "";
}

int Top::run(const Global& g) {
  auto options = machine_options(g);
  options.listen_for_xids = !once;
  Machine machine(options);
  bool no_gpus = machine.gpus().empty();
  MachineWatch watch(machine, all || no_gpus);
  LiveView view;
  LiveViewOptions o;
  o.sort = !sort.empty() ? sort : no_gpus ? "cpu" : "gpu_memory";
  auto wait = [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); };

  if (once) {
    watch.next();
    wait(std::min(interval_s, 0.5));
    view.add(watch.next());
    print(plain_frame(view, o, terminal::plain_area(g.width, g.color)));
    return 0;
  }

  terminal::Signals signals;
  const char* term = std::getenv("TERM");
  bool dumb = term && std::strcmp(term, "dumb") == 0;
  bool full_screen = !json && ::isatty(1) == 1 && !dumb;
  terminal::Keyboard keyboard(full_screen && ::isatty(0) == 1 ? 0 : -1);
  std::optional<terminal::Screen> screen;
  if (full_screen) screen.emplace(keyboard.fd());
  Keys keys{o, view, watch};

  using clock = std::chrono::steady_clock;
  // The first reading starts the rates; the first frame follows a short first interval so that
  // the screen is not empty for a whole --interval.
  watch.next();
  auto next_read = clock::now() + std::chrono::duration_cast<clock::duration>(
                                      std::chrono::duration<double>(std::min(interval_s, 0.3)));
  std::uint64_t frames = 0;
  bool dirty = false;
  while (!signals.ended_by()) {
    if (signals.suspend_if_asked(screen ? &*screen : nullptr)) dirty = true;
    if (signals.take_resized()) dirty = true;
    auto now = clock::now();
    if (now >= next_read || keys.reread) {
      if (!o.paused || keys.reread) {
        view.add(watch.next());
        ++frames;
        dirty = true;
        if (json) {
          terminal::write_all(1, frame_json(*view.last()));
          dirty = false;
        } else if (!full_screen) {
          terminal::write_all(1,
                              plain_frame(view, o, terminal::plain_area(g.width, g.color)) + "\n");
          dirty = false;
        }
      }
      keys.reread = false;
      next_read = now + std::chrono::duration_cast<clock::duration>(
                            std::chrono::duration<double>(interval_s));
    }
    if (dirty && full_screen && view.last()) {
      auto area = terminal::screen_area(g.width, g.color);
      o.width = area.width;
      o.height = area.height;
      o.color = area.color;
      terminal::write_all(1, terminal::frame(view.render(o)));
      dirty = false;
    }
    if (count && frames >= count) break;
    // Wait for the next reading, a key or a signal.
    if (!keyboard.wait(
            signals, next_read, [&](std::string_view in) { return keys.take(in); },
            [&] { return keys.quit; }))
      break;
    if (keyboard.typed()) dirty = true;
    if (keys.quit) break;
  }
  screen.reset();
  return exit_status(signals.ended_by());
}

}  // namespace mainboard::cli
