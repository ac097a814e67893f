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

// ---- the samples ---------------------------------------------------------------------------
// The page carries one tree of every call path (node 0 the root) and each thread's samples in
// time order, each the node of its stack. Every view below is computed from them, after the
// reader's transforms, so that each counts samples as `profile report` does.
const DIGIT = new Int8Array(128).fill(-1);
"0123456789ABCDEFGHIJKLMNOPQRSTUVabcdefghijklmnopqrstuvWXYZwxyz-_".split("").forEach((c, i) => { DIGIT[c.charCodeAt(0)] = i; });
function numbers(text) {  // base 32, most significant first; a number's last digit is below 32
  const out = []; let n = 0;
  for (let i = 0; i < text.length; i++) { const v = DIGIT[text.charCodeAt(i)]; n = n * 32 + (v & 31); if (v < 32) { out.push(n); n = 0; } }
  return out;
}
const NAMES = D.names;  // [label, detail, kind, the name by function alone, group]; grows with collapses
const ROOT = NAMES.length; NAMES.push([D.root, "", "root", ROOT, -1]);
const label = (n) => NAMES[n][0];
const base = (() => {
  const v = numbers(D.tree.text), n = D.tree.nodes + 1, name = new Int32Array(n), parent = new Int32Array(n), open = [0];
  name[0] = ROOT; parent[0] = -1;
  for (let i = 1, k = 0, depth = 0; i < n; i++, k += 2) {
    const d = depth + 1 - v[k + 1];
    name[i] = v[k]; parent[i] = open[d - 1]; open[d] = i; depth = d;
  }
  return { name, parent };
})();
const tracks = D.tracks.map((t) => {
  const nodes = Int32Array.from(numbers(t.order)), times = new Float64Array(nodes.length);
  let at = 0, delta = 0, k = 0;
  for (const x of numbers(t.times)) {
    if (x & 1) for (let r = (x - 1) / 2; r > 0; r--) { at += delta; times[k++] = at * D.tick_ns; }
    else { delta = x / 2; at += delta; times[k++] = at * D.tick_ns; }
  }
  let counts = null;
  if (t.counts !== undefined) {
    counts = []; const c = numbers(t.counts);
    for (let i = 0, node = 0; i < c.length; i += 2) { node += c[i]; counts.push(node, c[i + 1]); }
  }
  return { thread: t.thread, label: t.label, samples: t.samples, nodes, times, counts };
});
const allSamples = tracks.reduce((a, t) => a + t.samples, 0);
const hasPython = NAMES.some((n) => n[2] === "python");

// ---- transforms: each step maps one call tree onto the next ----------------------------------
// inner[i]: the node that node i's callees hang under; leaf[i]: the node a sample whose stack
// ends at i counts in (they differ for "Python frames only": a native leaf stays, one frame).
// -1: the sample is out of the view (focus).
function Builder() { this.name = [ROOT]; this.parent = [-1]; this.index = new Map(); }
Builder.prototype.get = function (p, nm) {
  const key = p * 4194304 + nm; let i = this.index.get(key);
  if (i === undefined) { i = this.name.length; this.name.push(nm); this.parent.push(p); this.index.set(key, i); }
  return i;
};
const collapsed = new Map();  // group → the name of its collapsed frame
function collapsedName(group, kind) {
  if (!collapsed.has(group)) {
    const g = D.groups[group], i = NAMES.length;
    NAMES.push([g === "importlib" ? "import (importlib)" : "[" + g + "]", "frames of " + g + " collapsed", kind, i, group]);
    collapsed.set(group, i);
  }
  return collapsed.get(group);
}
// importlib collapsed: its run of frames is named after what it imports, "import torch.nn",
// when the frame under it runs a module's top level ("<module> (torch/nn/__init__.py)").
const imports = new Map();
function importName(nm, group) {
  const m = /^<module> \((.*?)(?::\d+)?\)$/.exec(label(nm));
  if (!m || NAMES[nm][2] !== "python") return -1;
  const module = m[1].replace(/\.py$/, "").replace(/\/__init__$/, "").split("/").join(".");
  const text = "import " + module;
  if (!imports.has(text)) { imports.set(text, NAMES.length); NAMES.push([text, "importlib's frames collapsed", "python", NAMES.length, group]); }
  return imports.get(text);
}
function applyStep(t, step) {
  const n = t.name.length, out = new Builder(), inner = new Int32Array(n), leaf = new Int32Array(n);
  const py = new Uint8Array(n);
  inner[0] = leaf[0] = step.kind === "focus" ? -1 : 0;
  for (let i = 1; i < n; i++) {
    const p = t.parent[i], P = inner[p], nm = t.name[i], fn = NAMES[nm][3];
    if (P < 0 && step.kind !== "focus") { inner[i] = leaf[i] = -1; continue; }
    switch (step.kind) {
      case "function": inner[i] = leaf[i] = out.get(P, fn); break;
      case "merge": inner[i] = leaf[i] = fn === step.key ? P : out.get(P, nm); break;
      case "collapse":
        if (D.groups[step.key] === "importlib") {  // named by what it imports (see importName)
          if (NAMES[nm][4] === step.key) {  // a frame of the run: its callees decide the name
            py[i] = 1; inner[i] = P; leaf[i] = out.get(P, collapsedName(step.key, NAMES[nm][2]));
          } else if (py[p]) {  // the first frame past the run
            const named = importName(nm, step.key);
            const run = out.get(P, named >= 0 ? named : collapsedName(step.key, "python"));
            inner[i] = leaf[i] = out.get(run, nm);
          } else inner[i] = leaf[i] = out.get(P, nm);
        } else if (NAMES[nm][4] === step.key) { const c = collapsedName(step.key, NAMES[nm][2]); inner[i] = leaf[i] = out.name[P] === c ? P : out.get(P, c); }
        else inner[i] = leaf[i] = out.get(P, nm);
        break;
      case "python": {
        const isPy = NAMES[nm][2] === "python";
        py[i] = isPy || py[p] ? 1 : 0;
        if (isPy) inner[i] = leaf[i] = out.get(py[p] ? P : 0, nm);  // native frames above the first Python frame: gone
        else if (py[p]) { inner[i] = P; leaf[i] = out.get(P, nm); }  // between Python frames: gone; a leaf: one frame
        else inner[i] = leaf[i] = out.get(P, nm);  // a stack with no Python frame: as it is
        break;
      }
      case "focus":
        if (P < 0) inner[i] = leaf[i] = fn === step.key ? out.get(0, fn) : -1;
        else inner[i] = leaf[i] = out.get(P, nm);
        break;
    }
  }
  return { tree: { name: out.name, parent: out.parent }, leaf };
}
let lines = !!D.lines, transforms = [];  // [{kind: "python" | "collapse" | "merge" | "focus", key}]
let calls = null;  // {tree, leafMap}: the call tree after the transforms; base node → its node
function buildCalls() {
  let t = base;
  const leafMap = new Int32Array(base.name.length);
  for (let i = 0; i < leafMap.length; i++) leafMap[i] = i;
  const steps = (lines ? [] : [{ kind: "function" }]).concat(transforms);
  for (const step of steps) {
    const r = applyStep(t, step);
    for (let i = 0; i < leafMap.length; i++) if (leafMap[i] >= 0) leafMap[i] = r.leaf[leafMap[i]];
    t = r.tree;
  }
  const n = t.name.length, depth = new Int32Array(n);
  for (let i = 1; i < n; i++) depth[i] = depth[t.parent[i]] + 1;
  t.depth = depth;
  calls = { tree: t, leafMap };
  cache = new Map();
}

// ---- the selected threads' weights on the call tree -----------------------------------------
let trackSel = -1;  // -1: every thread; else an index into tracks
let cache = new Map();
const selectedTracks = () => (trackSel < 0 ? tracks : [tracks[trackSel]]);
function weights() {
  if (cache.has("w")) return cache.get("w");
  const t = calls.tree, n = t.name.length, self = new Float64Array(n), map = calls.leafMap;
  for (const tr of selectedTracks()) {
    if (tr.counts) { for (let i = 0; i < tr.counts.length; i += 2) { const c = map[tr.counts[i]]; if (c >= 0) self[c] += tr.counts[i + 1]; } }
    else for (let i = 0; i < tr.nodes.length; i++) { const c = map[tr.nodes[i]]; if (c >= 0) self[c]++; }
  }
  const total = self.slice();
  for (let i = n - 1; i > 0; i--) total[t.parent[i]] += total[i];
  const kids = Array.from({ length: n }, () => []);
  for (let i = 1; i < n; i++) if (total[i] > 0) kids[t.parent[i]].push(i);
  // Heaviest first (speedscope's left heavy, the call tree's order); ties by name.
  for (const k of kids) if (k.length > 1) k.sort((a, b) => total[b] - total[a] || (label(t.name[a]) < label(t.name[b]) ? -1 : 1));
  const w = { self, total, kids };
  cache.set("w", w);
  return w;
}
// Per function (a name of the call tree): self, and total counting each sample once however
// often the function recurses on its stack.
function functionStats() {
  if (cache.has("f")) return cache.get("f");
  const t = calls.tree, w = weights(), stats = new Map(), active = new Map();
  const get = (nm) => { let s = stats.get(nm); if (!s) { s = { name: nm, self: 0, total: 0, nodes: [] }; stats.set(nm, s); } return s; };
  const stack = [[0, false]];
  while (stack.length) {
    const [i, leaving] = stack.pop(), nm = t.name[i];
    if (leaving) { active.set(nm, active.get(nm) - 1); continue; }
    if (i > 0) {
      const s = get(nm); s.self += w.self[i];
      if (!active.get(nm)) { s.total += w.total[i]; s.nodes.push(i); }
      active.set(nm, (active.get(nm) || 0) + 1); stack.push([i, true]);
    }
    for (const c of w.kids[i]) stack.push([c, false]);
  }
  const list = [...stats.values()].filter((s) => s.total > 0).sort((a, b) => b.total - a.total || b.self - a.self);
  cache.set("f", list);
  return list;
}

// ---- a flame graph (left heavy, and the sandwich's two) --------------------------------------
// A drawable tree: name[], parent[], value[], kids[] (heaviest first), with depth and offset.
function place(t) {
  const n = t.name.length;
  t.depth = new Int32Array(n); t.offset = new Float64Array(n); t.maxDepth = 0;
  const stack = [0];
  while (stack.length) {
    const i = stack.pop(); let o = t.offset[i];
    for (const c of t.kids[i]) { t.depth[c] = t.depth[i] + 1; t.offset[c] = o; o += t.value[c]; if (t.depth[c] > t.maxDepth) t.maxDepth = t.depth[c]; stack.push(c); }
  }
  return t;
}
function leftHeavy() {
  if (cache.has("flame")) return cache.get("flame");
  const w = weights(), t = place({ name: calls.tree.name, parent: calls.tree.parent, value: w.total, kids: w.kids });
  cache.set("flame", t);
  return t;
}
const ROW = 18;
const tip = (nm, value, whole) => {
  const n = NAMES[nm], m = / \(([^()]*)\)$/.exec(n[0]);
  let where = n[1] || "";
  if (n[2] === "python" && m && where) { const line = /:(\d+)$/.exec(m[1]); where = where + (line ? ":" + line[1] : ""); }
  return n[0] + (where ? " — " + where : "") + " — " + value + " samples, " + pct(100 * value / (whole || 1));
};
// Draws tree t in box: root at the top (flip: at the bottom), `zoom` a node filling the width.
function drawFlame(box, t, zoom, flip) {
  box.textContent = "";
  const W = box.clientWidth || 1000, H = (t.maxDepth + 1) * ROW + 2;
  box.style.height = H + "px";
  const zo = t.offset[zoom], zv = t.value[zoom] || 1, scale = W / zv;
  const ancestors = new Set(); for (let a = zoom; a !== 0; a = t.parent[a]) ancestors.add(t.parent[a]);
  const frag = document.createDocumentFragment();
  const add = (i, left, width) => {
    const nm = NAMES[t.name[i]], d = el("div", { "class": "fr k-" + nm[2], "data-i": i, "data-p": t.parent[i], "data-name": nm[0], "data-samples": t.value[i] });
    d.style.left = left + "px"; d.style.width = Math.max(width, 1) + "px";
    d.style.top = (flip ? (t.maxDepth - t.depth[i]) * ROW : t.depth[i] * ROW) + "px";
    d.style.setProperty("--h", hue(nm[0]));
    d.title = tip(t.name[i], t.value[i], t.value[0]);
    d.textContent = width > 24 ? nm[0] : "";
    if (width < 12) d.style.padding = "0";
    if (width >= 40) d.tabIndex = 0;
    if (ancestors.has(i)) d.classList.add("dim");
    if (searchRe && i > 0 && searchRe.test(nm[0])) d.classList.add("hit");
    frag.appendChild(d);
  };
  for (const a of ancestors) add(a, 0, W);
  const stack = [zoom];
  while (stack.length) {
    const i = stack.pop(), w = t.value[i] * scale;
    if (w < 0.5) continue;  // narrower than half a pixel: neither it nor its callees are drawn
    add(i, (t.offset[i] - zo) * scale, w);
    for (const c of t.kids[i]) stack.push(c);
  }
  box.appendChild(frag);
}

// ---- time order: each thread's stacks along the run's time ----------------------------------
const PERIOD = D.tick_ns * 10 * D.step;  // what one sample shown stands for
let timeZoom = null;  // [from, to] in ns from the start, or null: the whole run
// The boxes of one track: per depth, runs of consecutive samples under the same node.
function timeBoxes(tr) {
  const key = "boxes" + tr.thread;
  if (cache.has(key)) return cache.get(key);
  const t = calls.tree, map = calls.leafMap, open = [], byDepth = [];
  let shown = 0;
  const close = (d) => { const b = open[d]; (byDepth[d] ||= []).push(b); };
  const chain = [];
  for (let k = 0; k < tr.nodes.length; k++) {
    const c = map[tr.nodes[k]];
    if (c < 0) continue;
    shown++;
    const at = tr.times[k], end = at + PERIOD;
    chain.length = 0;
    for (let a = c; a !== 0; a = t.parent[a]) chain.push(a);
    chain.reverse();
    for (let d = 0; d < chain.length; d++) {
      const b = open[d];
      if (b && b.node === chain[d] && at - b.end < PERIOD * 0.5) { b.end = end; b.samples++; continue; }
      if (b) close(d);
      open[d] = { node: chain[d], start: at, end, samples: 1 };
    }
    for (let d = chain.length; d < open.length; d++) if (open[d]) { close(d); open[d] = null; }
  }
  for (let d = 0; d < open.length; d++) if (open[d]) close(d);
  const r = { byDepth, shown, depth: byDepth.length };
  cache.set(key, r);
  return r;
}
function drawTime() {
  const box = $("time"), list = selectedTracks(), span = D.t1 - D.t0 || 1;
  const [z0, z1] = timeZoom || [0, span];
  box.textContent = "";
  const W = box.clientWidth || 1000, L = 0;
  const scale = W / (z1 - z0 || 1);
  const one = list.length === 1, lanes = [], AXIS = 16;
  let y = AXIS;
  for (const tr of list.slice(0, 256)) {
    const b = timeBoxes(tr), rows = Math.max(1, b.depth);
    const rowH = one ? ROW : Math.max(2, Math.min(8, Math.floor(48 / rows)));
    lanes.push({ tr, b, y: y + (one ? 0 : 16), rowH, height: (one ? 0 : 16) + rows * rowH + 6 });
    y += lanes[lanes.length - 1].height;
  }
  const canvas = el("canvas", { role: "img", "aria-label": "stacks of " + (one ? list[0].label : "every thread") + " over time" });
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(W * dpr); canvas.height = Math.round(Math.max(y, 20) * dpr);
  canvas.style.width = W + "px"; canvas.style.height = Math.max(y, 20) + "px";
  const ctx = canvas.getContext("2d"); ctx.scale(dpr, dpr);
  ctx.font = "11.5px ui-monospace, 'DejaVu Sans Mono', monospace"; ctx.textBaseline = "middle";
  const style = getComputedStyle(document.body), hitColour = style.getPropertyValue("--hit").trim() || "#e000e0";
  const fg = style.color;
  const colours = new Map();
  const colour = (nm) => {
    let c = colours.get(nm);
    if (!c) { const n = NAMES[nm], h = hue(n[0]);
      c = n[2] === "python" ? "hsl(" + (95 + h / 2) + ",55%,58%)" : n[2] === "kernel" ? "hsl(" + (20 + h / 4) + ",90%,60%)"
        : n[2] === "jit" ? "hsl(" + (180 + h / 4) + ",55%,60%)" : n[2] === "native" ? "hsl(" + h + ",80%,62%)" : "hsl(0,0%," + (70 + h * 0.3) + "%)";
      colours.set(nm, c); }
    return c;
  };
  ctx.fillStyle = style.getPropertyValue("--muted").trim() || fg;
  for (let i = 0; i < 10; i++) {  // the time axis: a tick each tenth
    const x = W * i / 10;
    ctx.fillRect(x, 0, 1, AXIS - 2);
    ctx.fillText(dur(z0 + (z1 - z0) * i / 10), x + 3, AXIS / 2);
  }
  const labels = el("div", { "class": "lanes" });
  for (const lane of lanes) {
    if (!one) { ctx.fillStyle = fg; ctx.fillText(lane.tr.label + " — " + lane.b.shown + " samples", 2, lane.y - 8); }
    const head = el("div", { "class": "lane", "data-thread": lane.tr.thread, "data-samples": lane.b.shown, "data-top": lane.y }, lane.tr.label);
    labels.appendChild(head);
    lane.b.byDepth.forEach((boxes, d) => {
      let lastPx = -1;
      for (const b of boxes) {
        if (b.end < z0 || b.start > z1) continue;
        const x0 = (b.start - z0) * scale, x1 = (b.end - z0) * scale;
        if (Math.floor(x1) <= lastPx) continue;  // within a pixel already painted at this depth
        const nm = calls.tree.name[b.node];
        ctx.fillStyle = searchRe && searchRe.test(label(nm)) ? hitColour : colour(nm);
        const x = Math.max(x0, lastPx + 1, 0), w = Math.max(x1 - x, 1);
        ctx.fillRect(x, lane.y + d * lane.rowH, w - (w > 3 ? 0.5 : 0), lane.rowH - (lane.rowH > 4 ? 1 : 0));
        lastPx = Math.floor(x + w - 1);
        if (one && w > 30) { ctx.fillStyle = "#111"; ctx.save(); ctx.beginPath(); ctx.rect(x, lane.y + d * ROW, w - 2, ROW); ctx.clip();
          ctx.fillText(label(nm), x + 3, lane.y + d * ROW + ROW / 2); ctx.restore(); }
      }
    });
  }
  box.appendChild(canvas);
  box.appendChild(labels);
  const hidden = list.length - lanes.length;
  $("time-note").textContent = (z0 > 0 || z1 < span ? "Zoomed to " + dur(z0) + " – " + dur(z1) + " of " + dur(span) + ". " : "") +
    (hidden > 0 ? "The first 256 of " + list.length + " threads are drawn; pick one above. " : "") +
    (D.step > 1 ? "Every " + D.step + "th sample of each thread is drawn (the other views count all of them). " : "") +
    (one ? "" : "Click a thread to see its whole stacks. ");
  box.onmousemove = (e) => {
    const r = canvas.getBoundingClientRect(), x = e.clientX - r.left, yy = e.clientY - r.top;
    const lane = lanes.find((l) => yy >= l.y && yy < l.y + l.height - 6 - (one ? 0 : 16) + (one ? 0 : 0));
    let text = "";
    if (lane) {
      const d = Math.floor((yy - lane.y) / lane.rowH), at = z0 + x / scale, boxes = lane.b.byDepth[d] || [];
      let lo = 0, hi = boxes.length;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (boxes[mid].end <= at) lo = mid + 1; else hi = mid; }
      const b = boxes[lo];
      if (b && b.start <= at) text = tip(calls.tree.name[b.node], b.samples, lane.b.shown) + " — " + dur(b.start) + " to " + dur(b.end) + " (" + lane.tr.label + ")";
      box.dataset.hover = b && b.start <= at ? b.node : "";
      box.hoverBox = b && b.start <= at ? { lane, b } : null;
    }
    $("time-tip").textContent = text;
  };
  box.onclick = (e) => {
    box.onmousemove(e);
    const h = box.hoverBox;
    if (!one) { const r = canvas.getBoundingClientRect(), yy = e.clientY - r.top, lane = lanes.find((l) => yy >= l.y - 16 && yy < l.y - 16 + l.height);
      if (lane) { selectTrack(tracks.indexOf(lane.tr)); } return; }
    if (h) { timeZoom = [h.b.start, h.b.end]; select(calls.tree.name[h.b.node]); draw(); }
  };
}

// ---- call tree and inverted tree --------------------------------------------------------------
let treeOpen = new Set(), treeSelected = -1, treeMore = new Map();
function invertedTree() {
  if (cache.has("inverted")) return cache.get("inverted");
  const t = calls.tree, w = weights(), out = new Builder(), value = [0];
  for (let i = 1; i < t.name.length; i++) {
    const s = w.self[i];
    if (!s) continue;
    value[0] += s;
    let at = 0;
    for (let a = i; a !== 0; a = t.parent[a]) { at = out.get(at, t.name[a]); value[at] = (value[at] || 0) + s; }
  }
  const n = out.name.length, kids = Array.from({ length: n }, () => []);
  for (let i = 1; i < n; i++) kids[out.parent[i]].push(i);
  for (const k of kids) k.sort((a, b) => value[b] - value[a]);
  const r = { name: out.name, parent: out.parent, total: value, self: value.map((v, i) => (out.parent[i] === 0 ? v : 0)), kids };
  cache.set("inverted", r);
  return r;
}
function currentTree() {
  if (view === "inverted") return invertedTree();
  const w = weights();
  return { name: calls.tree.name, parent: calls.tree.parent, total: w.total, self: w.self, kids: w.kids };
}
function openHottest(t) {  // the hottest path, as far as it holds a hundredth of the samples
  treeOpen = new Set([0]);
  for (let i = 0, guard = 0; t.kids[i] && t.kids[i].length && guard < 200; guard++) {
    const c = t.kids[i][0];
    if (t.total[c] < t.total[0] / 100) break;
    treeOpen.add(c); i = c;
  }
}
function openMatches(t) {  // the paths to what the search finds (the first hundred matches)
  let found = 0;
  const stack = [0];
  while (stack.length && found < 100) {
    const i = stack.pop();
    if (i > 0 && searchRe.test(label(t.name[i]))) { found++; for (let a = t.parent[i]; a >= 0 && !treeOpen.has(a); a = t.parent[a]) treeOpen.add(a); }
    for (const c of t.kids[i]) stack.push(c);
  }
}
function drawTree() {
  const box = $("calltree"), t = currentTree(), whole = t.total[0] || 1;
  box.textContent = "";
  const head = el("div", { "class": "tr head", role: "row" });
  for (const [h, c] of [["Total", "n"], ["", "n"], ["Self", "n"], ["", "n"], [view === "inverted" ? "Function (callers below it)" : "Function (callees below it)", "name"]])
    head.appendChild(el("span", { "class": c, role: "columnheader" }, h));
  box.appendChild(head);
  const body = el("div", { role: "tree", "aria-label": view === "inverted" ? "inverted call tree" : "call tree" });
  const frag = document.createDocumentFragment();
  let rows = 0;
  const stack = [[0, 0]];
  while (stack.length && rows < 5000) {
    const [i, level, from] = stack.pop();
    if (i < 0) {  // the callees not listed
      const p = -1 - i, rest = t.kids[p].slice(from), samples = rest.reduce((a, c) => a + t.total[c], 0);
      const more = el("div", { "class": "tr more", role: "treeitem", "aria-level": level + 1, "data-more": p, "data-count": rest.length, "data-total": samples, tabindex: -1 });
      for (let k = 0; k < 4; k++) more.appendChild(el("span", { "class": "n" }, k === 0 ? String(samples) : ""));
      const cell = el("span", { "class": "name muted" }, "… " + rest.length + " more (show them)");
      cell.style.paddingLeft = (level * 14) + "px";
      more.appendChild(cell); frag.appendChild(more); rows++;
      continue;
    }
    const nm = t.name[i], n = NAMES[nm], open = treeOpen.has(i), leaf = !t.kids[i].length;
    const row = el("div", { "class": "tr" + (i === treeSelected ? " sel" : "") + (searchRe && i > 0 && searchRe.test(n[0]) ? " hit" : ""), role: "treeitem",
      "aria-level": level + 1, "data-i": i, "data-name": n[0], "data-detail": n[1], "data-total": t.total[i], "data-self": t.self[i], tabindex: i === 0 ? 0 : -1 });
    if (!leaf) row.setAttribute("aria-expanded", open ? "true" : "false");
    row.appendChild(el("span", { "class": "n" }, String(t.total[i])));
    row.appendChild(el("span", { "class": "n muted" }, pct(100 * t.total[i] / whole)));
    row.appendChild(el("span", { "class": "n" }, String(t.self[i])));
    row.appendChild(el("span", { "class": "n muted" }, pct(100 * t.self[i] / whole)));
    const cell = el("span", { "class": "name" });
    cell.style.paddingLeft = (level * 14) + "px";
    cell.appendChild(el("span", { "class": "tw" }, leaf ? "" : open ? "▾" : "▸"));
    const sw = el("span", { "class": "sw k-" + n[2] }); sw.style.setProperty("--h", hue(n[0])); cell.appendChild(sw);
    cell.appendChild(document.createTextNode(n[0]));
    if (n[1] && n[2] !== "python") cell.appendChild(el("span", { "class": "muted" }, "  " + n[1]));  // a Python frame names its file already
    row.title = tip(nm, t.total[i], whole);
    row.appendChild(cell);
    frag.appendChild(row); rows++;
    if (!open) continue;
    // The heaviest hundred callees (more on asking), the rest in one row.
    const kids = t.kids[i], shown = Math.min(kids.length, treeMore.get(i) || 100);
    if (shown < kids.length) stack.push([-1 - i, level + 1, shown]);
    for (let k = shown - 1; k >= 0; k--) stack.push([kids[k], level + 1]);
  }
  body.appendChild(frag); box.appendChild(body);
  if (rows >= 5000) box.appendChild(el("p", { "class": "muted" }, "The first 5000 rows are shown; close some to see the rest."));
}
function toggleRow(row) {
  const i = +row.dataset.i;
  treeSelected = i;
  if (view === "tree") zoomed = i;  // the left heavy graph opens zoomed to it
  if (row.hasAttribute("aria-expanded")) { if (treeOpen.has(i)) treeOpen.delete(i); else treeOpen.add(i); }
  select(currentTree().name[i]);
  drawTree();
  const again = $("calltree").querySelector('.tr[data-i="' + i + '"]'); if (again) again.focus();
}

// ---- sandwich: one function, its callers above and its callees below --------------------------
let sandwichName = -1;
function sandwichTrees(nm) {
  const t = calls.tree, w = weights(), stat = functionStats().find((s) => s.name === nm);
  const build = () => ({ b: new Builder(), value: [0] });
  const callers = build(), callees = build();
  callers.b.name[0] = callees.b.name[0] = nm;
  if (stat) for (const c of stat.nodes) {
    const v = w.total[c];
    callers.value[0] += v; callees.value[0] += v;
    let at = 0;  // callers: F's caller first, up to the outermost frame
    for (let a = t.parent[c]; a !== 0; a = t.parent[a]) { at = callers.b.get(at, t.name[a]); callers.value[at] = (callers.value[at] || 0) + v; }
    const stack = [[c, 0]];  // callees: F's subtree, merged under one F
    while (stack.length) {
      const [i, into] = stack.pop();
      for (const k of w.kids[i]) { const j = callees.b.get(into, t.name[k]); callees.value[j] = (callees.value[j] || 0) + w.total[k]; stack.push([k, j]); }
    }
  }
  const finish = (x) => {
    const n = x.b.name.length, kids = Array.from({ length: n }, () => []);
    for (let i = 1; i < n; i++) kids[x.b.parent[i]].push(i);
    for (const k of kids) k.sort((a, b) => x.value[b] - x.value[a]);
    return place({ name: x.b.name, parent: x.b.parent, value: x.value, kids });
  };
  return { callers: finish(callers), callees: finish(callees), stat };
}
function drawSandwich() {
  const stats = functionStats();
  if (sandwichName < 0 || !stats.some((s) => s.name === sandwichName)) {
    const bySelf = [...stats].sort((a, b) => b.self - a.self)[0];
    sandwichName = bySelf ? bySelf.name : -1;
  }
  const list = $("sandwich-functions"), whole = weights().total[0] || 1;
  list.textContent = "";
  const table = el("table"), head = el("tr");
  for (const [h, c] of [["function", ""], ["total", "n"], ["self", "n"], ["total samples", "n"], ["self samples", "n"]]) head.appendChild(el("th", { "class": c, scope: "col" }, h));
  const thead = el("thead"); thead.appendChild(head); table.appendChild(thead);
  const body = el("tbody");
  let shown = 0;
  for (const s of stats) {
    if (searchRe && !searchRe.test(label(s.name))) continue;
    if (shown++ >= 200) break;
    const tr = el("tr", { "data-name": label(s.name), "data-total": s.total, "data-self": s.self, tabindex: 0, "class": s.name === sandwichName ? "sel" : "" });
    tr.appendChild(el("td", { "class": "name" }, label(s.name)));
    tr.appendChild(el("td", { "class": "n" }, pct(100 * s.total / whole)));
    tr.appendChild(el("td", { "class": "n" }, pct(100 * s.self / whole)));
    tr.appendChild(el("td", { "class": "n" }, String(s.total)));
    tr.appendChild(el("td", { "class": "n" }, String(s.self)));
    tr.addEventListener("click", () => { sandwichName = s.name; select(s.name); draw(); });
    tr.addEventListener("keydown", (e) => { if (e.key === "Enter") { sandwichName = s.name; select(s.name); draw(); } });
    body.appendChild(tr);
  }
  table.appendChild(body); list.appendChild(table);
  if (sandwichName < 0) { $("sandwich-callers").textContent = ""; $("sandwich-callees").textContent = ""; return; }
  const s = sandwichTrees(sandwichName);
  $("sandwich-title").textContent = label(sandwichName) + ": " + s.callers.value[0] + " samples on the stack (" + pct(100 * s.callers.value[0] / whole) + "), " +
    (s.stat ? s.stat.self : 0) + " as the leaf (" + pct(100 * (s.stat ? s.stat.self : 0) / whole) + ")";
  $("sandwich-title").dataset.total = s.callers.value[0];
  $("sandwich-title").dataset.self = s.stat ? s.stat.self : 0;
  drawFlame($("sandwich-callers"), s.callers, 0, true);
  drawFlame($("sandwich-callees"), s.callees, 0, false);
}

// ---- the controls every view shares ----------------------------------------------------------
let view = "flame", zoomed = 0, searchRe = null, selected = -1;
function select(nm) {
  selected = nm;
  const box = $("selection");
  if (nm < 0 || nm === ROOT || nm === undefined) { box.hidden = true; return; }
  box.hidden = false;
  $("selection-name").textContent = label(nm);
  const g = NAMES[nm][4];
  $("act-collapse").hidden = !(g >= 0 && D.groups[g]);
  $("act-collapse").textContent = g >= 0 && D.groups[g] ? "Collapse " + D.groups[g] : "";
}
function searchStatus() {
  const t = calls.tree, w = weights(), s = $("flame-status");
  if (!searchRe) { s.textContent = ""; s.removeAttribute("data-samples"); s.removeAttribute("data-pct"); return; }
  // Each sample once: a match is counted unless a frame above it matched too.
  let matched = 0, frames = 0;
  const stack = [[0, false]];
  while (stack.length) {
    const [i, under] = stack.pop();
    const hit = i > 0 && searchRe.test(label(t.name[i]));
    if (hit) frames++;
    if (hit && !under) matched += w.total[i];
    for (const c of w.kids[i]) stack.push([c, under || hit]);
  }
  const whole = w.total[0], share = whole ? 100 * matched / whole : 0;
  s.setAttribute("data-samples", matched); s.setAttribute("data-pct", share.toFixed(4));
  s.textContent = "Matched " + frames + " frame" + (frames === 1 ? "" : "s") + ": " + matched + " of " + whole + " samples, " + pct(share) + " of this view";
}
function drawTransforms() {
  const list = $("tf-list");
  list.textContent = "";
  transforms.forEach((tf, k) => {
    const what = tf.kind === "python" ? "Python frames only" : tf.kind === "collapse" ? "collapsed " + D.groups[tf.key]
      : (tf.kind === "focus" ? "focus on " : "merged ") + label(tf.key);
    const chip = el("span", { "class": "chip", "data-kind": tf.kind }, what + " ");
    const x = el("button", { type: "button", "aria-label": "undo " + what }, "×");
    x.addEventListener("click", () => { transforms.splice(k, 1); changed(); });
    chip.appendChild(x); list.appendChild(chip);
  });
  $("tf-python").checked = transforms.some((t) => t.kind === "python");
}
function changed() {  // the transforms or the lines changed: a new call tree
  buildCalls(); zoomed = 0; timeZoom = null; treeSelected = -1; treeOpen = new Set(); treeMore = new Map();
  drawTransforms(); draw();
}
function selectTrack(i) { trackSel = i; $("flame-thread").value = String(i); cache = new Map(); zoomed = 0; timeZoom = null; treeOpen = new Set(); treeMore = new Map(); draw(); }
function draw() {
  for (const b of document.querySelectorAll("#views button")) b.setAttribute("aria-pressed", b.dataset.view === view ? "true" : "false");
  for (const id of ["flame-view", "time-view", "tree-view", "sandwich-view"])
    $(id).hidden = id !== (view === "inverted" ? "tree" : view) + "-view";
  if (view === "flame") {
    const t = leftHeavy();
    if (zoomed >= t.name.length || !(t.value[zoomed] > 0)) zoomed = 0;
    drawFlame($("flame"), t, zoomed, false);
    $("flame-crumbs").textContent = zoomed === 0 ? "" : "Zoomed to " + label(t.name[zoomed]) + " (" + pct(100 * t.value[zoomed] / (t.value[0] || 1)) + " of this view)";
  } else if (view === "time") drawTime();
  else if (view === "tree" || view === "inverted") {
    if (!treeOpen.size) openHottest(currentTree());
    if (searchRe) openMatches(currentTree());
    if (view === "tree" && zoomed > 0) {  // the zoom is shared: the zoomed frame's row, open and selected
      for (let a = calls.tree.parent[zoomed]; a >= 0; a = calls.tree.parent[a]) treeOpen.add(a);
      treeSelected = zoomed;
    }
    drawTree();
    const row = treeSelected >= 0 && $("calltree").querySelector('.tr[data-i="' + treeSelected + '"]');
    if (row) row.scrollIntoView({ block: "nearest" });
  } else drawSandwich();
  $("flame-reset").disabled = zoomed === 0 && !timeZoom;
  if (D.flame_left_out.nodes) $("flame-note").textContent = "Frames with fewer than " + D.flame_left_out.below_samples + " samples (" + D.flame_left_out.nodes + ") are left out of this page; their samples count in their callers.";
  searchStatus();
  document.body.dataset.view = view;
}
{
  const sel = $("flame-thread");
  if (!tracks.length) { $("flame-section").hidden = true; }
  else {
    if (tracks.length > 1) sel.appendChild(el("option", { value: -1 }, "All threads — " + allSamples + " samples"));
    tracks.forEach((t, i) => sel.appendChild(el("option", { value: i }, t.label + " — " + t.samples + " samples")));
    // Opens on the busiest thread.
    let best = 0;
    tracks.forEach((t, i) => { if (t.samples > tracks[best].samples) best = i; });
    trackSel = best; sel.value = String(best);
    sel.addEventListener("change", () => selectTrack(+sel.value));
    for (const b of document.querySelectorAll("#views button"))
      b.addEventListener("click", () => { view = b.dataset.view; if (view === "tree" || view === "inverted") treeOpen = new Set(); draw(); });
    $("flame").addEventListener("click", (e) => { const f = e.target.closest(".fr"); if (f) { zoomed = +f.dataset.i; select(leftHeavy().name[zoomed]); draw(); } });
    $("flame").addEventListener("keydown", (e) => { const f = e.target.closest(".fr"); if (f && (e.key === "Enter" || e.key === " ")) { e.preventDefault(); zoomed = +f.dataset.i; select(leftHeavy().name[zoomed]); draw(); } });
    for (const id of ["sandwich-callers", "sandwich-callees"])
      $(id).addEventListener("click", (e) => { const f = e.target.closest(".fr"); if (f && +f.dataset.i > 0) { const s = sandwichTrees(sandwichName), t = id === "sandwich-callers" ? s.callers : s.callees; sandwichName = t.name[+f.dataset.i]; select(sandwichName); draw(); } });
    $("calltree").addEventListener("click", (e) => {
      const more = e.target.closest(".tr[data-more]");
      if (more) { const p = +more.dataset.more; treeMore.set(p, (treeMore.get(p) || 100) + 1000); drawTree(); return; }
      const r = e.target.closest(".tr[data-i]"); if (r) toggleRow(r);
    });
    $("calltree").addEventListener("keydown", (e) => {
      const r = e.target.closest(".tr[data-i]"); if (!r) return;
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggleRow(r); }
      else if (e.key === "ArrowDown" || e.key === "ArrowUp") { e.preventDefault(); const n = e.key === "ArrowDown" ? r.nextElementSibling : r.previousElementSibling; if (n && n.dataset.i) { r.tabIndex = -1; n.tabIndex = 0; n.focus(); } }
    });
    $("flame-reset").addEventListener("click", () => { zoomed = 0; timeZoom = null; draw(); });
    $("flame-lines").checked = lines;
    $("flame-lines").addEventListener("change", (e) => { lines = e.target.checked; changed(); });
    $("tf-python").hidden = $("tf-python-label").hidden = !hasPython;
    $("tf-python").addEventListener("change", (e) => {
      transforms = transforms.filter((t) => t.kind !== "python");
      if (e.target.checked) transforms.push({ kind: "python" });
      changed();
    });
    {  // the libraries to collapse, busiest first
      const c = $("tf-collapse"), seen = new Map();
      for (let i = 1; i < base.name.length; i++) { const g = NAMES[base.name[i]][4]; if (g >= 0 && D.groups[g]) seen.set(g, true); }
      [...seen.keys()].sort((a, b) => (D.groups[a] < D.groups[b] ? -1 : 1)).forEach((g) => c.appendChild(el("option", { value: g }, D.groups[g])));
      c.addEventListener("change", () => { if (c.value !== "") { transforms.push({ kind: "collapse", key: +c.value }); c.value = ""; changed(); } });
      if (!seen.size) c.hidden = true;
    }
    const act = (id, kind) => $(id).addEventListener("click", () => {
      if (selected < 0) return;
      if (kind === "sandwich") { sandwichName = selected; view = "sandwich"; draw(); return; }
      if (kind === "collapse") transforms.push({ kind, key: NAMES[selected][4] });
      else transforms.push({ kind, key: NAMES[selected][3] });
      select(-1); changed();
    });
    act("act-focus", "focus"); act("act-merge", "merge"); act("act-collapse", "collapse"); act("act-sandwich", "sandwich");
    $("flame-search").addEventListener("input", (e) => {
      const v = e.target.value; searchRe = null;
      if (v) { try { searchRe = new RegExp(v); } catch (err) { searchRe = new RegExp(v.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")); } }
      draw();
    });
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape") { zoomed = 0; timeZoom = null; $("flame-search").value = ""; searchRe = null; draw(); }
      else if (e.key === "/" && document.activeElement.tagName !== "INPUT") { e.preventDefault(); $("flame-search").focus(); }
    });
    let resizing = 0;
    window.addEventListener("resize", () => { cancelAnimationFrame(resizing); resizing = requestAnimationFrame(draw); });
    buildCalls(); drawTransforms(); select(-1); draw();
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
