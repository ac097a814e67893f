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
    const options = await page.$$eval('#flame-thread option', (o) => o.map((x) => x.textContent));
    if (options.length > 1) {
      if (!options[0].startsWith('All threads')) fail(`${name}.html: first view ${options[0]}`);
      await page.select('#flame-thread', '0');
    }
    // Python frames as py-spy names them, "function (file:line)"; by function (the Lines box
    // unticked) one frame per function, "function (file)", which the checks below compare with
    // the profile's functions.
    const named = await page.$$eval('#flame .fr', (fs) => fs.map((f) => f.dataset.name));
    if (name === 'python' && !named.some((n) => /^leaf_sqrt \(pictures_work\.py:\d+\)$/.test(n)))
      fail(`${name}.html: no Python frame named with its line: ${JSON.stringify(named.slice(0, 8))}`);
    await page.$eval('#flame-lines', (c) => { c.checked = false; c.dispatchEvent(new Event('change', { bubbles: true })); });
    const frames = await page.$$eval('#flame .fr', (fs) => fs.map((f) => ({
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
      const hits = await page.$$eval('#flame .fr.hit', (h) => h.map((x) => x.dataset.name));
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
  }

  // The timeline: a row per thread with spans, each with that thread's spans.
  const perThread = new Map();
  for (const s of profile.spans) perThread.set(s[1], (perThread.get(s[1]) || 0) + 1);
  const rows = await page.$$eval('#timeline g.thread-row', (r) => r.map((x) => [+x.dataset.thread, +x.dataset.spans, x.querySelectorAll('rect.span').length]));
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
    const calls = async () => page.$$eval('#regions tbody tr', (r) => r.map((x) => +x.children[1].textContent));
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
    const magenta = await page.$$eval('g.f rect[fill="rgb(230,0,230)"]', (r) => r.length);
    if (!magenta) fail(`${name}.svg: nothing highlighted for ${hot.function}`);
  }
  // Click a frame of depth 2 or more: it fills the plot (1200 - 2 × 10 px); Reset zoom comes back.
  const pick = await page.$$eval('g.f', (gs) => gs.filter((g) => +g.dataset.d >= 2).sort((a, b) => b.dataset.v - a.dataset.v)
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

for (const name of names) {
  const report = JSON.parse(fs.readFileSync(path.join(work, name + '.report.json')));
  const profile = JSON.parse(fs.readFileSync(path.join(work, name + '.json')));
  await checkHtml(name, report, profile);
  await checkSvg(name, report);
  console.log(`${name}: ${report.samples} samples, ${profile.spans.length} spans, ${profile.activities.length} GPU activities: looked at`);
}
await browser.close();
if (darkBrowser) await darkBrowser.close();
if (failures.length) { console.error(`${kind}: ${failures.length} failures`); process.exit(1); }
console.log(`pictures in ${kind}: every check passed`);
