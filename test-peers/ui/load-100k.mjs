// Measures the live page (/ui) under 100,000 messages, in headless Chromium: docs/ui.md quotes it.
// Not a CI test: a measurement. The page's own files are served from the source tree; the control
// API is played by this script (Playwright's request routing), which hands out the journal as a
// proxy with a 10,000-entry journal would to a page that keeps up: at most 10,000 entries a poll,
// 100,000 in all (50,000 requests and their answers, 200 sessions, one request in 25 faulted).
//
//   CHROMIUM=/usr/bin/chromium node ui/load-100k.mjs [TOTAL]
import { chromium } from 'playwright-core';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TOTAL = Number(process.argv[2] || 100000);
const PER_POLL = 10000;
const here = dirname(fileURLToPath(import.meta.url));
const assets = join(here, '..', '..', 'proxy-server', 'src', 'main', 'resources', 'dev', 'mcpchaos', 'server',
  'control', 'ui');
const BASE = 'http://127.0.0.1:9/';
const FAULTS = [['slow', 'latency', 'held 2000ms'], ['lose', 'drop', 'dropped'], ['fail', 'error', 'answered with error -32603; not forwarded'],
  ['twice', 'duplicate', 'sent 2 times']];

let made = 0;
function entries(since) {
  const out = [];
  while (made < TOTAL && out.length < PER_POLL) {
    const seq = ++made;
    const n = Math.floor((seq - 1) / 2);
    const request = seq % 2 === 1;
    const faulted = request && n % 25 === 0;
    const f = FAULTS[n % FAULTS.length];
    out.push({
      seq, elapsed_ns: seq * 1e6, time: new Date(Date.UTC(2026, 11, 7) + seq).toISOString(),
      session: 'session-' + (n % 200), transport: 'http',
      direction: request ? 'client_to_server' : 'server_to_client', kind: request ? 'request' : 'response',
      id: n, method: 'tools/call', tool: 'tool-' + (n % 7),
      ...(faulted ? { faults: [{ rule: f[0], fault: f[1], detail: f[2] }] } : {}),
      delivered: !(faulted && f[1] === 'drop'),
    });
  }
  return { capacity: PER_POLL, evicted: Math.max(0, made - PER_POLL), next: made + 1, entries: out };
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--no-first-run', '--disable-sync', '--enable-precise-memory-info'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.addInitScript(() => {
    window.__long = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); })
      .observe({ type: 'longtask', buffered: true });
  });
  const types = { html: 'text/html', js: 'text/javascript', css: 'text/css' };
  await page.route(BASE + '**', async (route) => {
    const url = new URL(route.request().url());
    const path = url.pathname;
    if (path.startsWith('/ui/')) {
      const file = path === '/ui/' ? 'index.html' : path.substring(4);
      return route.fulfill({ contentType: types[file.split('.').pop()], body: readFileSync(join(assets, file)) });
    }
    const json = (status, body) => route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) });
    if (path === '/status') {
      return json(200, { transport: 'http', seed: 1, seed_source: 'given', uptime_seconds: 10, faults_enabled: true,
        sessions_active: 200, messages: { client_to_server: Math.ceil(made / 2), server_to_client: Math.floor(made / 2) },
        rules: FAULTS.map(([name, fault]) => ({ name, enabled: true, fault, matched: made / 50, injected: made / 50 })),
        faults_injected: Math.floor(made / 50) });
    }
    if (path === '/events') return json(200, { last: 0, missed: 0, events: [] });
    if (path === '/journal') return json(200, entries(Number(url.searchParams.get('since'))));
    if (path === '/rules') return json(200, { rules: FAULTS.map(([name, type]) => ({ name, fault: { type } })) });
    return json(404, { error: path + ': not here' });
  });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const start = Date.now();
  await page.goto(BASE + 'ui/');
  await page.waitForFunction((total) => {
    const last = [...document.querySelectorAll('.row[data-seq]')].map((r) => Number(r.dataset.seq));
    return last.includes(total);
  }, TOTAL, { timeout: 120000, polling: 50 });
  const allShownMs = Date.now() - start;
  await page.waitForTimeout(1000);
  await cdp.send('HeapProfiler.collectGarbage');
  const metrics = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
  const domNodes = metrics.Nodes;
  const heapMb = metrics.JSHeapUsedSize / 1048576;
  // Scrolling back: the time from a scroll to the frame that shows the rows there.
  const scrollMs = await page.evaluate(async () => {
    const t = document.getElementById('timeline');
    const times = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      t.scrollTop = Math.random() * (t.scrollHeight - t.clientHeight);
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return { median: times[10], max: times[19] };
  });
  // The "only acted on" filter over every row kept.
  const filterMs = await page.evaluate(async () => {
    const t0 = performance.now();
    document.getElementById('only-faults').click();
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return performance.now() - t0;
  });
  const long = await page.evaluate(() => window.__long);
  const info = await page.textContent('#tl-info');
  await page.screenshot({ path: join(process.env.SCREENSHOTS || '/tmp', 'ui-100k.png') });
  console.log(JSON.stringify({
    messages: TOTAL, allShownMs, heapMb: Math.round(heapMb * 10) / 10, domNodes,
    longTasks: long.length, longestTaskMs: Math.round(Math.max(0, ...long)), scrollMs, filterMs: Math.round(filterMs),
    timelineInfo: info,
  }, null, 1));
} finally {
  await browser.close();
}
