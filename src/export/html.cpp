// The one-file HTML report of a profile: its evidence as JSON inside the page, drawn by the
// page's own script (no network, nothing loaded from elsewhere): the machine, the flame graphs,
// the spans' timeline with the GPU under it, the tables, the verdict and what was not read.
#include <algorithm>
#include <cmath>
#include <map>
#include <span>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/text.hpp"
#include "export/flame.hpp"
#include "mainboard/profile.hpp"
#include "mainboard/profile_report.hpp"
#include "mainboard/view.hpp"

namespace mainboard {

namespace {

using nlohmann::json;

/// A flame tree as the page reads it: [name, depth, value] per node, depth first (a node's
/// parent is the last one before it a level up), leaving out nodes under `min_value` samples.
json flame_rows(const detail::FlameTree& tree, std::uint64_t min_value, std::size_t* left_out) {
  json rows = json::array();
  std::vector<bool> kept(tree.nodes.size(), false);
  for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
    const auto& n = tree.nodes[i];
    kept[i] = (i == 0 || (kept[n.parent] && n.value >= min_value));
    if (!kept[i]) {
      ++*left_out;
      continue;
    }
    rows.push_back(n.name);
    rows.push_back(n.depth);
    rows.push_back(n.value);
  }
  return rows;
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
  const auto hot = p.hot_functions(std::max<std::size_t>(o.top, 1));
  const auto timeline = p.timeline(10);
  d["verdict"] = verdict_lines(p, hot, timeline);
  d["unavailable"] = p.unavailable;
  d["report"] = p.report(20);
  if (p.machine) {
    MachineView view(*p.machine);
    d["machine"] = {{"schematic", view.render({false, 100})}, {"summary", view.compact_summary()}};
  }
  // Flame graphs: one per thread with samples (the page merges them for "all threads"). At most
  // kMaxNodes nodes in all, the narrowest left out first (their samples still count in their
  // callers): the page stays small enough to mail whatever the variety of the stacks.
  constexpr std::size_t kMaxNodes = 100000;
  auto forest = detail::flame_trees_per_thread(p);
  std::vector<std::uint64_t> values;
  for (const auto& [thread, tree] : forest.trees)
    for (const auto& node : tree.nodes)
      values.push_back(node.value);
  std::uint64_t min_value = 0;
  if (values.size() > kMaxNodes) {
    std::nth_element(values.begin(), values.begin() + kMaxNodes, values.end(), std::greater<>());
    min_value = values[kMaxNodes] + 1;
  }
  json threads = json::array(), flames = json::array(), names = json::array();
  for (const auto& nm : forest.names)
    names.push_back({nm.label, nm.detail, detail::to_string(nm.kind), nm.function});
  std::size_t left_out = 0;
  for (const auto& [thread, tree] : forest.trees)
    flames.push_back({{"thread", thread},
                      {"label", core::valid_utf8(detail::flame_thread_name(p, thread))},
                      {"samples", tree.nodes[0].value},
                      {"nodes", flame_rows(tree, min_value, &left_out)}});
  d["flame_left_out"] = {{"nodes", left_out}, {"below_samples", min_value}};
  d["names"] = std::move(names);  // [label, detail, kind, the name by function alone]
  d["lines"] = o.lines;
  d["flames"] = std::move(flames);
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
  json functions = json::array();
  for (const auto& f : std::span(hot).first(std::min(o.top, hot.size())))
    functions.push_back({core::valid_utf8(f.function),
                         core::valid_utf8(f.module == "[python]" ? f.file : f.module), f.self_pct,
                         f.total_pct, f.self_samples, f.total_samples});
  d["functions"] = std::move(functions);
  return d;
}

constexpr const char* kStyle = R"CSS(
:root { --bg: #fdfdfc; --fg: #1d1d1f; --muted: #6b6b70; --line: #d9d9de; --panel: #f3f3f5;
  --accent: #3557c7; --hit: #e000e0; --gap: rgba(200, 40, 40, 0.18); --span: #6f8fd8;
  --gpu: #2e9e5b; --mem: #b26bd6; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #17181b; --fg: #e6e6ea; --muted: #9a9aa3; --line: #34353b; --panel: #212227;
    --accent: #8ea8ff; --hit: #ff4dff; --gap: rgba(255, 90, 90, 0.22); --span: #5b7bd0;
    --gpu: #4fc47f; --mem: #c98ce6; }
}
* { box-sizing: border-box; }
body { margin: 0; padding: 1.2rem 1.6rem 3rem; background: var(--bg); color: var(--fg);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 1.35rem; margin: 0 0 0.2rem; }
h2 { font-size: 1.05rem; margin: 1.8rem 0 0.5rem; border-bottom: 1px solid var(--line); padding-bottom: 0.2rem; }
.meta, .muted { color: var(--muted); }
.verdict { background: var(--panel); border-left: 4px solid var(--accent); padding: 0.5rem 0.8rem; margin: 0.8rem 0; }
.verdict p { margin: 0.2rem 0; }
.unavailable li { color: var(--muted); }
pre { background: var(--panel); padding: 0.6rem; overflow: auto; font: 12px/1.3 ui-monospace, "DejaVu Sans Mono", monospace; }
figure { margin: 0; }
figcaption { color: var(--muted); font-size: 0.9em; }
.controls { display: flex; gap: 0.6rem; align-items: center; flex-wrap: wrap; margin: 0.4rem 0; }
button, select, input { font: inherit; color: var(--fg); background: var(--panel); border: 1px solid var(--line); border-radius: 4px; padding: 0.15rem 0.5rem; }
button:focus-visible, select:focus-visible, input:focus-visible, .fr:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
#flame { position: relative; overflow: hidden; border: 1px solid var(--line); background: var(--bg); }
.fr { position: absolute; height: 17px; overflow: hidden; white-space: nowrap; text-overflow: ellipsis;
  font: 11.5px/17px ui-monospace, "DejaVu Sans Mono", monospace; padding: 0 3px; color: #111;
  border-right: 1px solid var(--bg); border-bottom: 1px solid var(--bg); cursor: pointer; }
.fr:hover { filter: brightness(1.12); }
.fr.dim { opacity: 0.45; }
.fr.hit { background: var(--hit) !important; color: #fff; }
.k-native { background: hsl(var(--h), 80%, 62%); }
.k-python { background: hsl(calc(95 + var(--h) / 2), 55%, 58%); }
.k-kernel { background: hsl(calc(20 + var(--h) / 4), 90%, 60%); }
.k-jit { background: hsl(calc(180 + var(--h) / 4), 55%, 60%); }
.k-unknown, .k-root { background: hsl(0, 0%, calc(70% + var(--h) * 0.3%)); }
.legend span { display: inline-block; padding: 0 0.4rem; margin-right: 0.3rem; color: #111; border-radius: 3px; --h: 30; }
#flame-status { min-height: 1.3em; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 0.2rem 0.5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
th button { border: none; background: none; padding: 0; font-weight: 600; cursor: pointer; }
th[aria-sort="ascending"] button::after { content: " \25B2"; }
th[aria-sort="descending"] button::after { content: " \25BC"; }
td.name { overflow-wrap: anywhere; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
#functions td:nth-child(2), #functions th:nth-child(2) { width: 24%; }
td.n, th.n { width: 1%; white-space: nowrap; }
#timeline svg { display: block; width: 100%; }
#timeline text { fill: var(--fg); font-size: 11px; }
#timeline .span { fill: var(--span); stroke: var(--bg); stroke-width: 0.5; }
#timeline .gap { fill: var(--gap); }
#timeline .axis { stroke: var(--line); }
#timeline .util { fill: none; stroke: var(--gpu); stroke-width: 1.2; }
#timeline .mem { fill: none; stroke: var(--mem); stroke-width: 1.2; }
details summary { cursor: pointer; }
)CSS";

constexpr const char* kScript = R"JS(
"use strict";
const D = JSON.parse(document.getElementById("mb-data").textContent);
const $ = (id) => document.getElementById(id);
const el = (tag, attrs, text) => {
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
};
const NS = "http://www.w3.org/2000/svg";
const sv = (tag, attrs) => { const e = document.createElementNS(NS, tag); for (const k in attrs) e.setAttribute(k, attrs[k]); return e; };
const dur = (ns) => { const a = Math.abs(ns);
  return a >= 1e9 ? (ns / 1e9).toFixed(3) + " s" : a >= 1e6 ? (ns / 1e6).toFixed(2) + " ms"
       : a >= 1e3 ? (ns / 1e3).toFixed(1) + " µs" : Math.round(ns) + " ns"; };
const pct = (x) => (x >= 10 ? x.toFixed(1) : x.toFixed(2)) + "%";
const bytes = (b) => b >= 2 ** 30 ? (b / 2 ** 30).toFixed(2) + " GiB" : (b / 2 ** 20).toFixed(1) + " MiB";
function hue(s) { let h = 2166136261; for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619); return ((h >>> 0) % 60); }

// ---- header ---------------------------------------------------------------------------------
document.title = D.title;
$("title").textContent = D.title;
{ const m = D.meta, bits = [];
  if (m.node) bits.push("on " + m.node);
  if (m.pid) bits.push("pid " + m.pid);
  bits.push(m.duration_s.toFixed(2) + " s");
  if (m.samples) bits.push(m.samples + " samples at " + m.sample_hz + " Hz" + (m.lost_samples ? " (" + m.lost_samples + " lost)" : ""));
  if (m.threads) bits.push(m.threads + " thread" + (m.threads === 1 ? "" : "s"));
  if (m.spans) bits.push(m.spans + " spans" + (m.dropped_spans ? " (" + m.dropped_spans + " not stored)" : ""));
  if (m.activities) bits.push(m.activities + " GPU activities");
  if (m.ranks) bits.push(m.ranks + " ranks");
  if (m.written_by) bits.push("mainboard " + m.written_by);
  $("meta").textContent = bits.join(" · ");
  for (const line of D.verdict) $("verdict").appendChild(el("p", {}, line));
  if (!D.verdict.length) $("verdict").hidden = true;
  if (D.unavailable.length) for (const u of D.unavailable) $("unavailable").appendChild(el("li", {}, u));
  else $("unavailable-section").hidden = true;
  if (D.machine) { $("machine-figure").textContent = D.machine.schematic; $("machine-caption").textContent = D.machine.summary; }
  else $("machine-section").hidden = true;
  $("report-text").textContent = D.report;
}

// ---- flame graph ------------------------------------------------------------------------------
// A tree: name[], parent[], value[], kids[] (by label), depth[], offset[] (samples to the left).
function treeOf(rows) {  // [name, depth, value] per node, depth first
  const n = rows.length / 3, t = { name: new Array(n), parent: new Array(n), value: new Array(n), kids: [], depth: new Array(n), offset: new Array(n) };
  const open = [];  // the last node seen at each depth
  for (let i = 0; i < n; i++) {
    const d = rows[3 * i + 1];
    t.name[i] = rows[3 * i]; t.value[i] = rows[3 * i + 2]; t.kids.push([]);
    t.parent[i] = d > 0 ? open[d - 1] : 0;
    if (i > 0) t.kids[t.parent[i]].push(i);
    open[d] = i; open.length = d + 1;
  }
  return t;
}
// Trees under one root, paths of equal names joined; each name first mapped by `as` (by function:
// a Python frame's name without its line, so that one function's lines become one frame).
function merge(trees, as = (n) => n) {
  const t = { name: [as(trees[0].name[0])], parent: [0], value: [0], kids: [[]] };
  const index = [new Map()];
  const walk = (src, i, at) => {
    t.value[at] += src.value[i];
    for (const c of src.kids[i]) {
      const name = as(src.name[c]);
      let j = index[at].get(name);
      if (j === undefined) { j = t.name.length; t.name.push(name); t.parent.push(at); t.value.push(0); t.kids.push([]); index.push(new Map()); index[at].set(name, j); t.kids[at].push(j); }
      walk(src, c, j);
    }
  };
  for (const s of trees) walk(s, 0, 0);
  const label = (i) => D.names[t.name[i]][0];
  for (const k of t.kids) k.sort((a, b) => label(a) < label(b) ? -1 : label(a) > label(b) ? 1 : 0);
  t.depth = []; t.offset = [];
  return t;
}
function place(t) {
  t.depth[0] = 0; t.offset[0] = 0; t.maxDepth = 0;
  const stack = [0];
  while (stack.length) {
    const i = stack.pop(); let o = t.offset[i];
    for (const c of t.kids[i]) { t.depth[c] = t.depth[i] + 1; t.offset[c] = o; o += t.value[c]; t.maxDepth = Math.max(t.maxDepth, t.depth[c]); stack.push(c); }
  }
  return t;
}
const flameTrees = D.flames.map((f) => place(treeOf(f.nodes)));
const views = [];
if (D.flames.length > 1) views.push({ label: "All threads", tree: null, samples: D.flames.reduce((a, f) => a + f.samples, 0) });
D.flames.forEach((f, i) => views.push({ label: f.label, tree: flameTrees[i], samples: f.samples, thread: f.thread }));
let view = null, zoomed = 0, searchRe = null, byFunction = !D.lines;
const asFunction = (n) => D.names[n][3];
function current() {
  if (byFunction) {
    if (!view.byFunction) view.byFunction = place(merge(view.tree ? [view.tree] : flameTrees, asFunction));
    return view.byFunction;
  }
  if (!view.tree) view.tree = place(merge(flameTrees));
  return view.tree;
}
const ROW = 18;
function drawFlame() {
  const box = $("flame"), t = current();
  box.textContent = "";
  const W = box.clientWidth || 1000;
  box.style.height = ((t.maxDepth + 1) * ROW + 2) + "px";
  const z = zoomed, zo = t.offset[z], zv = t.value[z] || 1, scale = W / zv;
  const ancestors = new Set(); for (let a = z; a !== 0; a = t.parent[a]) ancestors.add(t.parent[a]);
  const frag = document.createDocumentFragment();
  const add = (i, left, width) => {
    const nm = D.names[t.name[i]], d = el("div", { "class": "fr k-" + nm[2], "data-i": i, "data-name": nm[0], "data-samples": t.value[i] });
    d.style.left = left + "px"; d.style.width = Math.max(width, 1) + "px"; d.style.top = t.depth[i] * ROW + "px";
    d.style.setProperty("--h", hue(nm[0]));
    const share = 100 * t.value[i] / (t.value[0] || 1);
    d.title = nm[0] + (nm[1] ? " [" + nm[1] + "]" : "") + " — " + t.value[i] + " samples, " + pct(share);
    d.textContent = width > 24 ? nm[0] : "";
    if (width < 12) d.style.padding = "0";  // the box as narrow as its samples: no padding to widen it
    if (width >= 40) d.tabIndex = 0;
    if (ancestors.has(i)) d.classList.add("dim");
    if (searchRe && i > 0 && searchRe.test(nm[0])) d.classList.add("hit");
    frag.appendChild(d);
  };
  for (const a of ancestors) add(a, 0, W);
  const stack = [z];
  while (stack.length) {
    const i = stack.pop(), w = t.value[i] * scale;
    if (w < 0.5) continue;  // narrower than half a pixel: neither it nor its callees are drawn
    add(i, (t.offset[i] - zo) * scale, w);
    for (const c of t.kids[i]) stack.push(c);
  }
  box.appendChild(frag);
  $("flame-reset").disabled = z === 0;
  if (D.flame_left_out.nodes) $("flame-note").textContent = "Frames with fewer than " + D.flame_left_out.below_samples + " samples (" + D.flame_left_out.nodes + ") are left out of this page; their samples count in their callers.";
  $("flame-crumbs").textContent = z === 0 ? "" : "Zoomed to " + D.names[t.name[z]][0] + " (" + pct(100 * t.value[z] / (t.value[0] || 1)) + " of this view)";
  searchStatus();
}
function searchStatus() {
  const t = current(), s = $("flame-status");
  if (!searchRe) { s.textContent = ""; s.removeAttribute("data-samples"); s.removeAttribute("data-pct"); return; }
  // Each sample once: a match is counted unless a frame above it matched too.
  let matched = 0, frames = 0;
  const stack = [[0, false]];
  while (stack.length) {
    const [i, under] = stack.pop();
    const hit = i > 0 && searchRe.test(D.names[t.name[i]][0]);
    if (hit) frames++;
    if (hit && !under) matched += t.value[i];
    for (const c of t.kids[i]) stack.push([c, under || hit]);
  }
  const share = t.value[0] ? 100 * matched / t.value[0] : 0;
  s.setAttribute("data-samples", matched); s.setAttribute("data-pct", share.toFixed(4));
  s.textContent = "Matched " + frames + " frame" + (frames === 1 ? "" : "s") + ": " + matched + " of " + t.value[0] + " samples, " + pct(share) + " of this view";
}
function setView(i) { view = views[i]; zoomed = 0; drawFlame(); }
{
  const sel = $("flame-thread");
  if (!views.length) { $("flame-section").hidden = true; }
  else {
    views.forEach((v, i) => sel.appendChild(el("option", { value: i }, v.label + " — " + v.samples + " samples")));
    // Opens on the busiest thread.
    let best = 0;
    views.forEach((v, i) => { if (v.tree && (!views[best].tree || v.samples > views[best].samples)) best = i; });
    sel.value = best;
    sel.addEventListener("change", () => setView(+sel.value));
    $("flame").addEventListener("click", (e) => { const f = e.target.closest(".fr"); if (f) { zoomed = +f.dataset.i; drawFlame(); } });
    $("flame").addEventListener("keydown", (e) => { const f = e.target.closest(".fr"); if (f && (e.key === "Enter" || e.key === " ")) { e.preventDefault(); zoomed = +f.dataset.i; drawFlame(); } });
    $("flame-reset").addEventListener("click", () => { zoomed = 0; drawFlame(); });
    $("flame-lines").checked = !byFunction;
    $("flame-lines").addEventListener("change", (e) => { byFunction = !e.target.checked; zoomed = 0; drawFlame(); });
    $("flame-search").addEventListener("input", (e) => {
      const v = e.target.value; searchRe = null;
      if (v) { try { searchRe = new RegExp(v); } catch (err) { searchRe = new RegExp(v.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")); } }
      drawFlame();
    });
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape") { zoomed = 0; $("flame-search").value = ""; searchRe = null; drawFlame(); }
      else if (e.key === "/" && document.activeElement.tagName !== "INPUT") { e.preventDefault(); $("flame-search").focus(); }
    });
    window.addEventListener("resize", () => drawFlame());
    setView(best);
  }
}

// ---- timeline ---------------------------------------------------------------------------------
{
  const span = D.t1 - D.t0, rows = D.spans.rows;
  if ((!rows.length && !D.devices.length) || span <= 0) { $("timeline-section").hidden = true; }
  else {
    const W = 1000, L = 150, R = 10, X = (t) => L + (W - L - R) * t / span, LANE = 12;
    const byThread = new Map();
    for (const r of rows) {
      const depth = D.spans.paths[r[0]].split("/").length - 1;
      if (!byThread.has(r[1])) byThread.set(r[1], { lanes: 0, rows: [] });
      const b = byThread.get(r[1]); b.lanes = Math.max(b.lanes, depth + 1); b.rows.push([r, depth]);
    }
    let y = 20;
    const svg = sv("svg", { viewBox: "0 0 " + W + " 100", role: "img", "aria-label": "timeline of spans per thread" });
    const g = sv("g", {}); svg.appendChild(g);
    for (let i = 0; i <= 10; i++) {  // the time axis: a line each tenth, a label each fifth
      const x = X(span * i / 10);
      g.appendChild(sv("line", { x1: x, x2: x, y1: 14, y2: 10000, "class": "axis" }));
      if (i % 2) continue;
      const tx = sv("text", { x: x, y: 10, "text-anchor": i === 0 ? "start" : i === 10 ? "end" : "middle" }); tx.textContent = dur(span * i / 10); g.appendChild(tx);
    }
    const threadLabel = (t) => (D.threads[t] ? D.threads[t].label : "thread " + t);
    for (const [thread, b] of [...byThread.entries()].sort((a, c) => a[0] - c[0])) {
      const row = sv("g", { "class": "thread-row", "data-thread": thread, "data-spans": b.rows.length });
      const label = sv("text", { x: 4, y: y + 10 }); label.textContent = threadLabel(thread); row.appendChild(label);
      for (const [r, depth] of b.rows) {
        const x = X(r[2]), w = Math.max(X(r[2] + r[3]) - x, 0.4);
        const rect = sv("rect", { x: x, y: y + depth * LANE, width: w, height: LANE - 1, "class": "span", "data-path": D.spans.paths[r[0]] });
        const tip = sv("title", {}); tip.textContent = D.spans.paths[r[0]] + " — " + dur(r[3]) + " at " + dur(r[2]); rect.appendChild(tip);
        row.appendChild(rect);
      }
      g.appendChild(row);
      y += b.lanes * LANE + 8;
    }
    for (const dev of D.devices) {  // utilisation (0-100 %) and memory under the spans
      const H = 40, top = y + 4, mem = Math.max(1, ...dev.points.map((p) => p[2] || 0));
      const label = sv("text", { x: 4, y: top + 12 }); label.textContent = "GPU " + dev.gpu + " util / memory"; g.appendChild(label);
      const util = dev.points.filter((p) => p[1] !== null).map((p) => X(p[0]).toFixed(1) + "," + (top + H - H * p[1] / 100).toFixed(1));
      const memory = dev.points.filter((p) => p[2] !== null).map((p) => X(p[0]).toFixed(1) + "," + (top + H - H * p[2] / mem).toFixed(1));
      if (util.length) { const pl = sv("polyline", { points: util.join(" "), "class": "util" }); const tt = sv("title", {}); tt.textContent = "GPU " + dev.gpu + " utilisation, 0–100%"; pl.appendChild(tt); g.appendChild(pl); }
      if (memory.length) { const pl = sv("polyline", { points: memory.join(" "), "class": "mem" }); const tt = sv("title", {}); tt.textContent = "GPU " + dev.gpu + " memory, peak " + bytes(mem); pl.appendChild(tt); g.appendChild(pl); }
      y += H + 12;
    }
    for (const gap of D.timeline.gaps) {  // the longest idle gaps, across every row
      const r = sv("rect", { x: X(gap.start), y: 14, width: Math.max(X(gap.end) - X(gap.start), 1), height: y - 14, "class": "gap" });
      const tt = sv("title", {}); tt.textContent = "idle " + dur(gap.end - gap.start) + (gap.open_span ? " in " + gap.open_span : ""); r.appendChild(tt);
      g.insertBefore(r, g.firstChild);
    }
    svg.setAttribute("viewBox", "0 0 " + W + " " + (y + 4));
    $("timeline").appendChild(svg);
    const notes = [];
    if (D.timeline.source) notes.push("busy " + pct(D.timeline.busy_pct) + " of the time by the " + D.timeline.source + "; shaded: the longest idle gaps");
    if (D.spans.all > rows.length) notes.push("the " + rows.length + " longest of " + D.spans.all + " stored spans are drawn");
    $("timeline-note").textContent = notes.join("; ");
  }
}

// ---- tables -----------------------------------------------------------------------------------
function table(id, columns, rows) {
  const box = $(id);
  if (!rows.length) { box.closest("section").hidden = true; return; }
  const t = el("table"), head = el("tr"), body = el("tbody");
  let by = -1, desc = true;
  const fill = () => {
    body.textContent = "";
    const sorted = by < 0 ? rows : [...rows].sort((a, b) => { const x = a[columns[by].at], y = b[columns[by].at];
      return (x < y ? -1 : x > y ? 1 : 0) * (desc ? -1 : 1); });
    for (const r of sorted) {
      const tr = el("tr");
      for (const c of columns) tr.appendChild(el("td", { "class": c.num ? "n" : "name" }, c.show ? c.show(r[c.at], r) : r[c.at]));
      body.appendChild(tr);
    }
  };
  columns.forEach((c, i) => {
    const th = el("th", { "class": c.num ? "n" : "", scope: "col" }), b = el("button", { type: "button" }, c.title);
    b.addEventListener("click", () => { desc = by === i ? !desc : !!c.num; by = i;
      head.querySelectorAll("th").forEach((h) => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", desc ? "descending" : "ascending"); fill(); });
    th.appendChild(b); head.appendChild(th);
  });
  const thead = el("thead"); thead.appendChild(head); t.appendChild(thead); t.appendChild(body); box.appendChild(t);
  fill();
}
table("regions", [{ title: "region", at: 0 }, { title: "calls", at: 1, num: true }, { title: "total", at: 2, num: true, show: dur },
  { title: "self", at: 3, num: true, show: dur }, { title: "mean", at: 4, num: true, show: dur }, { title: "min", at: 5, num: true, show: dur },
  { title: "max", at: 6, num: true, show: dur }], D.regions);
table("kernels", [{ title: "kernel", at: 0 }, { title: "calls", at: 1, num: true }, { title: "total", at: 2, num: true, show: dur },
  { title: "share", at: 3, num: true, show: pct }, { title: "mean", at: 4, num: true, show: dur }, { title: "max", at: 5, num: true, show: dur }], D.kernels);
table("functions", [{ title: "function", at: 0 }, { title: "module or file", at: 1 }, { title: "self", at: 2, num: true, show: pct },
  { title: "total", at: 3, num: true, show: pct }, { title: "self samples", at: 4, num: true }, { title: "total samples", at: 5, num: true }], D.functions);
document.body.setAttribute("data-ready", "1");
)JS";

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
  out += "<title>" + title + "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n";
  out += R"HTML(<body>
<header><h1 id="title"></h1><div id="meta" class="meta"></div></header>
<div id="verdict" class="verdict" role="note"></div>
<section id="machine-section"><details><summary>The machine it ran on: <span id="machine-caption"></span></summary><figure><pre id="machine-figure" aria-label="schematic of the machine"></pre></figure></details></section>
<section id="unavailable-section"><h2>What could not be read</h2><ul id="unavailable" class="unavailable"></ul></section>
<section id="flame-section"><h2>Where the time went: stack samples</h2>
<div class="controls"><label>Thread <select id="flame-thread"></select></label>
<label>Search <input id="flame-search" type="search" placeholder="function name or regular expression (/)" size="40"></label>
<label title="Python frames as function (file:line), as py-spy names them; off: one frame per function"><input id="flame-lines" type="checkbox" checked> Lines</label>
<button id="flame-reset" type="button" disabled>Reset zoom</button>
<span class="legend"><span class="k-native">native</span><span class="k-python">Python</span><span class="k-kernel">kernel</span><span class="k-jit">JIT</span></span></div>
<div id="flame-status" role="status" aria-live="polite"></div><div id="flame-crumbs" class="muted"></div>
<div id="flame"></div><p id="flame-note" class="muted"></p>
<p class="muted">Each box is a function on the stack, as wide as the samples in it; callers above, callees below. Click a box (or Enter) to zoom; Escape resets.</p></section>
<section id="timeline-section"><h2>Timeline: spans per thread, GPU under them</h2><div id="timeline"></div><p id="timeline-note" class="muted"></p></section>
<section><h2>Regions (spans)</h2><div id="regions"></div></section>
<section><h2>GPU kernels</h2><div id="kernels"></div></section>
<section><h2>Hot functions</h2><div id="functions"></div></section>
<section><h2>The text report</h2><details><summary>as <code>mainboard profile report</code> prints it</summary><pre id="report-text"></pre></details></section>
)HTML";
  out += "<script type=\"application/json\" id=\"mb-data\">";
  out += script_safe(data.dump(-1, ' ', false, json::error_handler_t::replace));
  out += "</script>\n<script>";
  out += kScript;
  out += "</script>\n</body>\n</html>\n";
  return out;
}

void Profile::write_html_report(const std::filesystem::path& path,
                                const HtmlOptions& options) const {
  core::write_file_atomic(path, html_report(options));
}

}  // namespace mainboard
