// LiveView (mainboard/live.hpp): a frame of the machine drawn as lines of text, as `mainboard
// top` shows it. Formatting only: every figure comes from the LiveFrame.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "mainboard/live.hpp"
#include "view/format.hpp"

namespace mainboard {

namespace {

using view::bytes;
using view::fit;
using view::gauge;
using view::join;
using view::repeat;
using view::width_of;

const char* const kColourReset = "\033[0m";

/// Colour of a share: green below 50 %, yellow below 85 %, red above.
std::string level(double pct, const std::string& text, bool color) {
  if (!color) return text;
  const char* c = pct >= 85 ? "\033[31m" : pct >= 50 ? "\033[33m" : "\033[32m";
  return c + text + kColourReset;
}

std::string bold(const std::string& s, bool color) {
  return color ? "\033[1m" + s + kColourReset : s;
}
std::string dim(const std::string& s, bool color) {
  return color ? "\033[2m" + s + kColourReset : s;
}
std::string cyan(const std::string& s, bool color) {
  return color ? "\033[1;36m" + s + kColourReset : s;
}

/// A bar of `blocks` cells for a share in percent, coloured by its level.
std::string bar(double pct, int blocks, bool color) {
  return level(pct, gauge(pct / 100.0, blocks), color);
}

/// The last `n` values (0-100) as a sparkline.
std::string sparkline(const std::deque<double>& values, std::size_t n) {
  static const char* const kTicks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  std::string out;
  std::size_t from = values.size() > n ? values.size() - n : 0;
  for (std::size_t i = from; i < values.size(); ++i) {
    int t = static_cast<int>(std::clamp(values[i], 0.0, 100.0) / 100.0 * 7.0 + 0.5);
    out += kTicks[t];
  }
  return out;
}

std::string pct_text(double v) {
  return fmt::format("{:.0f}%", v);
}

std::string duration(double s) {
  auto t = static_cast<long long>(std::max(0.0, s));
  if (t >= 86400) return fmt::format("{}d{:02}h", t / 86400, t % 86400 / 3600);
  if (t >= 3600) return fmt::format("{}:{:02}:{:02}", t / 3600, t % 3600 / 60, t % 60);
  return fmt::format("{}:{:02}", t / 60, t % 60);
}

std::string rate(double bytes_per_s) {
  return bytes(static_cast<std::uint64_t>(std::max(0.0, bytes_per_s))) + "/s";
}

/// NVML's clock-event reason names in words.
std::string throttle_words(const std::string& name) {
  static const std::map<std::string, std::string> kWords = {
      {"GpuIdle", "idle"},
      {"ApplicationsClocksSetting", "application clocks"},
      {"SwPowerCap", "power cap"},
      {"HwSlowdown", "hardware slowdown"},
      {"SyncBoost", "sync boost"},
      {"SwThermalSlowdown", "thermal (driver)"},
      {"HwThermalSlowdown", "thermal (hardware)"},
      {"HwPowerBrakeSlowdown", "power brake"},
      {"DisplayClockSetting", "display clocks"},
  };
  auto it = kWords.find(name);
  return it != kWords.end() ? it->second : name;
}

/// Packs segments into lines of at most `width` columns: a segment goes on the current line
/// when it fits, else it starts a new one indented by `indent`; one wider than a line is cut.
std::vector<std::string> pack(const std::vector<std::string>& segments, std::size_t width,
                              std::size_t indent, const char* sep = "  ") {
  std::vector<std::string> lines;
  std::string line;
  std::size_t w = 0;
  for (const auto& s : segments) {
    if (s.empty()) continue;
    std::size_t sw = width_of(s);
    std::size_t gap = w == 0 ? 0 : width_of(sep);
    if (w > 0 && w + gap + sw > width && w > indent) {
      lines.push_back(line);
      line = std::string(indent, ' ');
      w = indent;
      gap = 0;
    }
    if (gap) line += sep;
    line += s;
    w += gap + sw;
  }
  if (w > 0) lines.push_back(line);
  for (auto& l : lines)
    l = view::clip(l, width);
  return lines;
}

struct Column {
  const char* title;
  std::size_t width;
  bool right;
  const char* key;  // sort key
};

const std::vector<Column>& columns() {
  static const std::vector<Column> kColumns = {
      {"PID", 7, true, "pid"},   {"USER", 9, false, "user"},
      {"GPU", 4, false, "gpu"},  {"GPU MEM", 9, true, "gpu_memory"},
      {"CPU%", 6, true, "cpu"},  {"MEM", 9, true, "memory"},
      {"TIME", 9, true, "time"}, {"COMMAND", 0, false, "command"},
  };
  return kColumns;
}

std::string cell(const std::string& text, std::size_t width, bool right) {
  std::string t = view::clip(text, width);
  std::size_t w = width_of(t);
  std::string pad(width > w ? width - w : 0, ' ');
  return right ? pad + t : t + pad;
}

/// The sort order of the process table; ties by PID.
std::function<bool(const LiveProcess*, const LiveProcess*)> order(const std::string& key,
                                                                  bool ascending) {
  auto less = [key](const LiveProcess* a, const LiveProcess* b) -> int {
    auto cmp = [](auto x, auto y) { return x < y ? -1 : y < x ? 1 : 0; };
    if (key == "user") return cmp(a->user, b->user);
    if (key == "gpu") return cmp(a->gpus, b->gpus);
    if (key == "gpu_memory")
      return cmp(a->gpu_memory_bytes.value_or(0), b->gpu_memory_bytes.value_or(0));
    if (key == "cpu") return cmp(a->cpu_pct.value_or(-1), b->cpu_pct.value_or(-1));
    if (key == "memory") return cmp(a->rss_bytes, b->rss_bytes);
    if (key == "time") return cmp(a->elapsed_s, b->elapsed_s);
    if (key == "command") return cmp(a->command, b->command);
    return 0;
  };
  return [less, ascending](const LiveProcess* a, const LiveProcess* b) {
    int c = less(a, b);
    if (c == 0) return a->pid < b->pid;
    return ascending ? c < 0 : c > 0;
  };
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& live_view_keys() {
  static const std::vector<std::pair<std::string, std::string>> kKeys = {
      {"q, Ctrl-C", "quit"},
      {"space", "pause / resume"},
      {"? or h", "this help (any key closes it)"},
      {"s / S", "sort by the next / previous column"},
      {"1-8", "sort by a column: PID USER GPU GPU-MEM CPU% MEM TIME COMMAND (again: reverse)"},
      {"r", "reverse the order"},
      {"/", "filter processes by command or user (Enter keeps it, Esc clears it)"},
      {"g", "show one GPU's processes, the next GPU's, then every GPU's"},
      {"a", "every process, or only the GPUs' processes"},
      {"t", "processes as a tree under their parents"},
      {"up, down", "select a process"},
      {"e", "the selected process's whole command line"},
  };
  return kKeys;
}

LiveView::LiveView(std::size_t history) : history_(std::max<std::size_t>(history, 1)) {}

void LiveView::add(const LiveFrame& frame) {
  auto push = [this](std::deque<double>& d, double v) {
    d.push_back(v);
    while (d.size() > history_)
      d.pop_front();
  };
  if (frame.cpu_total) push(cpu_busy_, frame.cpu_total->busy_pct);
  if (gpu_util_.size() != frame.gpus.size()) {
    gpu_util_.assign(frame.gpus.size(), {});
    gpu_memory_.assign(frame.gpus.size(), {});
  }
  for (std::size_t i = 0; i < frame.gpus.size(); ++i) {
    const auto& t = frame.gpus[i].reading.telemetry;
    if (t.utilization && t.utilization->compute_pct)
      push(gpu_util_[i], *t.utilization->compute_pct);
    if (t.memory && t.memory->total_bytes > 0 && t.memory->used_bytes)
      push(gpu_memory_[i], t.memory->percent_used());
  }
  last_ = frame;
  ++frames_;
}

std::vector<const LiveProcess*> LiveView::rows(const LiveViewOptions& o) const {
  std::vector<const LiveProcess*> out;
  std::string filter = o.filter;
  std::transform(filter.begin(), filter.end(), filter.begin(), ::tolower);
  for (const auto& p : last_.processes) {
    if (o.gpu && std::find(p.gpus.begin(), p.gpus.end(), *o.gpu) == p.gpus.end()) continue;
    if (!filter.empty()) {
      std::string hay = p.command + " " + p.user + " " + p.name;
      std::transform(hay.begin(), hay.end(), hay.begin(), ::tolower);
      if (hay.find(filter) == std::string::npos) continue;
    }
    out.push_back(&p);
  }
  auto by = order(o.sort, o.ascending);
  std::sort(out.begin(), out.end(), by);
  if (!o.tree) return out;
  // Depth-first from the processes whose parent is not listed, children in the same order.
  std::map<std::uint32_t, std::vector<const LiveProcess*>> children;
  std::set<std::uint32_t> listed;
  for (auto* p : out)
    listed.insert(p->pid);
  std::vector<const LiveProcess*> roots;
  for (auto* p : out)
    (listed.count(p->ppid) && p->ppid != p->pid ? children[p->ppid] : roots).push_back(p);
  std::vector<const LiveProcess*> tree;
  std::set<std::uint32_t> seen;
  std::function<void(const LiveProcess*)> walk = [&](const LiveProcess* p) {
    if (!seen.insert(p->pid).second) return;
    tree.push_back(p);
    for (auto* c : children[p->pid])
      walk(c);
  };
  for (auto* r : roots)
    walk(r);
  for (auto* p : out)
    walk(p);  // a cycle of parents (a PID reused) is still listed
  return tree;
}

std::vector<std::string> LiveView::render(const LiveViewOptions& o) const {
  const bool color = o.color;
  const std::size_t width = static_cast<std::size_t>(std::clamp(o.width, 20, 1000));
  const LiveFrame& f = last_;
  std::vector<std::string> lines;

  // The title.
  std::vector<std::string> title = {bold("mainboard top", color) + " — " + f.hostname};
  if (f.uptime_s) title.push_back("up " + duration(*f.uptime_s));
  if (f.load_1m)
    title.push_back(fmt::format("load {:.2f} {:.2f} {:.2f}", *f.load_1m, f.load_5m.value_or(0),
                                f.load_15m.value_or(0)));
  if (o.paused) title.push_back(level(100, "PAUSED", color));
  lines.push_back(view::clip(join(title, " · "), width));

  // The CPUs: all together, then each (grouped when they would take too many lines).
  {
    std::vector<std::string> seg;
    if (f.cpu_total) {
      const auto& t = *f.cpu_total;
      seg.push_back(cyan("CPU", color) + " " + bar(t.busy_pct, 20, color) + " " +
                    fit(pct_text(t.busy_pct), 4));
      std::string parts = fmt::format("user {:.0f}% · system {:.0f}% · I/O wait {:.0f}%",
                                      t.user_pct, t.system_pct, t.iowait_pct);
      if (t.steal_pct >= 0.5) parts += fmt::format(" · steal {:.0f}%", t.steal_pct);
      seg.push_back(dim(parts, color));
    } else {
      seg.push_back(cyan("CPU", color) + " " +
                    dim(f.sequence == 0 ? "(its use shows from the next reading)"
                                        : "use not readable (no /proc/stat)",
                        color));
    }
    if (f.cpu_power_w || f.cpu_temperature_c) {
      std::vector<std::string> pkg;
      if (f.cpu_power_w) pkg.push_back(fmt::format("{:.0f} W", *f.cpu_power_w));
      if (f.cpu_temperature_c) pkg.push_back(fmt::format("{:.0f} °C", *f.cpu_temperature_c));
      seg.push_back("package " + join(pkg, " · "));
    }
    if (cpu_busy_.size() > 1 && width >= 100) seg.push_back(sparkline(cpu_busy_, 30));
    for (auto& l : pack(seg, width, 4))
      lines.push_back(l);
  }
  if (!f.cpus.empty()) {
    std::size_t n = f.cpus.size();
    std::size_t max_rows = o.height == 0 ? 16 : o.height >= 50 ? 8 : o.height >= 32 ? 4 : 2;
    auto layout = [&](std::size_t group, std::size_t& cols, std::size_t& label_w) {
      std::size_t groups = (n + group - 1) / group;
      int last = f.cpus.back().cpu;
      label_w =
          group == 1 ? fmt::formatted_size("{}", last) : fmt::formatted_size("{}-{}", last, last);
      std::size_t cell_w = label_w + 1 + 10 + 1 + 4;
      cols = std::max<std::size_t>(1, (width + 2) / (cell_w + 2));
      return (groups + cols - 1) / cols;
    };
    std::size_t group = 1, cols = 1, label_w = 1;
    while (layout(group, cols, label_w) > max_rows && group < n)
      ++group;
    std::vector<std::string> cells;
    for (std::size_t i = 0; i < n; i += group) {
      std::size_t end = std::min(n, i + group);
      double busy = 0;
      for (std::size_t k = i; k < end; ++k)
        busy += f.cpus[k].busy_pct;
      busy /= static_cast<double>(end - i);
      std::string label = group == 1 ? std::to_string(f.cpus[i].cpu)
                                     : fmt::format("{}-{}", f.cpus[i].cpu, f.cpus[end - 1].cpu);
      cells.push_back(dim(cell(label, label_w, true), color) + " " + bar(busy, 10, color) + " " +
                      cell(pct_text(busy), 4, true));
    }
    std::size_t rows = (cells.size() + cols - 1) / cols;
    for (std::size_t r = 0; r < rows; ++r) {
      std::string line;
      // Column-major, as htop and btop lay out their CPU meters.
      for (std::size_t c = 0; c < cols; ++c) {
        std::size_t k = c * rows + r;
        if (k >= cells.size()) break;
        if (c) line += "  ";
        line += cells[k];
      }
      lines.push_back(view::clip(line, width));
    }
  }

  // Memory, swap, the cgroup's cap, pressure.
  {
    std::vector<std::string> seg;
    if (f.memory && f.memory->total_bytes > 0 && f.memory->used_bytes) {
      seg.push_back(cyan("Mem", color) + " " + bar(f.memory->percent_used(), 20, color) + " " +
                    view::capacity_pair(*f.memory->used_bytes, f.memory->total_bytes));
    } else {
      seg.push_back(cyan("Mem", color) + " " + dim("not readable", color));
    }
    if (f.swap_total_bytes > 0) {
      double p =
          100.0 * static_cast<double>(f.swap_used_bytes) / static_cast<double>(f.swap_total_bytes);
      seg.push_back(cyan("Swap", color) + " " + bar(p, 10, color) + " " +
                    view::capacity_pair(f.swap_used_bytes, f.swap_total_bytes));
    } else {
      seg.push_back(cyan("Swap", color) + " " + dim("none", color));
    }
    if (f.cgroup_memory && f.cgroup_memory->limit_bytes && f.cgroup_memory->usage_bytes) {
      double p = 100.0 * static_cast<double>(*f.cgroup_memory->usage_bytes) /
                 static_cast<double>(std::max<std::uint64_t>(1, *f.cgroup_memory->limit_bytes));
      seg.push_back(
          cyan("cgroup cap", color) + " " + bar(p, 10, color) + " " +
          view::capacity_pair(*f.cgroup_memory->usage_bytes, *f.cgroup_memory->limit_bytes) + " " +
          pct_text(p));
    }
    for (auto& l : pack(seg, width, 4))
      lines.push_back(l);
  }
  if (f.pressure) {
    auto part = [&](const char* name, const std::optional<ResourcePressure>& r) -> std::string {
      if (!r) return "";
      std::string s = fmt::format("{} {:.1f}% waiting", name, r->some.avg10);
      if (r->full) s += fmt::format(", {:.1f}% stalled", r->full->avg10);
      double worst = std::max(r->some.avg10, r->full ? r->full->avg10 * 2 : 0.0);
      return level(worst >= 10 ? 100 : worst >= 1 ? 60 : 0, s, color);
    };
    std::vector<std::string> seg = {cyan("PSI", color) + dim(" (10 s)", color),
                                    part("cpu", f.pressure->cpu),
                                    part("memory", f.pressure->memory), part("io", f.pressure->io)};
    for (auto& l : pack(seg, width, 4, " · "))
      lines.push_back(l);
  }

  // A unit's first line: its name and label, use and memory as bars (with their history where
  // kept), power against its limit, temperature.
  auto unit_segments = [&](const std::string& name, const std::string& label, const UnitSnapshot& t,
                           bool chosen, const std::deque<double>* util,
                           const std::deque<double>* memory) {
    std::vector<std::string> seg;
    seg.push_back((chosen ? bold("▶" + name, color) : cyan(name, color)) + " " +
                  view::clip(label, width >= 120 ? 28 : 20));
    if (t.utilization && t.utilization->compute_pct) {
      double u = *t.utilization->compute_pct;
      std::string s = "util " + bar(u, 10, color) + " " + cell(pct_text(u), 4, true);
      if (util && util->size() > 1 && width >= 100) s += " " + sparkline(*util, 12);
      seg.push_back(s);
    } else {
      seg.push_back("util " + dim("n/a", color));
    }
    if (t.memory && t.memory->total_bytes > 0 && t.memory->used_bytes) {
      std::string s = "mem " + bar(t.memory->percent_used(), 10, color) + " " +
                      view::capacity_pair(*t.memory->used_bytes, t.memory->total_bytes);
      if (memory && memory->size() > 1 && width >= 100) s += " " + sparkline(*memory, 12);
      seg.push_back(s);
    }
    if (t.energy && t.energy->power_w) {
      std::string s = fmt::format("{:.0f}", *t.energy->power_w);
      if (t.energy->power_limit_w && *t.energy->power_limit_w > 0)
        s = level(100.0 * *t.energy->power_w / *t.energy->power_limit_w,
                  s + fmt::format(" / {:.0f} W", *t.energy->power_limit_w), color);
      else
        s += " W";
      seg.push_back(s);
    }
    if (t.thermal && t.thermal->temperature_c) {
      double c = *t.thermal->temperature_c;
      double slow = t.thermal->slowdown_c.value_or(90);
      seg.push_back(level(c >= slow - 5    ? 100
                          : c >= slow - 15 ? 60
                                           : 0,
                          fmt::format("{:.0f} °C", c), color));
    }
    return seg;
  };

  // Each GPU: its use with a history, then its clocks, links, throttling and errors. Where the
  // GPUs would leave fewer than eight lines to the processes, each gets one line and only the
  // chosen one (g) its details.
  std::vector<std::vector<std::string>> gpu_main(f.gpus.size()), gpu_more(f.gpus.size());
  for (std::size_t i = 0; i < f.gpus.size(); ++i) {
    const auto& g = f.gpus[i];
    const auto& r = g.reading;
    const auto& t = r.telemetry;
    bool chosen = o.gpu && *o.gpu == r.info.index;
    gpu_main[i] = pack(unit_segments(fmt::format("GPU{}", r.info.index), r.info.label, t, chosen,
                                     i < gpu_util_.size() ? &gpu_util_[i] : nullptr,
                                     i < gpu_memory_.size() ? &gpu_memory_[i] : nullptr),
                       width, 5);

    std::vector<std::string> more;
    for (const auto& c : t.clocks)
      if (c.current_mhz && (c.domain == "sm" || c.domain == "memory"))
        more.push_back(
            fmt::format("{} {:.0f} MHz", c.domain == "sm" ? "SM" : c.domain, *c.current_mhz));
    if (r.pcie && (r.pcie->tx_kbps || r.pcie->rx_kbps))
      more.push_back(fmt::format("PCIe ↑{} ↓{}", rate(r.pcie->tx_kbps.value_or(0) * 1000),
                                 rate(r.pcie->rx_kbps.value_or(0) * 1000)));
    if (g.nvlink_tx_bytes_per_s || g.nvlink_rx_bytes_per_s)
      more.push_back(fmt::format("NVLink ↑{} ↓{}", rate(g.nvlink_tx_bytes_per_s.value_or(0)),
                                 rate(g.nvlink_rx_bytes_per_s.value_or(0))));
    if (t.thermal) {
      std::vector<std::string> words;
      bool idle_only = true;
      for (const auto& reason : t.thermal->throttle_reasons) {
        words.push_back(throttle_words(reason));
        if (reason != "GpuIdle") idle_only = false;
      }
      if (!words.empty()) {
        std::string s = "clocks held by: " + join(words, ", ");
        more.push_back(idle_only ? dim(s, color) : level(100, s, color));
      }
    }
    if (g.ecc_corrected_since_start || g.ecc_uncorrected_since_start || g.xids_since_start) {
      std::vector<std::string> events;
      if (g.ecc_corrected_since_start || g.ecc_uncorrected_since_start)
        events.push_back(fmt::format("ECC +{} corrected, +{} uncorrected",
                                     g.ecc_corrected_since_start.value_or(0),
                                     g.ecc_uncorrected_since_start.value_or(0)));
      if (g.xids_since_start) events.push_back(fmt::format("XID +{}", *g.xids_since_start));
      bool bad =
          g.ecc_uncorrected_since_start.value_or(0) > 0 || g.xids_since_start.value_or(0) > 0;
      std::string s = join(events, " · ") + " since start";
      more.push_back(bad ? level(100, s, color) : dim(s, color));
    }
    if (!more.empty()) {
      more[0] = std::string(5, ' ') + more[0];
      gpu_more[i] = pack(more, width, 5, " · ");
    }
  }
  {
    std::size_t all = 0;
    for (std::size_t i = 0; i < f.gpus.size(); ++i)
      all += gpu_main[i].size() + gpu_more[i].size();
    // Room for the process table's header and a few of its rows, and the status line.
    bool compact = o.height > 0 && lines.size() + all + 8 > static_cast<std::size_t>(o.height);
    for (std::size_t i = 0; i < f.gpus.size(); ++i) {
      bool chosen = o.gpu && *o.gpu == f.gpus[i].reading.info.index;
      if (compact && !chosen) {
        // One line: no sparklines, so that memory, power and temperature fit beside the use.
        const auto& r = f.gpus[i].reading;
        lines.push_back(
            view::clip(join(unit_segments(fmt::format("GPU{}", r.info.index), r.info.label,
                                          r.telemetry, false, nullptr, nullptr),
                            "  "),
                       width));
        continue;
      }
      for (auto& l : gpu_main[i])
        lines.push_back(std::move(l));
      for (auto& l : gpu_more[i])
        lines.push_back(std::move(l));
    }
  }

  // Each NPU: one line.
  for (const auto& n : f.npus)
    for (auto& l : pack(unit_segments(fmt::format("NPU{}", n.info.index), n.info.label, n.telemetry,
                                      false, nullptr, nullptr),
                        width, 5))
      lines.push_back(std::move(l));

  // The processes: a header, then as many rows as the screen leaves (all without a height).
  std::size_t fixed_cols = 0;
  for (const auto& c : columns())
    fixed_cols += c.width ? c.width + 1 : 0;
  std::size_t command_w = width > fixed_cols + 2 ? width - fixed_cols - 2 : 8;
  auto rows_now = rows(o);
  lines.push_back("");
  {
    std::string head = o.help
                           ? "Keys"
                           : fmt::format("{} of {} processes{}{}{}", rows_now.size(),
                                         f.processes.size(), f.all_processes ? "" : " on the GPUs",
                                         o.gpu ? fmt::format(" · GPU{}", *o.gpu) : "",
                                         o.filter.empty() ? "" : " · filter: " + o.filter);
    lines.push_back(view::clip(dim(head, color), width));
  }
  std::vector<std::string> table;
  std::size_t selected_row = 0;  // in table; 0: none
  if (o.help) {
    for (const auto& [key, what] : live_view_keys())
      table.push_back(view::clip("  " + cyan(cell(key, 10, false), color) + " " + what, width));
  } else {
    std::string h = "  ";
    for (const auto& c : columns()) {
      std::string name = c.title;
      if (o.sort == c.key) name += o.ascending ? "▲" : "▼";
      h += c.width ? cell(name, c.width, c.right) + " " : view::clip(name, command_w);
    }
    table.push_back(color ? "\033[7m" + fit(h, width) + kColourReset : view::clip(h, width));
    std::map<std::uint32_t, int> depth;
    for (const auto* p : rows_now) {
      int d = 0;
      if (o.tree)
        if (auto it = depth.find(p->ppid); it != depth.end() && p->ppid != p->pid)
          d = it->second + 1;
      depth[p->pid] = d;
      bool selected = o.selected_pid && *o.selected_pid == p->pid;
      std::string gpus;
      for (auto idx : p->gpus)
        gpus += (gpus.empty() ? "" : ",") + std::to_string(idx);
      std::string command = p->command.empty() ? p->name : p->command;
      if (!p->visible) command = "(in a PID namespace not visible here)";
      if (d > 0) command = std::string(static_cast<std::size_t>(2 * (d - 1)), ' ') + "└ " + command;
      std::vector<std::string> values = {
          std::to_string(p->pid),
          p->user.empty() ? "?" : p->user,
          gpus.empty() ? "-" : gpus,
          p->gpu_memory_bytes ? bytes(*p->gpu_memory_bytes) : (p->gpus.empty() ? "-" : "?"),
          p->cpu_pct ? fmt::format("{:.1f}", *p->cpu_pct) : "-",
          p->visible ? bytes(p->rss_bytes) : "?",
          p->visible ? duration(p->elapsed_s) : "?",
          command};
      std::string row = selected ? "▶ " : "  ";
      if (selected) selected_row = table.size();
      for (std::size_t k = 0; k < columns().size(); ++k) {
        const auto& c = columns()[k];
        row += c.width ? cell(values[k], c.width, c.right) + " " : view::clip(values[k], command_w);
      }
      table.push_back(selected && color ? "\033[7m" + fit(row, width) + kColourReset
                                        : view::clip(row, width));
      if (selected && o.expand_selected) {
        std::size_t indent = 4, room = width > indent + 10 ? width - indent : 10;
        std::string whole = p->command.empty() ? p->name : p->command;
        std::size_t at = 0;
        // The whole command line, wrapped at the screen's width (code points, not bytes).
        while (at < whole.size()) {
          std::size_t take = 0, n = 0;
          while (at + take < whole.size() && n < room) {
            unsigned char c = static_cast<unsigned char>(whole[at + take]);
            take += c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
            ++n;
          }
          table.push_back(std::string(indent, ' ') + dim(whole.substr(at, take), color));
          at += take;
        }
      }
    }
    if (rows_now.empty())
      table.push_back(dim(f.all_processes || !o.filter.empty() || o.gpu
                              ? "  no process matches"
                              : "  no process is using a GPU (a: every process)",
                          color));
  }

  std::string status =
      o.status.empty() && o.interactive
          ? "q quit · space pause · ? keys · s sort · / filter · g GPU · a all · t tree · e command"
          : o.status;
  if (o.height <= 0) {
    for (auto& l : table)
      lines.push_back(std::move(l));
    lines.push_back(dim(view::clip(status, width), color));
    return lines;
  }
  std::size_t height = static_cast<std::size_t>(o.height);
  // The status line is the last; the table keeps its header and the selected row in view.
  if (lines.size() + 1 > height) lines.resize(height > 1 ? height - 1 : 0);
  std::size_t room = height - 1 - lines.size();
  std::size_t first = 0;
  if (selected_row >= room && room > 1) first = selected_row - room + 2;
  for (std::size_t k = 0; k < table.size() && lines.size() + 1 < height; ++k) {
    if (k > 0 && k < first) continue;
    lines.push_back(std::move(table[k]));
  }
  while (lines.size() + 1 < height)
    lines.emplace_back();
  lines.push_back(dim(view::clip(status, width), color));
  return lines;
}

}  // namespace mainboard
