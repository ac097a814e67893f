// The one-file HTML report of a profile: its evidence as JSON inside the page, drawn by the
// page's own script (no network, nothing loaded from elsewhere): the machine, the flame graphs,
// the spans' timeline with the GPU under it, the tables, the verdict and what was not read.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <span>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/text.hpp"
#include "export/flame.hpp"
#include "mainboard/profile.hpp"
#include "mainboard/profile_report.hpp"
#include "mainboard/view.hpp"

namespace mainboard {

namespace detail {
extern const char kReportPageScript[];  // export/report_page.js
extern const char kReportPageStyle[];   // export/report_page.css
}  // namespace detail

namespace {

using nlohmann::json;

/// Numbers as the page carries them, in a string: each in base 32, most significant digit first,
/// the last digit from the first half of the alphabet and the others from the second half (so
/// no separator is needed): 0-31 take one character, up to 1023 two, up to 32767 three.
constexpr std::string_view kDigits =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVabcdefghijklmnopqrstuvWXYZwxyz-_";

void put_number(std::string& out, std::uint64_t v) {
  char digits[16];
  int n = 0;
  digits[n++] = kDigits[v & 31];
  for (v >>= 5; v; v >>= 5)
    digits[n++] = kDigits[32 + (v & 31)];
  while (n)
    out += digits[--n];
}

/// What a frame is grouped with when the reader collapses a library: a native frame's module
/// ("libtorch_cpu.so"), a Python frame's top package ("torch", "importlib" for the frozen
/// import machinery, a script's own file name without ".py").
std::string frame_group(const detail::FlameName& n) {
  if (n.kind == detail::FrameKind::native) {
    auto slash = n.detail.rfind('/');
    return slash == std::string::npos ? n.detail : n.detail.substr(slash + 1);
  }
  if (n.kind != detail::FrameKind::python || n.detail.empty()) return {};
  std::string file = n.detail;
  if (file.starts_with("<frozen ") && file.ends_with(">"))  // "<frozen importlib._bootstrap>"
    return file.substr(8, file.find_first_of(".>", 8) - 8);
  file = detail::short_python_file(file);
  if (auto slash = file.find('/'); slash != std::string::npos) return file.substr(0, slash);
  return file.ends_with(".py") ? file.substr(0, file.size() - 3) : file;
}

/// The samples as the page's views read them: one tree of every call path (each distinct path
/// from the outermost frame one node, over every thread), and per thread its samples in time
/// order, each the node of its stack. From these the page builds its flame graph, time order,
/// call trees and sandwich, and applies the reader's transforms, counting as the report does.
///
/// The tree: per node, depth first, its name and how many levels it climbs from the node
/// before it (`up`: 0 for that node's child). At most kMaxNodes nodes: the narrowest are left
/// out (their samples count in their nearest caller kept). Times: ticks of a tenth of the
/// sampling period, as differences, a repeated difference as one number (odd: a count). At
/// most kMaxOrdered samples in time order in all: beyond, every step-th of each thread's, and
/// each thread's exact counts per node beside them.
void put_samples(const Profile& p, std::int64_t t0, json& d) {
  constexpr std::size_t kMaxNodes = 100000, kMaxOrdered = 200000;
  auto names = detail::frame_names(p);
  // The tree, a node per (caller node, name); parents before their children.
  std::vector<std::uint32_t> node_name, parent;
  std::unordered_map<std::uint64_t, std::uint32_t> child;
  constexpr std::uint32_t kNone = UINT32_MAX;
  std::vector<std::uint32_t> leaf(p.stacks.size(), kNone);
  std::vector<std::uint64_t> total;
  std::vector<bool> used(p.stacks.size(), false);
  for (const auto& s : p.samples)
    if (s.stack < used.size()) used[s.stack] = true;
  for (std::size_t s = 0; s < p.stacks.size(); ++s) {
    if (!used[s]) continue;
    std::uint32_t at = kNone;
    const auto& stack = p.stacks[s];
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      if (*it >= names.of_frame.size()) continue;
      auto name = names.of_frame[*it];
      auto key = (static_cast<std::uint64_t>(at + 1) << 32) | name;  // kNone + 1 == 0
      auto [found, fresh] = child.try_emplace(key, static_cast<std::uint32_t>(node_name.size()));
      if (fresh) {
        node_name.push_back(name);
        parent.push_back(at);
      }
      at = found->second;
    }
    leaf[s] = at;
  }
  child = {};
  total.assign(node_name.size(), 0);
  for (const auto& s : p.samples)
    if (s.stack < leaf.size() && leaf[s.stack] != kNone) ++total[leaf[s.stack]];
  for (std::size_t i = node_name.size(); i-- > 0;)
    if (parent[i] != kNone) total[parent[i]] += total[i];
  // The narrowest left out when there are too many.
  std::uint64_t min_value = 0;
  if (node_name.size() > kMaxNodes) {
    auto values = total;
    std::nth_element(values.begin(), values.begin() + kMaxNodes, values.end(), std::greater<>());
    min_value = values[kMaxNodes] + 1;
  }
  std::vector<std::uint32_t> kept_as(
      node_name.size());  // a node → itself or its nearest kept caller
  std::size_t left_out = 0;
  std::vector<std::vector<std::uint32_t>> children(node_name.size());
  std::vector<std::uint32_t> tops;
  for (std::uint32_t i = 0; i < node_name.size(); ++i) {
    auto up = parent[i] == kNone ? kNone : kept_as[parent[i]];
    bool keep = total[i] >= min_value && (parent[i] == kNone || kept_as[parent[i]] == parent[i]);
    if (!keep) {
      kept_as[i] = up;
      ++left_out;
      continue;
    }
    kept_as[i] = i;
    (parent[i] == kNone ? tops : children[parent[i]]).push_back(i);
  }
  // Depth first, children by name: each node's number on the page.
  std::vector<std::uint32_t> page_id(node_name.size(), kNone);
  std::string tree;
  std::uint32_t next = 0;
  std::int64_t previous_depth = -1;
  std::vector<std::pair<std::uint32_t, std::int64_t>> todo;
  auto by_name = [&](std::uint32_t a, std::uint32_t b) { return node_name[a] > node_name[b]; };
  std::sort(tops.begin(), tops.end(), by_name);
  for (auto t : tops)
    todo.emplace_back(t, 0);
  while (!todo.empty()) {
    auto [i, depth] = todo.back();
    todo.pop_back();
    page_id[i] = next++;
    put_number(tree, node_name[i]);
    put_number(tree, static_cast<std::uint64_t>(previous_depth + 1 - depth));
    previous_depth = depth;
    auto& kids = children[i];
    std::sort(kids.begin(), kids.end(), by_name);  // popped in name order
    for (auto k : kids)
      todo.emplace_back(k, depth + 1);
  }
  auto sample_node = [&](std::uint32_t stack) -> std::uint64_t {  // 0: no frame
    if (stack >= leaf.size() || leaf[stack] == kNone) return 0;
    auto n = kept_as[leaf[stack]];
    return n == kNone ? 0 : page_id[n] + 1;
  };
  // Each thread's samples in time order.
  std::map<std::uint32_t, std::vector<std::uint32_t>> by_thread;
  for (std::uint32_t i = 0; i < p.samples.size(); ++i)
    if (p.samples[i].stack < p.stacks.size()) by_thread[p.samples[i].thread].push_back(i);
  std::size_t all = 0;
  for (const auto& [thread, list] : by_thread)
    all += list.size();
  const std::size_t step = std::max<std::size_t>(1, (all + kMaxOrdered - 1) / kMaxOrdered);
  const std::int64_t tick =
      p.sample_hz ? std::max<std::int64_t>(1, 100'000'000 / p.sample_hz) : 100'000;
  json tracks = json::array();
  for (auto& [thread, list] : by_thread) {
    std::stable_sort(list.begin(), list.end(), [&](std::uint32_t a, std::uint32_t b) {
      return p.samples[a].t_ns < p.samples[b].t_ns;
    });
    std::string order, times;
    std::int64_t last_tick = 0, last_delta = -1;
    std::uint64_t repeats = 0;
    auto flush = [&] {
      if (repeats) put_number(times, repeats * 2 + 1);
      repeats = 0;
    };
    for (std::size_t k = 0; k < list.size(); k += step) {
      const auto& s = p.samples[list[k]];
      put_number(order, sample_node(s.stack));
      auto at = std::max<std::int64_t>(0, (s.t_ns - t0 + tick / 2) / tick);
      auto delta = std::max<std::int64_t>(0, at - last_tick);
      last_tick = std::max(last_tick, at);
      if (delta == last_delta) {
        ++repeats;
        continue;
      }
      flush();
      put_number(times, static_cast<std::uint64_t>(delta) * 2);
      last_delta = delta;
    }
    flush();
    json track = {{"thread", thread},
                  {"label", core::valid_utf8(detail::flame_thread_name(p, thread))},
                  {"samples", list.size()},
                  {"order", std::move(order)},
                  {"times", std::move(times)}};
    if (step > 1) {  // the exact counts, which every step-th sample only approximates
      std::map<std::uint64_t, std::uint64_t> counts;
      for (auto i : list)
        ++counts[sample_node(p.samples[i].stack)];
      std::string text;
      std::uint64_t previous = 0;
      for (const auto& [node, n] : counts) {
        put_number(text, node - previous);
        put_number(text, n);
        previous = node;
      }
      track["counts"] = std::move(text);
    }
    tracks.push_back(std::move(track));
  }
  // Names: [label, detail, kind, the name by function alone, group].
  json name_rows = json::array(), groups = json::array();
  std::map<std::string, std::size_t> group_index;
  for (const auto& nm : names.names) {
    auto group = frame_group(nm);
    auto [g, fresh] = group_index.try_emplace(group, group_index.size());
    if (fresh) groups.push_back(core::valid_utf8(group));
    name_rows.push_back({nm.label, nm.detail, detail::to_string(nm.kind), nm.function, g->second});
  }
  d["names"] = std::move(name_rows);
  d["groups"] = std::move(groups);
  d["root"] = core::valid_utf8(detail::flame_root_name(p));
  d["tree"] = {{"nodes", next}, {"text", std::move(tree)}};
  d["tracks"] = std::move(tracks);
  d["tick_ns"] = tick;
  d["step"] = step;
  d["flame_left_out"] = {{"nodes", left_out}, {"below_samples", min_value}};
}

/// What the page opens with: the lines a reader wants first.
std::vector<std::string> verdict_lines(const Profile& p, const std::vector<FunctionStat>& hot,
                                       const Timeline& t) {
  std::vector<std::string> lines;
  if (!p.processes.empty()) {
    auto r = p.ranks();
    if (!r.verdict.empty()) lines.push_back(r.verdict);
  }
  if (!p.samples.empty()) {
    if (!hot.empty())
      lines.push_back(
          fmt::format("The hottest function is {} ({:.1f}% of the samples as the leaf, "
                      "{:.1f}% on the stack).",
                      hot[0].function, hot[0].self_pct, hot[0].total_pct));
  }
  if (t.end_ns > t.start_ns && !t.source.empty()) {
    std::string line = fmt::format("Busy {:.1f}% of the time by the {}", t.busy_pct(), t.source);
    if (!t.gaps.empty())
      line += fmt::format("; the longest idle gap {:.3f} s{}",
                          static_cast<double>(t.gaps[0].duration_ns()) / 1e9,
                          t.gaps[0].open_span.empty() ? "" : " in " + t.gaps[0].open_span);
    lines.push_back(line + ".");
  }
  if (!p.activities.empty()) {
    auto r = ProfileReport::from_profile(p, 1, 0);
    lines.push_back(fmt::format("GPU: {}-bound ({}){}.", to_string(r.bound), r.bound_reason,
                                r.dominant_kernel.empty()
                                    ? ""
                                    : fmt::format("; {} takes {:.1f}% of kernel time",
                                                  r.dominant_kernel, r.dominant_share_pct)));
  }
  return lines;
}

json page_data(const Profile& p, const HtmlOptions& o) {
  json d;
  std::string command = p.command.empty() ? detail::flame_root_name(p) : p.command;
  d["title"] = o.title.empty() ? "mainboard profile of " + command : o.title;
  std::int64_t t0 = p.start_ns, t1 = p.end_ns;
  for (const auto& s : p.samples) {
    t0 = std::min(t0, s.t_ns);
    t1 = std::max(t1, s.t_ns);
  }
  if (!p.spans.empty()) {
    t0 = std::min(t0, p.spans.front().start_ns);
    for (const auto& s : p.spans)
      t1 = std::max(t1, s.end_ns);
  }
  d["meta"] = {{"command", command},
               {"pid", p.pid},
               {"node", p.node},
               {"written_by", p.written_by},
               {"duration_s", static_cast<double>(t1 - t0) / 1e9},
               {"sample_hz", p.sample_hz},
               {"samples", p.samples.size()},
               {"lost_samples", p.lost_samples},
               {"threads", p.threads.size()},
               {"spans", p.spans.size()},
               {"dropped_spans", p.dropped_spans},
               {"activities", p.activities.size()},
               {"ranks", p.processes.size()}};
  d["t0"] = t0;
  d["t1"] = t1;
  // The analyses the verdict and the sections share, each computed once.
  // (At least the hottest: the verdict names it even when the table is asked to be empty.)
  const auto hot = p.hot_functions(std::numeric_limits<std::size_t>::max());
  const auto timeline = p.timeline(10);
  d["verdict"] = verdict_lines(p, hot, timeline);
  d["unavailable"] = p.unavailable;
  d["report"] = p.report(20);
  if (p.machine) {
    MachineView view(*p.machine);
    d["machine"] = {{"schematic", view.render({false, 100})}, {"summary", view.compact_summary()}};
  }
  put_samples(p, t0, d);
  d["lines"] = o.lines;
  json threads = json::array();
  for (const auto& t : p.threads)
    threads.push_back(
        {{"index", t.index}, {"tid", t.tid}, {"label", detail::flame_thread_name(p, t.index)}});
  d["threads"] = std::move(threads);
  // Spans: the longest max_spans, in start order; every path's statistics are exact anyway.
  std::vector<std::size_t> keep(p.spans.size());
  for (std::size_t i = 0; i < keep.size(); ++i)
    keep[i] = i;
  if (keep.size() > o.max_spans) {
    std::nth_element(keep.begin(), keep.begin() + static_cast<std::ptrdiff_t>(o.max_spans),
                     keep.end(), [&](std::size_t a, std::size_t b) {
                       return p.spans[a].end_ns - p.spans[a].start_ns >
                              p.spans[b].end_ns - p.spans[b].start_ns;
                     });
    keep.resize(o.max_spans);
    std::sort(keep.begin(), keep.end());
  }
  json spans = json::array();
  for (auto i : keep) {
    const auto& s = p.spans[i];
    spans.push_back({s.path, s.thread, s.start_ns - t0, s.end_ns - s.start_ns});
  }
  json paths = json::array();
  for (const auto& path : p.paths)
    paths.push_back(core::valid_utf8(path));
  d["spans"] = {{"paths", std::move(paths)}, {"rows", std::move(spans)}, {"all", p.spans.size()}};
  json gaps = json::array();
  for (const auto& g : timeline.gaps)
    gaps.push_back(
        {{"start", g.start_ns - t0}, {"end", g.end_ns - t0}, {"open_span", g.open_span}});
  d["timeline"] = {
      {"source", timeline.source}, {"busy_pct", timeline.busy_pct()}, {"gaps", std::move(gaps)}};
  // Device readings: at most 2000 points per GPU (every n-th), on the page's time axis.
  std::map<std::uint32_t, std::vector<const DeviceSample*>> by_gpu;
  for (const auto& s : p.device_samples)
    by_gpu[s.gpu].push_back(&s);
  json devices = json::array();
  for (const auto& [gpu, list] : by_gpu) {
    json points = json::array();
    std::size_t step = std::max<std::size_t>(1, list.size() / 2000);
    for (std::size_t i = 0; i < list.size(); i += step) {
      const auto& s = *list[i];
      auto memory = s.process_memory_bytes ? s.process_memory_bytes : s.device_memory_used_bytes;
      points.push_back({s.t_ns - t0, s.utilization_pct ? json(*s.utilization_pct) : json(),
                        memory ? json(*memory) : json()});
    }
    devices.push_back({{"gpu", gpu}, {"points", std::move(points)}});
  }
  d["devices"] = std::move(devices);
  json regions = json::array();
  for (const auto& s : p.stats())
    regions.push_back(
        {core::valid_utf8(s.path), s.calls, s.total_ns, s.self_ns, s.avg_ns(), s.min_ns, s.max_ns});
  d["regions"] = std::move(regions);
  json kernels = json::array();
  for (const auto& k : p.kernel_summaries())
    kernels.push_back(
        {core::valid_utf8(k.name), k.calls, k.total_ns, k.share_pct, k.avg_ns(), k.max_ns});
  d["kernels"] = std::move(kernels);
  // The functions' table: the `top` hottest by self time and the `top` hottest by total time
  // (the callers, `main` and `train_step`, that self time alone never lists).
  std::vector<std::size_t> rows(hot.size());
  for (std::size_t i = 0; i < rows.size(); ++i)
    rows[i] = i;
  std::stable_sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) {
    return hot[a].total_samples > hot[b].total_samples;
  });
  std::vector<bool> listed(hot.size(), false);
  for (std::size_t i = 0; i < std::min(o.top, hot.size()); ++i)
    listed[i] = listed[rows[i]] = true;
  json functions = json::array();
  for (std::size_t i = 0; i < hot.size(); ++i) {
    if (!listed[i]) continue;
    const auto& f = hot[i];
    functions.push_back({core::valid_utf8(f.function),
                         core::valid_utf8(f.module == "[python]" ? f.file : f.module), f.self_pct,
                         f.total_pct, f.self_samples, f.total_samples});
  }
  d["functions"] = std::move(functions);
  return d;
}

/// JSON inside a <script> element: a "</script" in a name would end the element early. Every
/// '<' (JSON has them only inside strings) as \u003c: the same JSON, and no markup at all.
std::string script_safe(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text)
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  return out;
}

}  // namespace

std::string Profile::html_report(const HtmlOptions& options) const {
  std::optional<Profile> cut;
  auto data = page_data(detail::cut_deep_stacks(*this, cut), options);
  std::string title = detail::xml_text(data["title"].get<std::string>());
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"generator\" content=\"mainboard\">\n";
  // Nothing may be fetched: the page is all there is (a cluster node has no network to give).
  out +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n";
  out += "<title>" + title + "</title>\n<style>" + std::string(detail::kReportPageStyle) +
         "</style>\n</head>\n";
  out += R"HTML(<body>
<header><h1 id="title"></h1><div id="meta" class="meta"></div></header>
<div id="verdict" class="verdict" role="note"></div>
<section id="machine-section"><details><summary>The machine it ran on: <span id="machine-caption"></span></summary><figure><pre id="machine-figure" aria-label="schematic of the machine"></pre></figure></details></section>
<section id="unavailable-section"><h2>What could not be read</h2><ul id="unavailable" class="unavailable"></ul></section>
<section id="flame-section"><h2>Where the time went: stack samples</h2>
<div class="controls"><span id="views" role="group" aria-label="view"><button type="button" data-view="flame" title="callers above, callees below, the heaviest on the left (speedscope's left heavy)">Left heavy</button><button type="button" data-view="time" title="each thread's stacks along the run's time">Time order</button><button type="button" data-view="tree" title="rows that open: total and self per call path">Call tree</button><button type="button" data-view="inverted" title="by leaf function: where the time is spent, its callers below">Inverted</button><button type="button" data-view="sandwich" title="one function: its callers above, its callees below">Sandwich</button></span>
<label>Thread <select id="flame-thread"></select></label>
<label>Search <input id="flame-search" type="search" placeholder="function or regular expression (/)" size="26"></label>
<label title="Python frames as function (file:line), as py-spy names them; off: one frame per function"><input id="flame-lines" type="checkbox" checked> Lines</label>
<button id="flame-reset" type="button" disabled>Reset zoom</button></div>
<div class="controls"><label id="tf-python-label" title="native frames between Python frames hidden, a native leaf kept as one frame: py-spy's look"><input id="tf-python" type="checkbox"> Python frames only</label>
<label>Collapse <select id="tf-collapse"><option value="">a library…</option></select></label>
<span id="tf-list" aria-live="polite"></span>
<span class="legend"><span class="k-native">native</span><span class="k-python">Python</span><span class="k-kernel">kernel</span><span class="k-jit">JIT</span></span></div>
<div id="selection" class="controls selection" hidden><span>Selected: <code id="selection-name"></code></span>
<button id="act-focus" type="button" title="only the stacks through it, rooted at it">Focus on function</button>
<button id="act-merge" type="button" title="its time given to its callers">Merge function</button>
<button id="act-collapse" type="button" title="its library's frames as one frame"></button>
<button id="act-sandwich" type="button">Sandwich</button></div>
<div id="flame-status" role="status" aria-live="polite"></div>
<div id="flame-view"><div id="flame-crumbs" class="muted"></div><div id="flame" class="flame"></div>
<p class="muted">Each box is a function on the stack, as wide as the samples in it; callers above, callees below, the heaviest first. Click a box (or Enter) to zoom and select it; Escape resets.</p></div>
<div id="time-view" hidden><div id="time" class="time"></div><div id="time-tip" class="muted tip" aria-live="off"></div><p id="time-note" class="muted"></p></div>
<div id="tree-view" hidden><div id="calltree" class="calltree"></div></div>
<div id="sandwich-view" hidden><div id="sandwich-functions" class="sandwich-list"></div>
<p id="sandwich-title"></p><p class="muted">Its callers (it at the bottom):</p><div id="sandwich-callers" class="flame"></div>
<p class="muted">Its callees (it at the top):</p><div id="sandwich-callees" class="flame"></div></div>
<p id="flame-note" class="muted"></p></section>
<section id="timeline-section"><h2>Timeline: spans per thread, GPU under them</h2><div id="timeline"></div><p id="timeline-note" class="muted"></p></section>
<section><h2>Regions (spans)</h2><div id="regions"></div></section>
<section><h2>GPU kernels</h2><div id="kernels"></div></section>
<section><h2>Hot functions</h2><div id="functions"></div></section>
<section><h2>The text report</h2><details><summary>as <code>mainboard profile report</code> prints it</summary><pre id="report-text"></pre></details></section>
)HTML";
  out += "<script type=\"application/json\" id=\"mb-data\">";
  out += script_safe(data.dump(-1, ' ', false, json::error_handler_t::replace));
  out += "</script>\n<script>";
  out += detail::kReportPageScript;
  out += "</script>\n</body>\n</html>\n";
  return out;
}

void Profile::write_html_report(const std::filesystem::path& path,
                                const HtmlOptions& options) const {
  core::write_file_atomic(path, html_report(options));
}

}  // namespace mainboard
