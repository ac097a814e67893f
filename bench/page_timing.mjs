// How fast the report page opens and switches views in headless Chromium (Debian's), the
// network off: the time from navigation to the page's ready mark (the median of five loads),
// then each view's first switch (its script and the layout it forces; a view's trees are
// computed on its first showing and kept) and the median of four more.
//   node page_timing.mjs PAGE.html   (run where puppeteer-core is installed: tests/js's)
import puppeteer from 'puppeteer-core';
import { pathToFileURL } from 'node:url';

const file = process.argv[2];
const browser = await puppeteer.launch({
  browser: 'chrome', headless: true, executablePath: process.env.MAINBOARD_CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const opens = [];
let page;
for (let k = 0; k < 5; k++) {
  if (page) await page.close();
  page = await browser.newPage();
  await page.setViewport({ width: 1300, height: 900 });
  await page.setOfflineMode(true);
  page.on('pageerror', (e) => { console.error(`script error: ${e.message}`); process.exitCode = 1; });
  const start = Date.now();
  await page.goto(pathToFileURL(file).href);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
  opens.push(Date.now() - start);
}
await page.select('#flame-thread', (await page.$('#flame-thread option[value="-1"]')) ? '-1' : '0');
const line = [`open ${median(opens)} ms`];
for (const view of ['time', 'tree', 'inverted', 'sandwich', 'flame']) {
  const times = [];
  for (let k = 0; k < 5; k++) {
    // Away and back: each switch draws its view afresh.
    times.push(await page.evaluate((v) => {
      document.querySelector(`#views button[data-view="${v === 'flame' ? 'tree' : 'flame'}"]`).click();
      const start = performance.now();
      document.querySelector(`#views button[data-view="${v}"]`).click();
      void document.body.offsetHeight;  // the layout the switch forces
      return performance.now() - start;
    }, view));
  }
  line.push(`${view} ${times[0].toFixed(0)} ms (again ${median(times.slice(1)).toFixed(0)} ms)`);
}
console.log(line.join(', '));
await browser.close();
