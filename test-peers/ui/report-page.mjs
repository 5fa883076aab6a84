// Opens a report written by HtmlReport (proxy-server) from disk in a headless browser with the
// network off, for LivePageIT and ReportPageIT: what it shows, by count. Environment: REPORT (the
// HTML file), SCREENSHOTS (a directory), BROWSER (chromium, the default, or firefox: see
// browser.mjs) and BROWSER_BIN or CHROMIUM (the binary), SHOT (the screenshot's name, default
// 6-report-offline; ReportPageIT in mcp-chaos-cli gives its own). Prints one JSON object on stdout;
// for a drill's report, its scorecard panel by count and by row too.
import { BROWSER, open } from './browser.mjs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error('environment variable ' + name + ' is not set');
  return v;
};
const REPORT = env('REPORT');
const browser = await open({ viewport: { width: 1400, height: 1000 }, offline: true });
const result = { browser: BROWSER, version: browser.version, requests: [], consoleErrors: [] };
try {
  const page = browser.page;
  page.on('request', (r) => result.requests.push(r.url()));
  page.on('console', (m) => { if (m.type() === 'error') result.consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => result.consoleErrors.push(String(e)));
  await page.goto(pathToFileURL(REPORT).href);
  await page.waitForSelector('.row[data-seq]', { timeout: 10000 });
  result.title = await page.title();
  result.summary = await page.textContent('#summary');
  result.messageRows = await page.$$eval('.row[data-seq]:not([data-synthetic])', (rows) => rows.length);
  result.faultsByRule = await page.$$eval('.row:not([data-synthetic]) .badge[data-rule]', (badges) => {
    const by = {};
    for (const b of badges) by[b.dataset.rule] = (by[b.dataset.rule] || 0) + 1;
    return by;
  });
  result.rulesShown = await page.$$eval('#rules tr[data-rule]', (rows) => rows.map((r) => ({
    rule: r.dataset.rule, injected: r.querySelector('.injected').textContent })));
  result.checkInfo = await page.textContent('#check-info');
  // A drill's report: the scorecard panel's counts by outcome, and its rows.
  result.scorecard = await page.$$eval('#scorecard-totals [data-outcome]', (spans) => Object.fromEntries(
    spans.map((s) => [s.dataset.outcome, Number(s.querySelector('b').textContent)])));
  result.scorecardRows = await page.$$eval('#scorecard tr[data-scenario]', (rows) => rows.map((r) => ({
    scenario: r.dataset.scenario, outcome: r.dataset.outcome, shown: r.children[2].textContent })));
  result.sessionsShown = await page.$$eval('#sessions tbody tr', (rows) => rows.map((r) => ({
    session: r.children[0].textContent, messages: Number(r.children[1].textContent) + Number(r.children[2].textContent) })));
  result.steering = await page.$$eval('#panic, #add-rule, td.actions', (els) => els.filter((e) => e.offsetParent !== null).length);
  await page.screenshot({ path: join(env('SCREENSHOTS'), (process.env.SHOT || '6-report-offline') + '.png'), fullPage: true });
} catch (e) {
  result.error = String(e && e.stack || e);
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(result) + '\n');
process.exit(result.error ? 1 : 0);
