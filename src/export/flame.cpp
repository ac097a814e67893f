// The flame tree of a profile's samples (export/flame.hpp), and the classic interactive SVG
// flame graph drawn from it: one file that opens in any browser, frames as wide as their
// samples, click to zoom, search with the matched share, reset.
#include "export/flame.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/text.hpp"

namespace mainboard {

namespace detail {

std::string folded_field(std::string name) {
  for (auto& c : name)
    if (c == ';')
      c = ':';
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      c = '?';
  return name;
}

std::string frame_label(const StackFrame& f, bool lines) {
  std::string name = f.function.empty() ? "[unknown]" : f.function;
  if (f.module != "[python]" || f.file.empty()) return name;
  name += " (" + short_python_file(f.file);
  if (lines && f.line) name += ":" + std::to_string(f.line);
  return name + ")";
}

FrameKind frame_kind(const StackFrame& f) {
  if (f.module == "[python]") return FrameKind::python;
  if (f.module == "[kernel]") return FrameKind::kernel;
  if (f.module == "[jit]") return FrameKind::jit;
  if (f.module.empty() || f.module == "[unknown]") return FrameKind::unknown;
  return FrameKind::native;
}

const char* to_string(FrameKind kind) {
  switch (kind) {
    case FrameKind::native: return "native";
    case FrameKind::python: return "python";
    case FrameKind::kernel: return "kernel";
    case FrameKind::jit: return "jit";
    case FrameKind::unknown: return "unknown";
    case FrameKind::root: return "root";
  }
  return "native";
}

std::string flame_root_name(const Profile& p) {
  std::string root = p.command;
  if (root.empty()) {
    // The first thread of the system (a track of asyncio tasks is none: tid 0).
    for (const auto& t : p.threads)
      if (t.tid && !t.name.empty()) {
        root = t.name;
        break;
      }
    if (root.empty()) root = "program";
  }
  root = folded_field(root);
  for (auto& c : root)
    if (c == ' ') c = '_';
  return root;
}

std::string flame_thread_name(const Profile& p, std::uint32_t thread) {
  if (thread >= p.threads.size()) return "thread " + std::to_string(thread);
  const auto& t = p.threads[thread];
  // A track of no system thread (tid 0: asyncio tasks, whichever thread runs them) by its name.
  auto label = folded_field(t.name.empty() ? "thread" : t.name) +
               (t.tid ? "-" + std::to_string(t.tid) : std::string());
  // A merged job's threads say their rank: tids of different nodes may be equal.
  if (t.process < p.processes.size()) {
    const auto& pr = p.processes[t.process];
    label = (pr.rank ? "rank " + std::to_string(pr.rank->rank)
                     : "process " + std::to_string(pr.index)) +
            " " + label;
  }
  return label;
}

std::string flame_process_name(const Profile& p, std::uint32_t thread) {
  if (thread < p.threads.size()) {
    const auto& t = p.threads[thread];
    if (t.process < p.processes.size()) {
      const auto& pr = p.processes[t.process];
      return pr.rank ? "rank " + std::to_string(pr.rank->rank)
                     : "process " + std::to_string(pr.index);
    }
    // The sampler names a child process's threads "name (pid N)".
    auto at = t.name.rfind(" (pid ");
    if (at != std::string::npos && t.name.back() == ')')
      return folded_field(t.name.substr(at + 2, t.name.size() - at - 3));
  }
  return flame_root_name(p) + (p.pid ? "-" + std::to_string(p.pid) : std::string());
}

namespace {

/// The names of a profile's frames, interned once (one per function, module, and for Python the
/// file), and the trees built over them: a flame graph's, or the report page's one per thread.
class Forest {
 public:
  Forest(const Profile& p, bool lines) : p_(p), frame_name_(p.frames.size()) {
    for (std::size_t i = 0; i < p.frames.size(); ++i) {
      const auto& f = p.frames[i];
      auto kind = frame_kind(f);
      std::string detail = kind == FrameKind::python   ? f.file
                           : kind == FrameKind::native ? f.module
                                                       : std::string();
      detail = core::valid_utf8(detail);
      // The name by function alone first, so that a name with its line can point at it.
      auto function = intern({core::valid_utf8(frame_label(f, false)), detail, kind});
      frame_name_[i] =
          lines ? intern({core::valid_utf8(frame_label(f, true)), detail, kind, function})
                : function;
    }
    root_ = intern({core::valid_utf8(flame_root_name(p)), "", FrameKind::root});
  }

  std::vector<FlameName> names;

  /// Frame i's name.
  const std::vector<std::uint32_t>& frame_name() const { return frame_name_; }

  /// The tree of the samples counted per (thread, stack), under `grouping`'s roots.
  FlameTree tree(const std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t>& counts,
                 FlameGrouping grouping) {
    struct Building {
      std::uint32_t name;
      std::uint64_t value = 0, self = 0;
      std::map<std::uint32_t, std::uint32_t> children;  // name → node
    };
    std::vector<Building> b{{root_}};
    auto child = [&](std::uint32_t parent, std::uint32_t name) {
      auto it = b[parent].children.find(name);
      if (it != b[parent].children.end()) return it->second;
      auto index = static_cast<std::uint32_t>(b.size());
      b[parent].children.emplace(name, index);
      b.push_back({name});
      return index;
    };
    for (const auto& [key, n] : counts) {
      std::uint32_t at = 0;
      b[0].value += n;
      if (grouping != FlameGrouping::command) {
        auto label = grouping == FlameGrouping::thread ? flame_thread_name(p_, key.first)
                                                       : flame_process_name(p_, key.first);
        at = child(at, intern({core::valid_utf8(label), "", FrameKind::root}));
        b[at].value += n;
      }
      const auto& stack = p_.stacks[key.second];
      for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
        if (*it >= p_.frames.size()) continue;
        at = child(at, frame_name_[*it]);
        b[at].value += n;
      }
      b[at].self += n;
    }
    // Depth first, children by label: offsets are the samples left of each node.
    FlameTree tree;
    tree.nodes.reserve(b.size());
    struct Item {
      std::uint32_t node, parent, depth;
      std::uint64_t offset;
    };
    std::vector<Item> todo{{0, 0, 0, 0}};
    while (!todo.empty()) {
      auto item = todo.back();
      todo.pop_back();
      auto index = static_cast<std::uint32_t>(tree.nodes.size());
      const auto& node = b[item.node];
      tree.nodes.push_back(
          {node.name, item.parent, item.depth, item.offset, node.value, node.self});
      tree.max_depth = std::max(tree.max_depth, item.depth);
      std::vector<std::uint32_t> order;
      for (const auto& [name, c] : node.children)
        order.push_back(c);
      std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
        const auto &nx = names[b[x].name], &ny = names[b[y].name];
        return std::tie(nx.label, nx.detail, b[x].name) < std::tie(ny.label, ny.detail, b[y].name);
      });
      std::vector<Item> kids;
      std::uint64_t offset = item.offset;
      for (auto c : order) {
        kids.push_back({c, index, item.depth + 1, offset});
        offset += b[c].value;
      }
      todo.insert(todo.end(), kids.rbegin(), kids.rend());
    }
    return tree;
  }

 private:
  /// The index of name `n` (its `function` the index of the name without a line; unset, the
  /// name itself).
  std::uint32_t intern(FlameName n) {
    auto key = std::make_tuple(n.label, n.detail, n.kind);
    auto index = static_cast<std::uint32_t>(names.size());
    auto [it, fresh] = name_of_.emplace(key, index);
    if (fresh) {
      if (n.function == UINT32_MAX) n.function = index;
      names.push_back(std::move(n));
    }
    return it->second;
  }

  const Profile& p_;
  std::map<std::tuple<std::string, std::string, FrameKind>, std::uint32_t> name_of_;
  std::vector<std::uint32_t> frame_name_;  ///< frame index → name
  std::uint32_t root_ = 0;
};

}  // namespace

const Profile& cut_deep_stacks(const Profile& p, std::optional<Profile>& storage, StacksCut* cut) {
  StacksCut found;
  for (const auto& stack : p.stacks)
    if (stack.size() > kDeepStack) {
      ++found.stacks;
      found.deepest = std::max<std::uint64_t>(found.deepest, stack.size());
    }
  if (cut) *cut = found;
  if (!found.stacks) return p;
  storage.emplace(p);
  Profile& q = *storage;
  std::map<std::size_t, std::uint32_t> marker;  // frames left out → the frame saying so
  for (auto& stack : q.stacks) {
    if (stack.size() <= kDeepStack) continue;
    auto hidden = stack.size() - kKeptOuter - kKeptInner;
    auto [it, fresh] = marker.try_emplace(hidden, static_cast<std::uint32_t>(q.frames.size()));
    if (fresh) q.frames.push_back({fmt::format("[{} frames not shown]", hidden), "", "", 0, false});
    // Leaf first: the innermost frames, the marker, the outermost.
    std::vector<std::uint32_t> kept(stack.begin(), stack.begin() + kKeptInner);
    kept.push_back(it->second);
    kept.insert(kept.end(), stack.end() - kKeptOuter, stack.end());
    stack = std::move(kept);
  }
  return q;
}

FlameTree flame_tree(const Profile& p, FlameGrouping grouping, bool lines) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> counts;
  for (const auto& s : p.samples)
    if (s.stack < p.stacks.size()) ++counts[{s.thread, s.stack}];
  Forest forest(p, lines);
  auto tree = forest.tree(counts, grouping);
  tree.names = std::move(forest.names);
  return tree;
}

FlameForest flame_trees_per_thread(const Profile& p) {
  // One pass over the samples, one table of names: each thread's counts are a run of the map.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> counts;
  for (const auto& s : p.samples)
    if (s.stack < p.stacks.size()) ++counts[{s.thread, s.stack}];
  Forest forest(p, true);
  FlameForest out;
  for (auto it = counts.begin(); it != counts.end();) {
    auto end = counts.lower_bound({it->first.first + 1, 0});
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> one(it, end);
    out.trees.emplace_back(it->first.first, forest.tree(one, FlameGrouping::command));
    if (it->first.first == UINT32_MAX) break;
    it = end;
  }
  out.names = std::move(forest.names);
  return out;
}

FrameNames frame_names(const Profile& p) {
  Forest forest(p, true);
  return {std::move(forest.names), forest.frame_name()};
}

std::string xml_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : core::valid_utf8(s)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
          out += "\xEF\xBF\xBD";
        else
          out += c;
    }
  }
  return out;
}

}  // namespace detail

namespace {

using detail::FrameKind;

/// A stable colour per name, in the family of its kind: warm for native code, green for
/// Python, orange for the kernel, aqua for JIT code, grey when unknown (flamegraph.pl's hues).
std::string frame_colour(const detail::FlameName& n) {
  std::uint32_t h = 2166136261u;  // FNV-1a over the label: the same function, the same colour
  for (unsigned char c : n.label)
    h = (h ^ c) * 16777619u;
  double v1 = (h & 0xff) / 255.0, v2 = ((h >> 8) & 0xff) / 255.0, v3 = ((h >> 16) & 0xff) / 255.0;
  int r = 0, g = 0, b = 0;
  switch (n.kind) {
    case FrameKind::python:
      r = 50 + static_cast<int>(60 * v3), g = 160 + static_cast<int>(70 * v1),
      b = 60 + static_cast<int>(60 * v2);
      break;
    case FrameKind::kernel:
      r = 220 + static_cast<int>(35 * v3), g = 120 + static_cast<int>(50 * v1),
      b = static_cast<int>(40 * v2);
      break;
    case FrameKind::jit:
      r = 60 + static_cast<int>(50 * v1), g = 180 + static_cast<int>(50 * v2),
      b = 190 + static_cast<int>(50 * v3);
      break;
    case FrameKind::unknown:
    case FrameKind::root: r = g = b = 170 + static_cast<int>(40 * v1); break;
    case FrameKind::native:
      r = 205 + static_cast<int>(50 * v3), g = static_cast<int>(230 * v1),
      b = static_cast<int>(55 * v2);
      break;
  }
  return fmt::format("rgb({},{},{})", r, g, b);
}

// The viewer: zoom on click (the clicked frame fills the width; its ancestors stay, dimmed),
// search (a regular expression; matches in magenta, the share of samples under them, each
// sample counted once), reset; "?s=TERM" searches on load. Frames carry their samples
// (data-o: samples to their left, data-v: their own) and the layout is redone from them.
constexpr const char* kSvgScript = R"JS(
"use strict";
var svg, W, PAD = 10, FS = 12, frames, total, zoomed = null, details, matchedtxt, unzoombtn, searchbtn;
function init() {
  svg = document.documentElement;
  W = +svg.getAttribute("width");
  details = document.getElementById("details").firstChild;
  matchedtxt = document.getElementById("matched");
  unzoombtn = document.getElementById("unzoom");
  searchbtn = document.getElementById("search");
  frames = Array.prototype.slice.call(document.querySelectorAll("g.f"));
  total = +frames[0].getAttribute("data-v");
  frames.forEach(function (g) {
    g.addEventListener("click", function () { zoom(g); });
    g.addEventListener("mouseover", function () { details.nodeValue = g.querySelector("title").textContent; });
    g.addEventListener("mouseout", function () { details.nodeValue = " "; });
  });
  unzoombtn.addEventListener("click", function () { zoom(null); });
  searchbtn.addEventListener("click", function () {
    if (matchedtxt.getAttribute("data-term")) { search(""); return; }
    var term = prompt("Search for a function (a regular expression, e.g. ^numpy)", "");
    if (term) search(term);
  });
  window.addEventListener("keydown", function (e) {
    if ((e.ctrlKey || e.metaKey) && e.key === "f") { e.preventDefault(); searchbtn.dispatchEvent(new Event("click")); }
    else if (e.key === "Escape") { zoom(null); search(""); }
  });
  var s = new URLSearchParams(location.search).get("s");
  if (s) search(s);
}
function label(g) { return g.getAttribute("data-n"); }
function fit(text, px) {
  var n = Math.floor(px / (FS * 0.59));
  if (n < 3) return "";
  return text.length <= n ? text : text.slice(0, n - 2) + "..";
}
function layout(x0, w0) {
  var scale = (W - 2 * PAD) / w0;
  frames.forEach(function (g) {
    var o = +g.getAttribute("data-o"), v = +g.getAttribute("data-v");
    var rect = g.querySelector("rect"), text = g.querySelector("text");
    if (o + v <= x0 || o >= x0 + w0) { g.style.display = "none"; return; }
    var l = Math.max(o, x0), r = Math.min(o + v, x0 + w0);
    var x = PAD + (l - x0) * scale, w = (r - l) * scale;
    g.style.display = w < 0.1 ? "none" : "";
    rect.setAttribute("x", x.toFixed(2));
    rect.setAttribute("width", w.toFixed(2));
    text.setAttribute("x", (x + 3).toFixed(2));
    text.textContent = fit(label(g), w - 3);
  });
}
function zoom(g) {
  zoomed = g;
  frames.forEach(function (f) { f.classList.remove("parent"); });
  if (!g) { layout(0, total); unzoombtn.classList.add("hide"); return; }
  var o = +g.getAttribute("data-o"), v = +g.getAttribute("data-v"), d = +g.getAttribute("data-d");
  frames.forEach(function (f) {
    var fo = +f.getAttribute("data-o"), fv = +f.getAttribute("data-v");
    if (+f.getAttribute("data-d") < d && fo <= o && fo + fv >= o + v) f.classList.add("parent");
  });
  layout(o, v);
  unzoombtn.classList.remove("hide");
}
function search(term) {
  var re = null;
  if (term) { try { re = new RegExp(term); } catch (e) { re = null; } }
  var spans = [];
  frames.forEach(function (g, i) {
    var rect = g.querySelector("rect");
    var hit = re !== null && i > 0 && re.test(label(g));
    if (hit) {
      if (!rect.hasAttribute("data-fill")) rect.setAttribute("data-fill", rect.getAttribute("fill"));
      rect.setAttribute("fill", "rgb(230,0,230)");
      spans.push([+g.getAttribute("data-o"), +g.getAttribute("data-v")]);
    } else if (rect.hasAttribute("data-fill")) {
      rect.setAttribute("fill", rect.getAttribute("data-fill"));
      rect.removeAttribute("data-fill");
    }
  });
  // Each sample once: a match under another match is inside its span.
  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
  var matched = 0, end = -1;
  spans.forEach(function (s) {
    if (s[0] >= end) { matched += s[1]; end = s[0] + s[1]; }
    else if (s[0] + s[1] > end) { matched += s[0] + s[1] - end; end = s[0] + s[1]; }
  });
  if (re === null) {
    matchedtxt.textContent = " "; matchedtxt.removeAttribute("data-term");
    matchedtxt.removeAttribute("data-samples");
    searchbtn.textContent = "Search";
    return;
  }
  var pct = total ? 100 * matched / total : 0;
  matchedtxt.setAttribute("data-term", term);
  matchedtxt.setAttribute("data-samples", matched);
  matchedtxt.textContent = "Matched: " + (pct >= 10 ? pct.toFixed(1) : pct.toFixed(2)) + "%";
  searchbtn.textContent = "Reset search";
}
window.addEventListener("load", init);
)JS";

}  // namespace

std::string Profile::flamegraph_svg(const FlameOptions& options) const {
  using detail::xml_text;
  auto grouping = options.roots == FlameRoots::thread    ? detail::FlameGrouping::thread
                  : options.roots == FlameRoots::process ? detail::FlameGrouping::process
                                                         : detail::FlameGrouping::command;
  std::optional<Profile> storage;  // deep stacks cut
  auto tree = detail::flame_tree(detail::cut_deep_stacks(*this, storage), grouping, options.lines);
  const int width = std::clamp(options.width, 200, 20000);
  const double pad = 10, frame_h = 16, font = 12;
  const double top = font * 3 + 6, bottom = font * 2 + 10;
  const double plot = width - 2 * pad;
  const auto total = tree.nodes.empty() ? 0 : tree.nodes[0].value;
  // Frames narrower than a tenth of a pixel are left out, as flamegraph.pl leaves them (their
  // samples still count in their parents); zooming does not bring them back.
  const double min_samples = total ? 0.1 * static_cast<double>(total) / plot : 0;
  std::vector<bool> kept(tree.nodes.size(), false);
  std::size_t omitted = 0;
  std::uint32_t depth = 0;
  for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
    const auto& n = tree.nodes[i];
    kept[i] = (i == 0 || kept[n.parent]) && static_cast<double>(n.value) >= min_samples;
    if (kept[i])
      depth = std::max(depth, n.depth);
    else
      ++omitted;
  }
  const double height = top + (depth + 1) * frame_h + bottom;
  std::string title =
      options.title.empty() ? "Flame graph of " + detail::flame_root_name(*this) : options.title;
  std::string out;
  out.reserve(512 + tree.nodes.size() * 200);
  out += R"(<?xml version="1.0" standalone="no"?>)"
         "\n";
  out += fmt::format(
      R"(<svg version="1.1" width="{}" height="{:.0f}" viewBox="0 0 {} {:.0f}" )"
      R"(xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">)"
      "\n",
      width, height, width, height);
  out += fmt::format(
      "<!-- mainboard flame graph: {} samples, {} frames, {} narrower than 0.1 px left out -->\n",
      total, tree.nodes.size() - omitted, omitted);
  out += R"(<style type="text/css">
text { font-family: monospace; font-size: 12px; fill: rgb(0,0,0); }
#title { text-anchor: middle; font-size: 17px; }
.button { cursor: pointer; fill: rgb(60,60,160); }
.button:hover { text-decoration: underline; }
.hide { display: none; }
g.f { cursor: pointer; }
g.f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }
g.f text { pointer-events: none; }
g.parent { opacity: 0.5; }
</style>
<defs><linearGradient id="background" y1="0" y2="1" x1="0" x2="0">
<stop stop-color="#eeeeee" offset="5%"/><stop stop-color="#eeeeb0" offset="95%"/></linearGradient></defs>
)";
  out += "<script type=\"text/ecmascript\"><![CDATA[";
  out += kSvgScript;
  out += "]]></script>\n";
  out +=
      fmt::format(R"SVG(<rect x="0" y="0" width="{}" height="{:.0f}" fill="url(#background)"/>)SVG"
                  "\n",
                  width, height);
  out += fmt::format(R"(<text id="title" x="{:.1f}" y="{:.0f}">{}</text>)"
                     "\n",
                     width / 2.0, font * 2, xml_text(title));
  out += fmt::format(R"(<text id="details" x="{}" y="{:.0f}"> </text>)"
                     "\n",
                     pad, height - font / 2 - 4);
  out += fmt::format(R"(<text id="unzoom" class="button hide" x="{}" y="{:.0f}">Reset zoom</text>)"
                     "\n",
                     pad, font * 2);
  out += fmt::format(R"(<text id="search" class="button" x="{:.0f}" y="{:.0f}">Search</text>)"
                     "\n",
                     width - pad - 100, font * 2);
  out += fmt::format(R"(<text id="matched" x="{:.0f}" y="{:.0f}"> </text>)"
                     "\n",
                     width - pad - 100, height - font / 2 - 4);
  out += fmt::format(R"(<g id="frames">)"
                     "\n");
  const double scale = total ? plot / static_cast<double>(total) : 0;
  for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
    if (!kept[i]) continue;
    const auto& n = tree.nodes[i];
    const auto& name = tree.names[n.name];
    double x = pad + static_cast<double>(n.offset) * scale;
    double w = static_cast<double>(n.value) * scale;
    double y = top + n.depth * frame_h;  // the root at the top: the picture opens on it
    double pct = total ? 100.0 * static_cast<double>(n.value) / static_cast<double>(total) : 0;
    std::string tip = name.label;
    if (!name.detail.empty()) tip += " [" + name.detail + "]";
    tip += fmt::format(" ({} sample{}, {:.2f}%)", n.value, n.value == 1 ? "" : "s", pct);
    // The label as it fits, as the script fits it after a zoom.
    auto chars = static_cast<std::size_t>(std::max(0.0, (w - 3) / (font * 0.59)));
    std::string shown;
    if (chars >= 3) {
      shown = name.label;
      if (shown.size() > chars) {
        // Cut on a character boundary of UTF-8.
        std::size_t cut = chars - 2;
        while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xC0) == 0x80)
          --cut;
        shown = shown.substr(0, cut) + "..";
      }
    }
    out += fmt::format(
        R"(<g class="f" data-n="{}" data-k="{}" data-o="{}" data-v="{}" data-d="{}"><title>{}</title>)"
        R"(<rect x="{:.2f}" y="{:.1f}" width="{:.2f}" height="{:.1f}" fill="{}" rx="2" ry="2"/>)"
        R"(<text x="{:.2f}" y="{:.1f}">{}</text></g>)"
        "\n",
        xml_text(name.label), detail::to_string(name.kind), n.offset, n.value, n.depth,
        xml_text(tip), x, y, w, frame_h - 1, frame_colour(name), x + 3, y + frame_h - 5,
        xml_text(shown));
  }
  out += "</g>\n</svg>\n";
  return out;
}

void Profile::write_flamegraph_svg(const std::filesystem::path& path,
                                   const FlameOptions& options) const {
  core::write_file_atomic(path, flamegraph_svg(options));
}

}  // namespace mainboard
