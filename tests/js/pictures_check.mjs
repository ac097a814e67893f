// Opens mainboard's HTML reports and SVG flame graphs in a headless browser (Debian's Chromium or
// Firefox ESR, driven by puppeteer-core: the DevTools protocol for one, WebDriver BiDi for the
// other) with the network cut, and checks what a reader would: nothing fetched and no script
// error; a screenshot that is not blank; the widest frames are the profile's hottest functions
// with their shares; a search for a function highlights it and reports the share the profile
// says; a click (or Enter) zooms to a frame and Escape comes back; the timeline has a row per
// thread with that thread's spans; the tables sort; the dark theme is dark. The expected figures
// come from `mainboard profile report --json` of the same profile.
//   node pictures_check.mjs chromium|firefox WORK_DIR SCREENSHOT_DIR NAME...
//   (WORK_DIR/NAME.{html,svg,json,report.json}; Firefox's screenshots are named NAME.firefox.*)
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import puppeteer from 'puppeteer-core';

const [kind, work, shots, ...names] = process.argv.slice(2);
if (kind !== 'chromium' && kind !== 'firefox') throw new Error(`browser ${kind}: chromium or firefox`);
const failures = [];
const fail = (what) => { failures.push(what); console.error(`FAIL (${kind}) ${what}`); };
const near = (a, b, eps, what) => { if (!(Math.abs(a - b) <= eps)) fail(`${what}: ${a} against ${b}`); };
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const shot = (name, what) => path.join(shots, kind === 'chromium' ? `${name}.${what}.png` : `${name}.${kind}.${what}.png`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/// Firefox takes its colour scheme from a preference (WebDriver BiDi emulates no media features),
/// so the dark pages are opened in a second Firefox started dark.
function launch(dark) {
  if (kind === 'firefox')
    return puppeteer.launch({
      browser: 'firefox', headless: true, executablePath: process.env.MAINBOARD_FIREFOX || '/usr/bin/firefox-esr',
      extraPrefsFirefox: { 'layout.css.prefers-color-scheme.content-override': dark ? 0 : 1 },
    });
  return puppeteer.launch({
    browser: 'chrome', headless: true, executablePath: process.env.MAINBOARD_CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}
const browser = await launch(false);
let darkBrowser = null;
console.log(`${kind}: ${await browser.version()}`);

/// A page with the network off, every request but the file itself counted as a failure, and
/// every console error and uncaught exception too.
async function open(file, { dark = false, query = '' } = {}) {
  let owner = browser;
  if (dark && kind === 'firefox') owner = darkBrowser ||= await launch(true);
  const context = await owner.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width: 1300, height: 900 });
  await page.setOfflineMode(true);
  if (dark && kind === 'chromium') await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
  const url = pathToFileURL(file).href + query;
  page.on('console', (m) => { if (m.type() === 'error') fail(`${path.basename(file)}: console error: ${m.text()}`); });
  page.on('pageerror', (e) => fail(`${path.basename(file)}: script error: ${e.message}`));
  page.on('request', (r) => { if (r.url() !== url && !r.url().startsWith('data:')) fail(`${path.basename(file)}: fetched ${r.url()}`); });
  await page.goto(url);
  return { page, context };
}
/// page.$$eval without an element handle per match (thousands of frames: seconds a call).
const $$eval = (page, selector, fn, ...args) =>
  page.evaluate(`(${fn})([...document.querySelectorAll(${JSON.stringify(selector)})], ...${JSON.stringify(args)})`);
/// A search typed as a paste is: the whole text, one input event (clearing included).
const fill = (page, selector, text) => page.$eval(selector, (e, t) => {
  e.value = t;
  e.dispatchEvent(new Event('input', { bubbles: true }));
}, text);
const text = (page, selector) => page.$eval(selector, (e) => e.textContent);

/// A frame's name without a Python frame's "(file)" or "(file:line)".
const plain = (n) => n.replace(/ \([^()]*\)$/, '');

/// The hot functions whose name no other function shares (a search by name finds only them).
function uniqueHot(report) {
  const count = new Map();
  for (const f of report.hot_functions) count.set(f.function, (count.get(f.function) || 0) + 1);
  return report.hot_functions.filter((f) => count.get(f.function) === 1 && f.total_samples > 0);
}

// ---- what the profile itself says, for the views' checks ------------------------------------
/// A Python file as py-spy names it (the part past site-packages, dist-packages or the standard
/// library's directory, else its base name).
function shortFile(file) {
  for (const marker of ['/site-packages/', '/dist-packages/']) { const at = file.lastIndexOf(marker); if (at >= 0) return file.slice(at + marker.length); }
  const lib = file.lastIndexOf('/lib/python');
  if (lib >= 0) { const slash = file.indexOf('/', lib + 11); if (slash >= 0) return file.slice(slash + 1); }
  return file.slice(file.lastIndexOf('/') + 1);
}
const kindOf = (f) => (f.module === '[python]' ? 'python' : f.module === '[kernel]' ? 'kernel' : f.module === '[jit]' ? 'jit'
  : !f.module || f.module === '[unknown]' ? 'unknown' : 'native');
/// A frame by function alone (the page with Lines unticked): "function (file)" for Python.
const byFunction = (f) => (f.module === '[python]' && f.file ? `${f.function || '[unknown]'} (${shortFile(f.file)})` : f.function || '[unknown]');
/// What "Collapse" groups a frame under: a native frame's module, a Python frame's top package.
function groupOf(f) {
  const kind = kindOf(f);
  if (kind === 'native') return f.module.slice(f.module.lastIndexOf('/') + 1);
  if (kind !== 'python' || !f.file) return '';
  if (f.file.startsWith('<frozen ') && f.file.endsWith('>')) return f.file.slice(8).split(/[.>]/)[0];
  const short = shortFile(f.file), slash = short.indexOf('/');
  return slash >= 0 ? short.slice(0, slash) : short.replace(/\.py$/, '');
}
/// What the page shows beside a frame's name: a Python frame's file, a native frame's module.
const detailOf = (f) => (kindOf(f) === 'python' ? f.file : kindOf(f) === 'native' ? f.module : '');
/// Each sample's stack, outermost first, as frames of the profile (per thread).
function stacksOf(profile) {
  return profile.samples.filter((s) => s[2] < profile.stacks.length)
    .map((s) => ({ thread: s[1], frames: [...profile.stacks[s[2]]].reverse().filter((i) => i < profile.frames.length).map((i) => profile.frames[i]) }));
}
const clickView = async (page, v) => {
  await page.click(`#views button[data-view="${v}"]`);
  await page.waitForFunction((x) => document.body.dataset.view === x, {}, v);
};
const untick = (page, selector, on) => page.$eval(selector, (c, on) => { c.checked = on; c.dispatchEvent(new Event('change', { bubbles: true })); }, on);
/// The frames drawn in a flame box: index, parent, name, kind, samples.
const drawn = (page, box) => $$eval(page, `${box} .fr`, (fs) => fs.map((f) => ({ i: +f.dataset.i, p: +f.dataset.p, name: f.dataset.name,
  kind: [...f.classList].find((c) => c.startsWith('k-')).slice(2), samples: +f.dataset.samples })));

/// Time order, the call trees, the sandwich and the transforms, each against the profile's own
/// samples (all threads, Python frames by function).
async function checkViews(page, name, report, profile) {
  const stacks = stacksOf(profile), all = stacks.length;
  const perThread = new Map();
  for (const s of stacks) perThread.set(s.thread, (perThread.get(s.thread) || 0) + 1);

  // Time order: a lane per sampled thread with its samples; one thread alone, its own.
  await clickView(page, 'time');
  let lanes = await $$eval(page, '#time .lane', (l) => l.map((x) => [+x.dataset.thread, +x.dataset.samples]));
  if (lanes.length !== Math.min(256, perThread.size)) fail(`${name}.html: time order has ${lanes.length} lanes for ${perThread.size} threads`);
  for (const [thread, n] of lanes) if (perThread.get(thread) !== n) fail(`${name}.html: time order, thread ${thread}: ${n} samples, the profile ${perThread.get(thread)}`);
  await page.screenshot({ path: shot(name, 'time') });
  if (perThread.size > 1) {  // each thread alone (the first five)
    const values = (await $$eval(page, '#flame-thread option', (o) => o.map((x) => x.value))).filter((v) => v !== '-1');
    for (const v of values.slice(0, 5)) {
      await page.select('#flame-thread', v);
      lanes = await $$eval(page, '#time .lane', (l) => l.map((x) => [+x.dataset.thread, +x.dataset.samples]));
      if (lanes.length !== 1 || perThread.get(lanes[0][0]) !== lanes[0][1]) fail(`${name}.html: time order of thread option ${v}: ${JSON.stringify(lanes)}`);
    }
    await page.select('#flame-thread', '-1');
  }
  // Hovering the busiest thread's outermost row names a frame of the profile.
  const box = await page.$eval('#time canvas', (c) => { c.scrollIntoView(); const r = c.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width }; });
  const busiest = await $$eval(page, '#time .lane', (l) => l.map((x) => [+x.dataset.samples, +x.dataset.top]).sort((a, b) => b[0] - a[0])[0]);
  const labels = new Set(profile.frames.map(byFunction));
  let named = '';
  for (let k = 1; k < 40 && !named; k++) {
    await page.mouse.move(box.x + box.w * k / 40, box.y + busiest[1] + 1);
    named = await text(page, '#time-tip');
  }
  if (!named || !labels.has(named.split(' — ')[0])) fail(`${name}.html: time order's tooltip: "${named}"`);

  // The call tree: each row's total and self are the samples of its call path.
  const pathCount = new Map(), pathSelf = new Map();
  for (const s of stacks) {
    let key = '';
    s.frames.forEach((f, k) => { key += '\u0001' + byFunction(f) + '\u0002' + detailOf(f); pathCount.set(key, (pathCount.get(key) || 0) + 1); if (k === s.frames.length - 1) pathSelf.set(key, (pathSelf.get(key) || 0) + 1); });
  }
  await clickView(page, 'tree');
  const rows = await $$eval(page, '#calltree .tr[data-i]', (r) => r.map((x) => ({ level: +x.getAttribute('aria-level'), name: x.dataset.name + '\u0002' + x.dataset.detail,
    total: +x.dataset.total, self: +x.dataset.self, open: x.getAttribute('aria-expanded') })));
  if (!rows.length || rows[0].total !== all) fail(`${name}.html: call tree root ${rows.length && rows[0].total}, the profile ${all}`);
  if (rows.length < 3) fail(`${name}.html: the call tree opened ${rows.length} rows: the hottest path not open`);
  const path = [];
  for (const r of rows.slice(1)) {
    path.length = r.level - 2; path.push(r.name);
    const key = '\u0001' + path.join('\u0001');
    if ((pathCount.get(key) || 0) !== r.total || (pathSelf.get(key) || 0) !== r.self)
      fail(`${name}.html: call tree ${path.join(' > ').replace(/\u0002/g, ' in ')}: ${r.total} total, ${r.self} self; the profile ${pathCount.get(key)}, ${pathSelf.get(key) || 0}`);
  }
  await page.screenshot({ path: shot(name, 'tree') });
  // The zoom is shared: a frame zoomed in the left heavy graph is the call tree's selected row.
  await clickView(page, 'flame');
  const zoomTo = (await drawn(page, '#flame')).filter((x) => x.p > 0).sort((a, b) => b.samples - a.samples)[0];
  if (zoomTo) {
    await page.$eval(`#flame .fr[data-i="${zoomTo.i}"]`, (f) => f.click());
    await clickView(page, 'tree');
    const sel = await $$eval(page, '#calltree .tr.sel', (r) => r.map((x) => [x.dataset.name, +x.dataset.total]));
    if (sel.length !== 1 || sel[0][0] !== zoomTo.name || sel[0][1] !== zoomTo.samples)
      fail(`${name}.html: zoomed to ${zoomTo.name} (${zoomTo.samples}), the call tree selects ${JSON.stringify(sel)}`);
    await page.keyboard.press('Escape');
  }
  // Inverted: a row per leaf function, its samples as the leaf.
  const leaves = new Map();
  for (const s of stacks) if (s.frames.length) { const f = s.frames[s.frames.length - 1], l = byFunction(f) + '\u0002' + detailOf(f); leaves.set(l, (leaves.get(l) || 0) + 1); }
  await clickView(page, 'inverted');
  const inverted = await $$eval(page, '#calltree .tr[data-i][aria-level="2"]', (r) => r.map((x) => [x.dataset.name + '\u0002' + x.dataset.detail, +x.dataset.total]));
  // The heaviest hundred listed, the rest in one row.
  const rest = await $$eval(page, '#calltree .tr[data-more="0"]', (r) => r.map((x) => [+x.dataset.count, +x.dataset.total]));
  const [restCount, restSamples] = rest[0] || [0, 0];
  if (inverted.length + restCount !== leaves.size || inverted.length > 100) fail(`${name}.html: inverted tree has ${inverted.length} + ${restCount} leaf functions, the profile ${leaves.size}`);
  if (inverted.reduce((a, x) => a + x[1], 0) + restSamples !== all) fail(`${name}.html: inverted tree's samples do not add up to ${all}`);
  for (const [n, v] of inverted) if (leaves.get(n) !== v) fail(`${name}.html: inverted ${n}: ${v}, the profile ${leaves.get(n)}`);
  if (inverted.some((x, k) => k > 0 && x[1] > inverted[k - 1][1])) fail(`${name}.html: inverted tree not heaviest first`);

  // Sandwich: the hottest function of a name of its own, its callers and callees.
  const hot = uniqueHot(report).filter((f) => f.total_samples < all).sort((a, b) => b.total_samples - a.total_samples)[0];
  if (hot) {
    const f = profile.frames.find((x) => x.function === hot.function), label = byFunction(f);
    await clickView(page, 'sandwich');
    await fill(page, '#flame-search', '^' + escapeRe(label) + '$');
    await page.click(`#sandwich-functions tr[data-name="${label.replace(/"/g, '\\"')}"]`);
    const title = await page.$eval('#sandwich-title', (t) => [+t.dataset.total, +t.dataset.self]);
    if (title[0] !== hot.total_samples || title[1] !== hot.self_samples) fail(`${name}.html: sandwich ${label}: ${title}, the report ${hot.total_samples}, ${hot.self_samples}`);
    const callers = new Map(), callees = new Map();
    for (const s of stacks) {
      const k = s.frames.findIndex((x) => byFunction(x) === label);
      if (k < 0) continue;
      if (k > 0) { const c = byFunction(s.frames[k - 1]); callers.set(c, (callers.get(c) || 0) + 1); }
      if (k + 1 < s.frames.length) { const c = byFunction(s.frames[k + 1]); callees.set(c, (callees.get(c) || 0) + 1); }
    }
    for (const [box, want] of [['#sandwich-callers', callers], ['#sandwich-callees', callees]]) {
      const frames = await drawn(page, box), root = frames.find((x) => x.i === 0);
      if (!root || root.samples !== hot.total_samples) fail(`${name}.html: ${box} root ${root && root.samples}`);
      // Two functions of one name from different modules (libc's and the loader's __mprotect) are
      // two boxes that read the same: the profile's count of the name is theirs together.
      const got = new Map();
      for (const x of frames) if (x.p === 0 && x.i !== 0) got.set(x.name, (got.get(x.name) || 0) + x.samples);
      for (const [n, v] of want) if (v * 2000 >= hot.total_samples && got.get(n) !== v) fail(`${name}.html: ${box} ${n}: ${got.get(n)}, the profile ${v}`);
    }
    await page.screenshot({ path: shot(name, 'sandwich') });
    await fill(page, '#flame-search', '');
  }

  // Transforms, on the left heavy graph.
  await clickView(page, 'flame');
  const rootSamples = async () => (await drawn(page, '#flame')).find((x) => x.i === 0).samples;
  if (await page.$eval('#tf-python', (c) => !c.hidden)) {
    await untick(page, '#tf-python', true);
    const frames = await drawn(page, '#flame'), byI = new Map(frames.map((x) => [x.i, x]));
    const hasPyAbove = (x) => { for (let a = byI.get(x.p); a && a.i !== 0; a = byI.get(a.p)) if (a.kind === 'python') return true; return false; };
    for (const x of frames) {
      if (x.kind === 'python' && x.p !== 0 && byI.get(x.p) && byI.get(x.p).kind !== 'python') fail(`${name}.html: Python only: ${x.name} under the native ${byI.get(x.p).name}`);
      if (x.kind !== 'python' && x.i !== 0 && hasPyAbove(x) && frames.some((c) => c.p === x.i)) fail(`${name}.html: Python only: the native ${x.name} has callees`);
    }
    if (await rootSamples() !== all) fail(`${name}.html: Python only changed the samples`);
    await page.screenshot({ path: shot(name, 'python-only') });
    await untick(page, '#tf-python', false);
  }
  // Collapse a library: one frame, with every sample that has any of its frames.
  const groups = await $$eval(page, '#tf-collapse option', (o) => o.map((x) => [x.value, x.textContent]).filter((x) => x[0] !== ''));
  const pick = groups.find((g) => g[1] === 'importlib') || groups.find((g) => g[1] === 'torch') || groups[0];
  if (pick) {
    const g = pick[1], expected = stacks.filter((s) => s.frames.some((f) => groupOf(f) === g)).length;
    await page.select('#tf-collapse', pick[0]);
    // importlib's frames are named after what they import: "import torch", "import torch.nn".
    const collapsedLabel = g === 'importlib' ? 'import (importlib)' : `[${g}]`;
    await fill(page, '#flame-search', g === 'importlib' ? '^import [^_]' : '^' + escapeRe(collapsedLabel) + '$');
    const got = await page.$eval('#flame-status', (x) => +x.dataset.samples);
    if (got !== expected) fail(`${name}.html: ${g} collapsed: ${got} samples, the profile ${expected}`);
    const frames = await drawn(page, '#flame'), byI = new Map(frames.map((x) => [x.i, x]));
    const isCollapsed = (x) => x && (g === 'importlib' ? /^import [^_]/.test(x.name) && x.kind === 'python' : x.name === collapsedLabel);
    if (frames.some((x) => isCollapsed(x) && isCollapsed(byI.get(x.p)))) fail(`${name}.html: ${g} collapsed into nested frames`);
    if (name === 'torch' && !frames.some((x) => x.name === 'import torch')) fail(`${name}.html: importlib collapsed, no "import torch" frame`);
    const own = new Set(profile.frames.filter((f) => groupOf(f) === g).map(byFunction));
    for (const f of profile.frames) if (groupOf(f) !== g) own.delete(byFunction(f));
    const left = frames.filter((x) => own.has(x.name));
    if (left.length) fail(`${name}.html: ${g} collapsed, yet ${left[0].name} is drawn`);
    if (await $$eval(page, '#tf-list .chip', (c) => c.length) !== 1) fail(`${name}.html: no chip for the collapse`);
    await page.screenshot({ path: shot(name, 'collapsed') });
    await fill(page, '#flame-search', '');
    await page.click('#tf-list .chip button');
  }
  // Focus on, then merge, the hottest function of a name of its own.
  if (hot) {
    const label = byFunction(profile.frames.find((x) => x.function === hot.function));
    const selectIt = async () => {
      await fill(page, '#flame-search', '^' + escapeRe(label) + '$');
      await page.click('#flame .fr.hit');
      await fill(page, '#flame-search', '');
    };
    await selectIt();
    await page.click('#act-focus');
    let frames = await drawn(page, '#flame');
    const top = frames.filter((x) => x.p === 0 && x.i !== 0);
    if (await rootSamples() !== hot.total_samples || top.length !== 1 || top[0].name !== label)
      fail(`${name}.html: focus on ${label}: ${await rootSamples()} samples under ${JSON.stringify(top.map((x) => x.name))}, the report ${hot.total_samples}`);
    await page.click('#tf-list .chip button');
    await selectIt();
    await page.click('#act-merge');
    frames = await drawn(page, '#flame');
    if (frames.some((x) => x.name === label)) fail(`${name}.html: ${label} merged, yet drawn`);
    if (await rootSamples() !== all) fail(`${name}.html: merging ${label} changed the samples`);
    await page.click('#tf-list .chip button');
  }
}

async function checkHtml(name, report, profile) {
  const file = path.join(work, name + '.html');
  const { page, context } = await open(file);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
  const full = await page.screenshot({ path: shot(name, 'html'), fullPage: true });
  await page.screenshot({ path: shot(name, 'html.top') });  // what opens first
  if (full.length < 20000) fail(`${name}.html: the screenshot is ${full.length} bytes: blank?`);

  const samples = report.samples;
  if (samples > 0) {
    // All threads, as the profile's own tables count them.
    const options = await $$eval(page, '#flame-thread option', (o) => o.map((x) => x.textContent));
    if (options.length > 1) {
      if (!options[0].startsWith('All threads')) fail(`${name}.html: first view ${options[0]}`);
      await page.select('#flame-thread', '-1');
    }
    // Python frames as py-spy names them, "function (file:line)"; by function (the Lines box
    // unticked) one frame per function, "function (file)", which the checks below compare with
    // the profile's functions.
    const named = await $$eval(page, '#flame .fr', (fs) => fs.map((f) => f.dataset.name));
    if (name === 'python' && !named.some((n) => /^leaf_sqrt \(pictures_work\.py:\d+\)$/.test(n)))
      fail(`${name}.html: no Python frame named with its line: ${JSON.stringify(named.slice(0, 8))}`);
    await page.$eval('#flame-lines', (c) => { c.checked = false; c.dispatchEvent(new Event('change', { bubbles: true })); });
    const frames = await $$eval(page, '#flame .fr', (fs) => fs.map((f) => ({
      i: +f.dataset.i, name: f.dataset.name, samples: +f.dataset.samples, width: f.getBoundingClientRect().width,
      top: parseFloat(f.style.top), focusable: f.tabIndex === 0 })));
    if (frames.length < 5) fail(`${name}.html: ${frames.length} frames drawn`);
    if (frames.some((f) => /\.py:\d+\)$/.test(f.name))) fail(`${name}.html: by function, a frame still names its line`);
    for (const f of frames) f.name = plain(f.name);
    const root = frames.find((f) => f.i === 0);
    if (!root || root.samples !== samples) fail(`${name}.html: root has ${root && root.samples} samples, the profile ${samples}`);
    const rootWidth = root ? root.width : 1;
    // Widths in proportion to samples (a pixel of rounding).
    for (const f of frames.slice(0, 200)) near(f.width, Math.max(rootWidth * f.samples / samples, 1), 1.5, `${name}.html: width of ${f.name}`);
    // The widest frames: no frame shows more than its function's share of the samples, and the
    // widest one shows exactly that share when it is the only frame of its name.
    const best = new Map();
    for (const f of report.hot_functions) best.set(f.function, Math.max(best.get(f.function) || 0, f.total_pct));
    const widest = frames.filter((f) => f.i !== 0).sort((a, b) => b.samples - a.samples);
    const seen = new Set();
    for (const f of widest) {
      if (seen.size >= 10) break;
      if (seen.has(f.name)) continue;
      seen.add(f.name);
      const share = 100 * f.samples / samples;
      if (!best.has(f.name)) { fail(`${name}.html: widest frame ${f.name} is not among the hot functions`); continue; }
      if (share > best.get(f.name) + 0.01) fail(`${name}.html: frame ${f.name} shows ${share}% against the function's ${best.get(f.name)}%`);
    }
    if (widest.length && widest.filter((f) => f.name === widest[0].name).length === 1)
      near(100 * widest[0].samples / samples, best.get(widest[0].name), 0.01, `${name}.html: share of the widest frame ${widest[0].name}`);

    // Search: the share the profile says, for the five hottest functions with a name of their own.
    for (const f of uniqueHot(report).sort((a, b) => b.total_pct - a.total_pct).slice(0, 5)) {
      await fill(page, '#flame-search', '^' + escapeRe(f.function) + '( \\(.*\\))?$');
      const status = await page.$eval('#flame-status', (s) => ({ samples: +s.dataset.samples, text: s.textContent }));
      if (status.samples !== f.total_samples) fail(`${name}.html: search ${f.function}: ${status.samples} samples (${status.text}), the profile ${f.total_samples}`);
      const hits = await $$eval(page, '#flame .fr.hit', (h) => h.map((x) => x.dataset.name));
      if (!hits.length || hits.some((h) => plain(h) !== f.function)) fail(`${name}.html: search ${f.function} highlighted ${JSON.stringify(hits.slice(0, 5))}`);
    }
    await fill(page, '#flame-search', '');

    // Click to zoom: the frame fills the width; Escape comes back.
    const target = widest.find((f) => f.top >= 2 * 18 && f.focusable && f.samples < samples);
    if (target) {
      await page.click(`#flame .fr[data-i="${target.i}"]`);
      const width = await page.$eval(`#flame .fr[data-i="${target.i}"]`, (f) => f.getBoundingClientRect().width);
      near(width, rootWidth, 2, `${name}.html: zoomed frame ${target.name} width`);
      const crumbs = await text(page, '#flame-crumbs');
      if (!crumbs.includes(target.name)) fail(`${name}.html: after the zoom: "${crumbs}"`);
      await page.keyboard.press('Escape');
      if (!(await page.$eval('#flame-reset', (b) => b.disabled))) fail(`${name}.html: Escape left the zoom`);
      // And by keyboard: focus the frame, Enter.
      await page.focus(`#flame .fr[data-i="${target.i}"]`);
      await page.keyboard.press('Enter');
      near(await page.$eval(`#flame .fr[data-i="${target.i}"]`, (f) => f.getBoundingClientRect().width), rootWidth, 2,
        `${name}.html: frame ${target.name} zoomed by Enter`);
      await page.keyboard.press('Escape');
    } else fail(`${name}.html: no frame to zoom to`);
    await checkViews(page, name, report, profile);
  }

  // The timeline: a row per thread with spans, each with that thread's spans.
  const perThread = new Map();
  for (const s of profile.spans) perThread.set(s[1], (perThread.get(s[1]) || 0) + 1);
  const rows = await $$eval(page, '#timeline g.thread-row', (r) => r.map((x) => [+x.dataset.thread, +x.dataset.spans, x.querySelectorAll('rect.span').length]));
  if (rows.length !== perThread.size) fail(`${name}.html: ${rows.length} timeline rows for ${perThread.size} threads with spans`);
  for (const [thread, n, drawn] of rows)
    if (perThread.get(thread) !== n || drawn !== n) fail(`${name}.html: thread ${thread}: ${n} spans (${drawn} drawn), the profile ${perThread.get(thread)}`);
  if (profile.device_samples.length) {
    if ((await page.$$('#timeline polyline.util')).length !== 1) fail(`${name}.html: no utilisation line`);
    const gaps = await page.$$('#timeline rect.gap');
    if (gaps.length !== Math.min(10, report.timeline.gaps.length)) fail(`${name}.html: ${gaps.length} idle gaps marked, the report has ${report.timeline.gaps.length}`);
  }
  if (report.gpu) {
    const kernels = await page.$$('#kernels tbody tr');
    if (kernels.length !== report.gpu.kernels.length) fail(`${name}.html: ${kernels.length} kernel rows, the report ${report.gpu.kernels.length}`);
  }
  // Sorting: the regions by calls, most first, then fewest first.
  if (profile.span_stats.length > 1) {
    const calls = async () => $$eval(page, '#regions tbody tr', (r) => r.map((x) => +x.children[1].textContent));
    await page.click('#regions th:nth-child(2) button');
    let c = await calls();
    if (c.some((x, i) => i > 0 && x > c[i - 1])) fail(`${name}.html: regions by calls, descending: ${c}`);
    await page.click('#regions th:nth-child(2) button');
    c = await calls();
    if (c.some((x, i) => i > 0 && x < c[i - 1])) fail(`${name}.html: regions by calls, ascending: ${c}`);
  }
  await context.close();

  // The dark theme: dark.
  const dark = await open(file, { dark: true });
  await dark.page.waitForSelector('body[data-ready="1"]');
  const bg = await dark.page.$eval('body', (b) => getComputedStyle(b).backgroundColor);
  const [r, g, b] = bg.match(/\d+/g).map(Number);
  if (0.2126 * r + 0.7152 * g + 0.0722 * b > 60) fail(`${name}.html: the dark theme's background is ${bg}`);
  await dark.page.screenshot({ path: shot(name, 'html.dark') });
  await dark.context.close();
}

async function checkSvg(name, report) {
  const file = path.join(work, name + '.svg');
  const hot = uniqueHot(report).sort((a, b) => b.total_pct - a.total_pct)[0];
  // ?s= searches on load, as flamegraph.pl's does.
  const { page, context } = await open(file, { query: hot ? '?s=' + encodeURIComponent('^' + escapeRe(hot.function) + '( \\(.*\\))?$') : '' });
  await page.waitForFunction(() => document.getElementById('frames') !== null);
  await sleep(100);
  const picture = await page.screenshot({ path: shot(name, 'svg') });
  if (picture.length < 10000) fail(`${name}.svg: the screenshot is ${picture.length} bytes: blank?`);
  const total = await page.$eval('g.f', (g) => +g.dataset.v);
  if (total !== report.samples) fail(`${name}.svg: root ${total} samples, the profile ${report.samples}`);
  if (hot) {
    const matched = await page.$eval('#matched', (m) => ({ samples: +m.dataset.samples, text: m.textContent }));
    if (matched.samples !== hot.total_samples) fail(`${name}.svg: search ${hot.function}: ${matched.samples} (${matched.text}), the profile ${hot.total_samples}`);
    const shown = parseFloat(matched.text.replace('Matched: ', ''));
    near(shown, hot.total_pct, hot.total_pct >= 10 ? 0.05 : 0.005, `${name}.svg: matched share of ${hot.function}`);
    const magenta = await $$eval(page, 'g.f rect[fill="rgb(230,0,230)"]', (r) => r.length);
    if (!magenta) fail(`${name}.svg: nothing highlighted for ${hot.function}`);
  }
  // Click a frame of depth 2 or more: it fills the plot (1200 - 2 × 10 px); Reset zoom comes back.
  const pick = await $$eval(page, 'g.f', (gs) => gs.filter((g) => +g.dataset.d >= 2).sort((a, b) => b.dataset.v - a.dataset.v)
    .map((g) => ({ o: g.dataset.o, d: g.dataset.d, v: +g.dataset.v }))[0]);
  if (pick) {
    const sel = `g.f[data-o="${pick.o}"][data-d="${pick.d}"]`;
    await page.click(sel + ' rect');
    near(await page.$eval(sel + ' rect', (r) => +r.getAttribute('width')), 1180, 0.5, `${name}.svg: zoomed frame width`);
    if (await page.$eval('#unzoom', (u) => u.classList.contains('hide'))) fail(`${name}.svg: no Reset zoom after a zoom`);
    await page.click('#unzoom');
    near(await page.$eval(sel + ' rect', (r) => +r.getAttribute('width')), 1180 * pick.v / total, 0.5, `${name}.svg: width after Reset zoom`);
  }
  await context.close();
}

/// The pictures of the README (docs/images): each view of the samples of `name`'s page, light and
/// dark, and the left heavy graph with Python frames only and importlib collapsed. Chromium only.
async function docShots(name) {
  const dir = path.join(shots, 'views');
  fs.mkdirSync(dir, { recursive: true });
  for (const dark of [false, true]) {
    const { page, context } = await open(path.join(work, name + '.html'), { dark });
    await page.waitForSelector('body[data-ready="1"]');
    const section = await page.$('#flame-section');
    const theme = dark ? 'dark' : 'light';
    const take = async (what) => {  // the section, its first 620 pixels (clip: page coordinates)
      const box = await section.evaluate((e) => { const r = e.getBoundingClientRect(); return { x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height }; });
      await page.screenshot({ path: path.join(dir, `${what}.${theme}.png`), clip: { x: box.x - 8, y: box.y - 8, width: box.width + 16, height: Math.min(box.height + 16, 620) } });
    };
    for (const view of ['flame', 'time', 'tree', 'inverted', 'sandwich']) {
      await clickView(page, view);
      await take(view);
    }
    await clickView(page, 'flame');
    if (await page.$eval('#tf-python', (c) => !c.hidden)) await untick(page, '#tf-python', true);
    const importlib = await $$eval(page, '#tf-collapse option', (o) => (o.find((x) => x.textContent === 'importlib') || {}).value);
    if (importlib !== undefined) await page.select('#tf-collapse', importlib);
    await take('transformed');
    await context.close();
  }
}

for (const name of names) {
  const report = JSON.parse(fs.readFileSync(path.join(work, name + '.report.json')));
  const profile = JSON.parse(fs.readFileSync(path.join(work, name + '.json')));
  await checkHtml(name, report, profile);
  await checkSvg(name, report);
  console.log(`${name}: ${report.samples} samples, ${profile.spans.length} spans, ${profile.activities.length} GPU activities: looked at`);
}
const pictured = ['torch', 'python'].find((n) => names.includes(n));
if (kind === 'chromium' && pictured) await docShots(pictured);
await browser.close();
if (darkBrowser) await darkBrowser.close();
if (failures.length) { console.error(`${kind}: ${failures.length} failures`); process.exit(1); }
console.log(`pictures in ${kind}: every check passed`);
