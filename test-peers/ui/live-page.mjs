// Drives the proxy's live page (/ui) in a headless browser, as a person would, for LivePageIT
// (proxy-server): Debian's chromium (playwright-core) or firefox-esr (puppeteer-core), as BROWSER
// says (browser.mjs); neither driver downloads a browser.
//
// Environment: CONTROL (http://127.0.0.1:P, the control API), MCP (the proxy's Streamable HTTP
// endpoint), TOKEN (the control token), RULE (a rule that answers tools/call of FAULTED_TOOL with
// an error), FAULTED_TOOL, SCREENSHOTS (a directory), BROWSER (chromium, the default, or firefox) and
// BROWSER_BIN or CHROMIUM (the binary).
// Prints one JSON object on stdout, what it saw; the Java test asserts on it. Logs go to stderr.
import { BROWSER, open } from './browser.mjs';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error('environment variable ' + name + ' is not set');
  return v;
};
const CONTROL = env('CONTROL');
const MCP = env('MCP');
const TOKEN = env('TOKEN');
const RULE = env('RULE');
const FAULTED_TOOL = env('FAULTED_TOOL');
const SCREENSHOTS = env('SCREENSHOTS');
const log = (...a) => console.error('[live-page]', ...a);
mkdirSync(SCREENSHOTS, { recursive: true });

// ---- a minimal MCP client over Streamable HTTP (JSON or SSE answers) -------------------------
let mcpSession = null;
let nextId = 1;

async function mcp(method, params, notification = false) {
  const body = { jsonrpc: '2.0', method, params };
  const id = notification ? undefined : nextId++;
  if (!notification) body.id = id;
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2025-06-18' };
  if (mcpSession) headers['Mcp-Session-Id'] = mcpSession;
  const res = await fetch(MCP, { method: 'POST', headers, body: JSON.stringify(body) });
  if (res.headers.get('mcp-session-id')) mcpSession = res.headers.get('mcp-session-id');
  const text = await res.text();
  if (notification) return null;
  const type = res.headers.get('content-type') || '';
  const messages = type.includes('text/event-stream')
    ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.substring(5)))
    : text ? [JSON.parse(text)] : [];
  const answer = messages.find((m) => m.id === id && (m.result !== undefined || m.error !== undefined));
  if (!answer) throw new Error(method + ': no answer with id ' + id + ' (HTTP ' + res.status + '): ' + text);
  return answer;
}

const callTool = (name, args) => mcp('tools/call', { name, arguments: args });

async function control(method, path, body) {
  const res = await fetch(CONTROL + path, { method, body,
    headers: { Authorization: 'Bearer ' + TOKEN, 'Content-Type': 'application/yaml' } });
  return { status: res.status, json: await res.json().catch(() => null) };
}

// ---- the browser -------------------------------------------------------------------------------
const browser = await open({ viewport: { width: 1400, height: 1000 } });
const result = { browser: BROWSER, version: browser.version, steps: [], foreignRequests: [], consoleErrors: [] };
try {
  const page = browser.page;
  const controlHost = new URL(CONTROL).host;
  // Firefox reports the page's empty icon (href="data:,") as a request too: data: goes to no host.
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (url.protocol !== 'data:' && url.host !== controlHost) result.foreignRequests.push(r.url());
  });
  // A 401 (before the token) and the 400 of the bad rule are the page's expected answers, logged by
  // Chromium as "Failed to load resource" (Firefox logs no console message for them); anything else in the console is a defect of the page.
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) result.consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => result.consoleErrors.push(String(e)));
  const shot = async (name) => {
    await page.screenshot({ path: join(SCREENSHOTS, name + '.png'), fullPage: true });
    result.steps.push(name);
  };

  // 1. The page, then the token it asks for (the proxy has one).
  await page.goto(CONTROL + '/ui');
  result.url = page.url();
  await page.waitForSelector('#token-dialog[open]', { timeout: 10000 });
  await shot('1-token-asked');
  await page.fill('#token', TOKEN);
  await page.click('#token-submit');
  await page.waitForSelector(`#rules tr[data-rule="${RULE}"][data-enabled="true"]`, { timeout: 10000 });
  result.tokenInSessionStorage = await page.evaluate(() => sessionStorage.getItem('mcp-chaos-control-token'));
  result.tokenInLocalStorage = await page.evaluate(() => localStorage.length);
  await shot('2-ready');

  // 2. A client's calls: echo passes, FAULTED_TOOL is answered by the rule's error.
  await mcp('initialize', { protocolVersion: '2025-06-18', capabilities: {},
    clientInfo: { name: 'live-page-test', version: '1.0.0' } });
  await mcp('notifications/initialized', undefined, true);
  const echo = await callTool('echo', { message: 'before the fault' });
  result.echoText = echo.result && echo.result.content[0].text;
  const faulted = await callTool(FAULTED_TOOL, { a: 2, b: 3 });
  const answeredAt = Date.now();
  result.faultedAnswer = faulted;
  const badge = `.row[data-kind="request"][data-tool="${FAULTED_TOOL}"] .badge[data-rule="${RULE}"]`;
  await page.waitForSelector(badge, { timeout: 10000 });
  result.faultShownMs = Date.now() - answeredAt;
  result.faultedRow = await page.$eval(badge, (b) => {
    const row = b.closest('.row');
    return { seq: Number(row.dataset.seq), id: row.dataset.id, effect: b.dataset.effect, fault: b.dataset.fault,
      text: row.textContent };
  });
  result.echoRowBadges = await page.$$eval('.row[data-kind="request"][data-tool="echo"] .badge', (b) => b.length);
  result.madeRow = await page.$$eval(`.row[data-synthetic="made"] .badge[data-rule="${RULE}"]`, (b) => b.length);
  result.injectedShown = await page.$eval(`#rules tr[data-rule="${RULE}"] .injected`, (td) => td.textContent);
  await page.waitForFunction(() => /[1-9]\d* messages refereed/.test(document.getElementById('check-info').textContent),
    undefined, { timeout: 5000 });
  result.verdicts = { info: await page.textContent('#check-info'),
    totals: await page.$$eval('#check-totals span', (spans) => spans.map((s) => s.textContent)) };
  await shot('3-fault-shown');

  // 3. Disable the rule on the page: the API agrees, and the next call (the twin) is answered.
  await page.click(`#rules tr[data-rule="${RULE}"] button.toggle`);
  await page.waitForSelector(`#rules tr[data-rule="${RULE}"][data-enabled="false"]`, { timeout: 5000 });
  result.ruleAfterDisable = (await control('GET', '/rules/' + RULE)).json;
  const twin = await callTool(FAULTED_TOOL, { a: 2, b: 3 });
  result.twinAnswer = twin;
  await page.waitForFunction((tool) => {
    const rows = [...document.querySelectorAll(`.row[data-kind="request"][data-tool="${tool}"]`)];
    return rows.length >= 2;
  }, FAULTED_TOOL, { timeout: 5000 });
  result.twinRows = await page.$$eval(`.row[data-tool="${FAULTED_TOOL}"]`, (rows) => rows.map((r) => ({
    seq: Number(r.dataset.seq), kind: r.dataset.kind, synthetic: r.dataset.synthetic || null,
    badges: r.querySelectorAll('.badge').length })));
  await shot('4-rule-disabled');

  // 4. A bad rule in the form: the parser's error shows.
  await page.fill('#f-name', 'bad-latency');
  await page.selectOption('#f-fault', 'latency');
  await page.fill('#f-tool', FAULTED_TOOL);
  await page.fill('#f-params', 'latency: soon');
  result.badRuleSent = await page.inputValue('#f-rule');
  await page.click('#f-submit');
  await page.waitForSelector('#f-error:not([hidden])', { timeout: 5000 });
  result.formError = await page.textContent('#f-error');
  result.apiError = (await control('POST', '/rules', result.badRuleSent)).json;
  await page.locator('#add-rule').scrollIntoViewIfNeeded();
  await shot('5-bad-rule');
} catch (e) {
  result.error = String(e && e.stack || e);
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(result) + '\n');
process.exit(result.error ? 1 : 0);
