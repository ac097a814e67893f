#include "view/profile_top.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/text.hpp"
#include "profile/text_util.hpp"
#include "view/format.hpp"

namespace mainboard::view {

namespace {

const char* const kReset = "\033[0m";

std::string cyan(const std::string& s, bool color) {
  return color ? "\033[1;36m" + s + kReset : s;
}
std::string dim(const std::string& s, bool color) {
  return color ? "\033[2m" + s + kReset : s;
}

std::string seconds_text(double s) {
  if (s >= 3600)
    return fmt::format("{}:{:02}:{:02}", static_cast<long long>(s) / 3600,
                       static_cast<long long>(s) % 3600 / 60, static_cast<long long>(s) % 60);
  if (s >= 100) return fmt::format("{:.0f}s", s);
  return fmt::format("{:.2f}s", s);
}

const char* state_word(char state) {
  switch (state) {
    case 'R': return "running";
    case 'S': return "sleeping";
    case 'D': return "waiting for I/O";
    case 'T':
    case 't': return "stopped";
    case 'Z': return "exited";
    default: return "unknown";
  }
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& profile_top_keys() {
  static const std::vector<std::pair<std::string, std::string>> kKeys = {
      {"q", "quit (Ctrl-C too): an attached program runs on, a launched one is ended"},
      {"space", "pause / resume the display (sampling goes on)"},
      {"? or h", "this help (any key closes it)"},
      {"1-4", "sort by %Own, %Total, OwnTime, TotalTime"},
      {"l", "a row per line of a Python function, or per function"},
      {"n", "native frames of C extensions and libraries shown or hidden"},
      {"t", "one thread's samples, the next thread's, then every thread's"},
      {"r", "start the times again from now"},
  };
  return kKeys;
}

void ProfileTop::reset() {
  threads_.clear();
  samples_all_ = samples_now_ = lost_all_ = lost_now_ = 0;
  first_ns_ = last_ns_ = 0;
}

void ProfileTop::add(const Profile& p, std::vector<ThreadNow> threads) {
  for (auto& t : threads_)
    for (auto& n : t.second.now)
      for (auto& m : n)
        m.clear();
  for (auto& t : threads_)
    t.second.samples_now = 0;
  samples_now_ = p.samples.size();
  samples_all_ += p.samples.size();
  lost_now_ = p.lost_samples;
  lost_all_ += p.lost_samples;
  if (p.sample_hz) hz_ = p.sample_hz;
  if (!first_ns_) first_ns_ = p.start_ns;
  last_ns_ = p.end_ns;
  notes_ = p.unavailable;
  for (const auto& t : p.threads) {
    if (!names_.count(t.tid)) order_.push_back(t.tid);
    if (!t.name.empty()) names_[t.tid] = t.name;
  }
  for (const auto& t : threads) {
    if (!names_.count(t.tid)) order_.push_back(t.tid);
    if (!t.name.empty() && !names_.count(t.tid)) names_[t.tid] = t.name;
  }
  now_ = std::move(threads);

  std::vector<std::uint32_t> kept;
  std::set<Key> seen;
  for (const auto& s : p.samples) {
    if (s.thread >= p.threads.size() || s.stack >= p.stacks.size()) continue;
    auto& th = threads_[p.threads[s.thread].tid];
    ++th.samples_now;
    ++th.samples_all;
    const auto& stack = p.stacks[s.stack];
    bool any_python = false;
    for (auto f : stack)
      if (f < p.frames.size() && p.frames[f].module == "[python]") any_python = true;
    for (int native = 0; native < 2; ++native) {
      kept.clear();
      for (auto f : stack) {
        if (f >= p.frames.size()) continue;
        // Without native frames, a stack that has Python frames keeps only them: time in a C
        // extension is its Python caller's (py-spy's way without --native).
        if (!native && any_python && p.frames[f].module != "[python]") continue;
        kept.push_back(f);
      }
      for (int lines = 0; lines < 2; ++lines) {
        seen.clear();
        for (std::size_t i = 0; i < kept.size(); ++i) {
          const auto& fr = p.frames[kept[i]];
          bool py = fr.module == "[python]";
          Key key{fr.function, py ? fr.file : fr.module, py && lines ? fr.line : 0};
          python_[key] = py;
          if (i == 0) {
            ++th.now[native][lines][key].own;
            ++th.all[native][lines][key].own;
          }
          if (seen.insert(key).second) {
            ++th.now[native][lines][key].total;
            ++th.all[native][lines][key].total;
          }
        }
      }
    }
  }
}

std::vector<ProfileTop::Row> ProfileTop::rows(const ProfileTopOptions& o) const {
  std::map<Key, Row> merged;
  int n = o.native ? 1 : 0, l = o.lines ? 1 : 0;
  for (const auto& [tid, t] : threads_) {
    if (o.thread && *o.thread != tid) continue;
    for (const auto& [key, tally] : t.all[n][l]) {
      auto& r = merged[key];
      r.key = key;
      r.all.own += tally.own;
      r.all.total += tally.total;
    }
    for (const auto& [key, tally] : t.now[n][l]) {
      auto& r = merged[key];
      r.key = key;
      r.now.own += tally.own;
      r.now.total += tally.total;
    }
  }
  std::vector<Row> out;
  for (auto& [key, r] : merged) {
    auto it = python_.find(key);
    r.python = it != python_.end() && it->second;
    out.push_back(std::move(r));
  }
  auto value = [&](const Row& r) -> std::uint64_t {
    if (o.sort == "total") return r.now.total;
    if (o.sort == "own_time") return r.all.own;
    if (o.sort == "total_time") return r.all.total;
    return r.now.own;
  };
  std::sort(out.begin(), out.end(), [&](const Row& a, const Row& b) {
    // Ties by the time since the start, then by name: rows do not jump about.
    auto va = value(a), vb = value(b);
    if (va != vb) return va > vb;
    if (a.all.own != b.all.own) return a.all.own > b.all.own;
    if (a.all.total != b.all.total) return a.all.total > b.all.total;
    return a.key < b.key;
  });
  return out;
}

std::vector<std::string> ProfileTop::render(const ProfileTopOptions& o) const {
  const bool color = o.color;
  const std::size_t width = static_cast<std::size_t>(std::clamp(o.width, 20, 1000));
  std::vector<std::string> lines;
  double elapsed = last_ns_ > first_ns_ ? static_cast<double>(last_ns_ - first_ns_) / 1e9 : 0;
  std::vector<std::string> title = {"mainboard profile top — " + o.title};
  if (hz_) title.push_back(fmt::format("{} Hz", hz_));
  title.push_back(seconds_text(elapsed));
  if (o.paused) title.push_back(color ? "\033[33mPAUSED\033[0m" : "PAUSED");
  lines.push_back(clip(join(title, " · "), width));

  std::uint64_t now_samples = samples_now_, all_samples = samples_all_;
  if (o.thread) {
    auto it = threads_.find(*o.thread);
    now_samples = it == threads_.end() ? 0 : it->second.samples_now;
    all_samples = it == threads_.end() ? 0 : it->second.samples_all;
  }
  std::string counts = fmt::format("samples {} (this interval {})", all_samples, now_samples);
  if (lost_all_) counts += fmt::format(" · lost {}", lost_all_);
  std::map<std::string, int> states;
  for (const auto& t : now_)
    ++states[state_word(t.state)];
  std::vector<std::string> parts;
  for (const auto& [word, n] : states)
    parts.push_back(fmt::format("{} {}", n, word));
  if (!now_.empty())
    counts += fmt::format(" · {} thread{}: {}", now_.size(), now_.size() == 1 ? "" : "s",
                          join(parts, ", "));
  lines.push_back(clip(counts, width));
  if (o.thread) {
    auto name = names_.find(*o.thread);
    char state = '?';
    for (const auto& t : now_)
      if (t.tid == *o.thread) state = t.state;
    lines.push_back(
        clip(cyan("thread ", color) + fmt::format("{} (tid {}) · {}",
                                                  name != names_.end() ? name->second : "?",
                                                  *o.thread, state_word(state)),
             width));
  } else if (!now_.empty()) {
    // The busiest threads of the interval, with their states.
    std::vector<std::pair<std::uint64_t, const ThreadNow*>> busy;
    for (const auto& t : now_) {
      auto it = threads_.find(t.tid);
      busy.emplace_back(it == threads_.end() ? 0 : it->second.samples_now, &t);
    }
    std::stable_sort(busy.begin(), busy.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::string> each;
    for (const auto& [n, t] : busy) {
      auto name = names_.find(t->tid);
      each.push_back(fmt::format("{} {} {}",
                                 name != names_.end() && !name->second.empty() ? name->second : "?",
                                 t->tid, t->state));
    }
    lines.push_back(
        clip(dim("threads (busiest first, state): ", color) + join(each, " · "), width));
  }
  if (!notes_.empty()) lines.push_back(clip(dim("not read: " + join(notes_, "; "), color), width));
  lines.push_back("");

  std::vector<std::string> table;
  if (o.help) {
    table.push_back("Keys");
    for (const auto& [key, what] : profile_top_keys())
      table.push_back(clip("  " + cyan(fit(key, 8), color) + " " + what, width));
  } else {
    auto mark = [&](const char* name, const char* key) {
      return std::string(name) + (o.sort == key ? "▼" : "");
    };
    auto right = [](const std::string& text, std::size_t w) {
      std::size_t tw = width_of(text);
      return std::string(w > tw ? w - tw : 0, ' ') + text;
    };
    std::string head = right(mark("%Own", "own"), 7) + " " + right(mark("%Total", "total"), 7) +
                       " " + right(mark("OwnTime", "own_time"), 9) + " " +
                       right(mark("TotalTime", "total_time"), 10) + "  " +
                       (o.lines ? "Function (file:line)" : "Function (file)") +
                       (o.native ? " · native frames shown" : "");
    table.push_back(color ? "\033[7m" + fit(head, width) + kReset : clip(head, width));
    double per_sample = hz_ ? 1.0 / hz_ : 0;
    auto share = [](std::uint64_t n, std::uint64_t of) {
      return of ? 100.0 * static_cast<double>(n) / static_cast<double>(of) : 0.0;
    };
    std::size_t shown = 0;
    for (const auto& r : rows(o)) {
      if (o.height <= 0 && o.max_rows && shown++ >= o.max_rows) break;
      const auto& [function, where, line] = r.key;
      // A Python file as py-spy names it (past site-packages, else its base name).
      std::string file = r.python ? detail::short_python_file(where) : where;
      std::string place = r.python && line ? fmt::format("{}:{}", file, line) : file;
      std::string name = place.empty() ? function : function + " (" + place + ")";
      std::string row = fmt::format("{:>6.1f}% {:>6.1f}% {:>9} {:>10}  {}",
                                    share(r.now.own, now_samples), share(r.now.total, now_samples),
                                    seconds_text(static_cast<double>(r.all.own) * per_sample),
                                    seconds_text(static_cast<double>(r.all.total) * per_sample),
                                    core::terminal_text(name));
      table.push_back(clip(r.now.total == 0 ? dim(row, color) : row, width));
    }
    if (table.size() == 1)
      table.push_back(dim(samples_all_ ? "  no sample of this thread yet"
                                       : "  no samples yet: the program has not run on a CPU",
                          color));
  }

  std::string status = o.status;
  if (status.empty() && o.interactive)
    status = "q quit · space pause · ? keys · 1-4 sort · l lines · n native · t thread · r reset";
  if (o.height <= 0) {
    for (auto& l : table)
      lines.push_back(std::move(l));
    if (!status.empty()) lines.push_back(dim(clip(status, width), color));
    return lines;
  }
  std::size_t height = static_cast<std::size_t>(o.height);
  if (lines.size() + 1 > height) lines.resize(height > 1 ? height - 1 : 0);
  for (auto& l : table) {
    if (lines.size() + 1 >= height) break;
    lines.push_back(std::move(l));
  }
  while (lines.size() + 1 < height)
    lines.emplace_back();
  lines.push_back(dim(clip(status, width), color));
  return lines;
}

}  // namespace mainboard::view
