// The notebook of notebook.sh, executed and exported: what its reader sees. The executed cells'
// outputs (a profile made in the kernel is named after the notebook, not "asyncio_tasks"; a
// report is shown as its lines, not as a quoted string), then the HTML export in headless
// Chromium: each profile's page in its frame, the sampled run's flame graph drawn when the
// reader scrolls to it.
//   node notebook_check.mjs WORK_DIR
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import puppeteer from 'puppeteer-core';

const work = process.argv[2];
const failures = [];
const fail = (what) => { failures.push(what); console.error(`FAIL ${what}`); };

const notebook = JSON.parse(fs.readFileSync(path.join(work, 'notebook.executed.ipynb')));
const outputs = notebook.cells.map((c) => c.outputs.find((o) => o.output_type === 'execute_result'));
if (outputs.some((o) => !o)) fail(`a cell without a result: ${JSON.stringify(notebook.cells.map((c) => c.outputs))}`);
const text = (o, kind) => [].concat(o && o.data[kind] || []).join('');
const report = text(outputs[1], 'text/plain');
if (report.startsWith("'") || !report.startsWith('Profile: ')) fail(`the report shows as ${JSON.stringify(report.slice(0, 60))}`);
if (!text(outputs[1], 'text/html').startsWith('<pre>Profile: ')) fail('the report has no HTML of its lines');

const browser = await puppeteer.launch({
  browser: 'chrome', headless: true, executablePath: process.env.MAINBOARD_CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const page = await browser.newPage();
await page.setViewport({ width: 1300, height: 900 });
await page.setOfflineMode(true);
page.on('pageerror', (e) => fail(`script error: ${e.message}`));
await page.goto(pathToFileURL(path.join(work, 'notebook.html')).href);
const frames = await page.$$('iframe');
if (frames.length !== 2) fail(`${frames.length} frames in the export, 2 expected`);
const pages = [];
for (const handle of frames) {
  await handle.scrollIntoView();  // as the reader scrolls to it
  const frame = await handle.contentFrame();
  await frame.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
  pages.push(await frame.evaluate(() => ({
    title: document.title,
    rows: [...document.querySelectorAll('#timeline g.thread-row text')].map((t) => t.textContent),
    frames: [...document.querySelectorAll('#flame .fr')].map((f) => f.getBoundingClientRect().width).filter((w) => w >= 1).length,
  })));
  const shot = await handle.screenshot({ path: path.join(work, `notebook.frame${pages.length}.png`) });
  if (shot.length < 20000) fail(`frame ${pages.length}: its picture is ${shot.length} bytes: blank?`);
}
const [spans, run] = pages;
if (spans) {
  if (spans.title !== 'mainboard profile of Jupyter notebook') fail(`the kernel's profile is titled "${spans.title}"`);
  if (!spans.rows.length || spans.rows.some((r) => /-0$/.test(r))) fail(`the kernel's timeline rows: ${JSON.stringify(spans.rows)}`);
}
if (run && run.frames < 5) fail(`the sampled run's flame graph drew ${run.frames} frames`);
await browser.close();
if (failures.length) { console.error(`notebook: ${failures.length} failures`); process.exit(1); }
console.log(`notebook: executed, exported, looked at: ${JSON.stringify(pages)}`);
