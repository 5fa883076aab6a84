// mcp-chaos live page (docs/ui.md). Plain JavaScript, no library, nothing from another host.
// It polls the control API it was served by (relative URLs: "../status" from /ui/) every
// POLL_MS: /status always, /events and /journal from where it left off, /check less often.
// Memory stays bounded whatever the traffic: at most MAX_ROWS timeline rows (the oldest go),
// at most MAX_PENDING requests waiting for their answer, MAX_SESSIONS sessions, and 60 one-second
// buckets per chart; the timeline draws only the rows in view (virtual scrolling).
'use strict';

const POLL_MS = 250;
const CHECK_EVERY = 8;            // polls between two GET /check (the report walks the journal)
const MAX_ROWS = 20000;
const MAX_PENDING = 10000;
// A journal entry is added when its message arrives and changed as rules act on it and when it
// leaves: an entry read before that is read again until it is delivered, within these bounds.
const REREAD_MAX_ENTRIES = 2000;
const REREAD_MAX_MS = 30000;
const MAX_SESSIONS = 500;
const MAX_EVENTS_SHOWN = 200;
const ROW_H = 24;
const CHART_SECONDS = 60;
const API = '../';
const TOKEN_KEY = 'mcp-chaos-control-token';

// What a fault does to the message it picked, as the timeline shows it.
const EFFECT = {
  drop: 'dropped', blackhole: 'dropped',
  latency: 'held', reorder: 'held', throttle: 'held',
  duplicate: 'duplicated',
  error: 'made', tool_error: 'made', http_status: 'made', session_expire: 'made', noise: 'made',
  truncate: 'changed', corrupt: 'changed', oversize: 'changed', mutate: 'changed', id_mismatch: 'changed',
  invalid_content_type: 'changed',
  disconnect: 'cut', crash: 'cut',
};

// The fault catalogue (docs/rules.md#the-faults): each type with parameters to start from.
const CATALOGUE = {
  latency: 'latency: 2s', drop: '', duplicate: 'copies: 1', reorder: 'hold: 250ms',
  truncate: 'fraction: 0.5', corrupt: 'mode: truncated_json', oversize: 'size: 1MiB',
  error: 'code: -32603\nmessage: Internal error (injected by mcp-chaos)', tool_error: 'text: Tool failed (injected by mcp-chaos)',
  http_status: 'status: 503\nheaders: {Retry-After: "5"}', invalid_content_type: 'content_type: text/html',
  disconnect: 'side: server', blackhole: '', throttle: 'rate: 64KiB/s', noise: '',
  mutate: 'patch: [{op: replace, path: /result/content/0/text, value: "mutated"}]', id_mismatch: '',
  session_expire: '', crash: 'signal: KILL',
};

const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
};

// ---- state (all bounded) -------------------------------------------------------------------
const state = {
  rows: [],                 // timeline rows, oldest first, at most MAX_ROWS
  rowsDropped: 0,           // rows let go to stay under MAX_ROWS
  view: null,               // indices into rows when "only acted on" is on, else null
  pending: new Map(),       // "session|dir|id" -> request row waiting for its answer
  unsettled: new Map(),     // seq -> row of a journal entry not yet delivered (read again each poll)
  sessions: new Map(),      // session -> {c2s, s2c, acted, answered, latencySum, last}
  journalSince: 0, journalOn: null, journalEvicted: 0,
  eventsSince: 0, eventsMissed: 0,
  status: null, rules: [], rulesStale: true,
  rate: { last: null, buckets: [] },   // per second: {t, c2s, s2c, faults}
  polls: 0, inFlight: false, waitingForToken: false, lastError: '',
  renderQueued: false,
};

// ---- the control API, with the token when one is needed -----------------------------------
function token() { return sessionStorage.getItem(TOKEN_KEY); }

class Unauthorized extends Error {}

async function api(method, path, body) {
  const headers = {};
  const t = token();
  if (t) headers['Authorization'] = 'Bearer ' + t;
  if (body !== undefined) headers['Content-Type'] = typeof body === 'string' ? 'application/yaml' : 'application/json';
  const res = await fetch(API + path, {
    method, headers, cache: 'no-store',
    body: body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body)),
  });
  if (res.status === 401) {
    const why = await res.json().then((j) => j.error).catch(() => 'refused');
    askForToken(why);
    throw new Unauthorized(why);
  }
  const text = await res.text();
  let json = null;
  if (text) { try { json = JSON.parse(text); } catch (e) { json = null; } }
  return { status: res.status, ok: res.ok, json, text };
}

function askForToken(why) {
  if (state.waitingForToken) return;
  state.waitingForToken = true;
  $('token-why').textContent = token() ? 'The token given was refused: ' + why : '';
  $('token-why').hidden = !token();
  const dialog = $('token-dialog');
  if (!dialog.open) dialog.showModal();
  $('token').focus();
}

$('token-form').addEventListener('submit', () => {
  sessionStorage.setItem(TOKEN_KEY, $('token').value.trim());
  $('token').value = '';
  state.waitingForToken = false;
  state.rulesStale = true;
});

// ---- polling ---------------------------------------------------------------------------------
async function poll() {
  // A tab in the background asks nothing (the proxy pays for each /journal); back in view, at once.
  if (state.inFlight || state.waitingForToken || document.hidden) return;
  state.inFlight = true;
  try {
    const [status, events, journal] = await Promise.all([
      api('GET', 'status'),
      api('GET', 'events?since=' + state.eventsSince + '&limit=1000'),
      state.journalOn === false ? null : api('GET', 'journal?since=' + journalFrom()),
    ]);
    if (journal) takeJournal(journal);
    if (events.ok) takeEvents(events.json);
    if (status.ok) takeStatus(status.json);
    if (state.rulesStale) {
      state.rulesStale = false;
      const rules = await api('GET', 'rules');
      if (rules.ok) { state.rules = rules.json.rules || []; }
    }
    if (state.polls++ % CHECK_EVERY === 0) {
      const check = await api('GET', 'check');
      takeCheck(check);
    }
    state.lastError = '';
  } catch (e) {
    state.lastError = e instanceof Unauthorized ? 'waiting for the control token' : 'control API unreachable: ' + e.message;
  } finally {
    state.inFlight = false;
    $('conn').textContent = state.lastError;
    scheduleRender();
  }
}

// ---- the journal: one row per message --------------------------------------------------------
function takeJournal(res) {
  if (res.status === 404) {
    state.journalOn = false;
    $('tl-note').textContent = 'The journal is off on this proxy (--journal off, or not asked for): the timeline shows '
      + 'the messages faults acted on, from the event log. Start it with --journal 10000 to see every message.';
    return;
  }
  if (!res.ok) return;
  state.journalOn = true;
  const j = res.json;
  const entries = (j.entries || []).filter((e) => {
    if (e.seq > state.journalSince) return true;
    const row = state.unsettled.get(e.seq);
    if (row) updateMessage(row, e);   // read again: the rules acted on it, or it left, since
    return false;
  });
  if (entries.length && entries[0].seq > state.journalSince + 1 && state.journalSince > 0) {
    state.journalEvicted += entries[0].seq - state.journalSince - 1;   // left the ring before we read them
  }
  for (const e of entries) addMessage(e);
  if (entries.length) state.journalSince = entries[entries.length - 1].seq;
  settleOld();
}

/** Where the next read of the journal starts: at the oldest entry still to be read again. */
function journalFrom() {
  let from = state.journalSince;
  for (const seq of state.unsettled.keys()) { from = Math.min(from, seq - 1); break; }   // oldest first
  return Math.max(from, state.journalSince - REREAD_MAX_ENTRIES, 0);
}

/** Stops reading again what is too old to change any more (a dropped message is never delivered). */
function settleOld() {
  const newest = state.rows.length ? state.rows[state.rows.length - 1].t : 0;
  for (const [seq, row] of state.unsettled) {
    if (seq > state.journalSince - REREAD_MAX_ENTRIES && newest - row.t < REREAD_MAX_MS) break;
    state.unsettled.delete(seq);
  }
}

/** A journal entry read again: the faults added to it since, and whether it has left. */
function updateMessage(row, e) {
  const faults = e.faults || [];
  if (faults.length > row.faults.length) {
    if (!row.faults.length) session(row.session, row.t).acted++;
    const added = faults.slice(row.faults.length);
    row.faults = faults;
    let at = state.rows.lastIndexOf(row);
    for (const f of added) {
      const copy = madeRow(row, f);
      if (copy && at >= 0) state.rows.splice(++at, 0, copy);
    }
    if (state.view) rebuildView();
  }
  row.delivered = e.delivered;
  if (e.delivered) state.unsettled.delete(row.seq);
}

const dirOf = (d) => (d === 'client_to_server' ? 'c2s' : d === 'server_to_client' ? 's2c' : d);
const other = (d) => (d === 'c2s' ? 's2c' : 'c2s');
const idKey = (id) => (typeof id === 'string' ? 's:' + id : 'n:' + id);

function addMessage(e) {
  const row = {
    seq: e.seq, t: e.elapsed_ns / 1e6, session: e.session, dir: dirOf(e.direction), kind: e.kind,
    id: e.id, method: e.method, tool: e.tool, faults: e.faults || [], delivered: e.delivered,
    httpStatus: e.http_status, latency: null, pairSeq: null,
  };
  const s = session(row.session, row.t);
  s[row.dir]++;
  if (row.faults.length) s.acted++;
  pair(row, s);
  push(row);
  if (!row.delivered && state.journalOn) state.unsettled.set(row.seq, row);
  for (const f of row.faults) {
    const copy = madeRow(row, f);
    if (copy) push(copy);
  }
}

/** The row of a message the proxy made, or of copies of one, for fault {@code f} on {@code row}; else null. */
function madeRow(row, f) {
  const effect = EFFECT[f.fault] || 'changed';
  if (effect !== 'made' && effect !== 'duplicated') return null;
  // The proxy made a message, or copies of one: a row of its own, under the one it came from.
  const made = effect === 'made';
  return {
    seq: row.seq, t: row.t, session: row.session, synthetic: effect,
    dir: made && row.kind === 'request' ? other(row.dir) : row.dir,
    kind: made ? 'made by the proxy' : 'copy', id: row.id, method: row.method, tool: row.tool,
    faults: [f], delivered: true, latency: null, pairSeq: row.seq,
  };
}

function pair(row, s) {
  if (row.id === undefined || row.id === null) return;
  if (row.kind === 'request') {
    state.pending.set(row.session + '|' + row.dir + '|' + idKey(row.id), row);
    if (state.pending.size > MAX_PENDING) state.pending.delete(state.pending.keys().next().value);
    return;
  }
  if (row.kind !== 'response' && row.kind !== 'error') return;
  const key = '|' + other(row.dir) + '|' + idKey(row.id);
  let req = state.pending.get(row.session + key);
  if (!req && row.method === 'initialize') {
    // An HTTP initialize is journaled under the provisional session (http-N) the server then renames.
    for (const [k, r] of state.pending) {
      if (k.endsWith(key) && r.session.startsWith('http-') && r.method === row.method) { req = r; break; }
    }
  }
  if (!req) return;
  state.pending.delete(req.session + key);
  row.latency = row.t - req.t;
  row.pairSeq = req.seq;
  req.latency = row.latency;
  req.pairSeq = row.seq;
  s.answered++;
  s.latencySum += row.latency;
}

function session(name, t) {
  let s = state.sessions.get(name);
  if (!s) {
    s = { c2s: 0, s2c: 0, acted: 0, answered: 0, latencySum: 0, last: t };
    state.sessions.set(name, s);
    if (state.sessions.size > MAX_SESSIONS) state.sessions.delete(state.sessions.keys().next().value);
  }
  s.last = t;
  return s;
}

function push(row) {
  state.rows.push(row);
  if (state.view && isActed(row)) state.view.push(state.rows.length - 1);
  if (state.rows.length > MAX_ROWS * 1.1) {
    // Let the oldest tenth go at once (one splice, not one per row).
    const cut = state.rows.length - MAX_ROWS;
    state.rows.splice(0, cut);
    state.rowsDropped += cut;
    if (state.view) rebuildView();
  }
}

const isActed = (row) => row.faults.length > 0;

function rebuildView() {
  state.view = [];
  state.rows.forEach((r, i) => { if (isActed(r)) state.view.push(i); });
}

// ---- events: faults when there is no journal, and the event list -------------------------------
function takeEvents(page) {
  if (!page) return;
  if (page.missed) state.eventsMissed += page.missed;
  const list = $('events');
  for (const ev of page.events || []) {
    if (ev.event === 'rules_changed') state.rulesStale = true;
    if (ev.event === 'fault' && state.journalOn === false) {
      addMessage({
        seq: ev.seq, elapsed_ns: Date.parse(ev.time) * 1e6 - (state.t0 || (state.t0 = Date.parse(ev.time) * 1e6)),
        session: ev.session, direction: ev.direction, kind: ev.kind, id: ev.id, method: ev.method, tool: ev.tool,
        faults: [{ rule: ev.rule, fault: ev.fault, detail: ev.detail }], delivered: EFFECT[ev.fault] !== 'dropped',
      });
    }
    if (ev.event !== 'fault') {
      const li = el('li', null, ev.time.substring(11, 23) + '  ' + ev.event + '  ' + describeEvent(ev));
      li.dataset.event = ev.event;
      list.prepend(li);
    }
  }
  while (list.childElementCount > MAX_EVENTS_SHOWN) list.lastElementChild.remove();
  state.eventsSince = page.last;
}

function describeEvent(ev) {
  const skip = new Set(['seq', 'time', 'event']);
  return Object.keys(ev).filter((k) => !skip.has(k))
    .map((k) => k + '=' + (typeof ev[k] === 'object' ? JSON.stringify(ev[k]) : ev[k])).join(' ');
}

// ---- status: header, rules' counters, rates ----------------------------------------------------
function takeStatus(s) {
  state.status = s;
  const now = Date.now() / 1000;
  const cur = { c2s: s.messages.client_to_server, s2c: s.messages.server_to_client, faults: s.faults_injected };
  const r = state.rate;
  if (r.last) {
    const sec = Math.floor(now);
    let b = r.buckets[r.buckets.length - 1];
    if (!b || b.t !== sec) { b = { t: sec, c2s: 0, s2c: 0, faults: 0 }; r.buckets.push(b); }
    b.c2s += Math.max(0, cur.c2s - r.last.c2s);
    b.s2c += Math.max(0, cur.s2c - r.last.s2c);
    b.faults += Math.max(0, cur.faults - r.last.faults);   // a rule change restarts its counter
    while (r.buckets.length && r.buckets[0].t <= sec - CHART_SECONDS) r.buckets.shift();
  }
  r.last = cur;
}

// ---- the referee's report ---------------------------------------------------------------------
function takeCheck(res) {
  const totals = $('check-totals');
  const list = $('violations');
  if (res.status === 404) {
    $('check-info').textContent = 'the referee is off: start the proxy with --check to see verdicts here';
    totals.replaceChildren();
    return;
  }
  if (!res.ok || !res.json) return;
  const c = res.json;
  $('check-info').textContent = c.messages + ' messages refereed; client.* checks read the journal';
  totals.replaceChildren(
    stat('errors', c.errors, c.errors ? 'bad' : ''), stat('warnings', c.warnings, c.warnings ? 'warn' : ''),
    stat('caused by faults', c.caused_by_faults, ''),
    stat('checks failed', c.checks.filter((k) => k.status === 'failed').length, ''),
    stat('passed', c.checks.filter((k) => k.status === 'passed').length, ''));
  const items = [];
  for (const check of c.checks) {
    for (const v of check.violations) {
      items.push(violationItem('sev-' + check.severity, check.severity, check.id, v));
    }
  }
  for (const f of c.by_faults) {
    items.push(violationItem('sev-fault', "rule '" + f.rule + "'", f.check, f));
  }
  list.replaceChildren(...(items.length ? items : [el('li', 'muted', 'no violation so far')]));
}

function stat(label, value, cls) {
  const span = el('span', cls);
  span.append(el('b', null, value), ' ' + label);
  return span;
}

function violationItem(cls, who, check, v) {
  const li = el('li');
  li.dataset.check = check;
  li.append(el('span', cls, who + ' ' + check), ' ' + v.detail + '  ',
    el('span', 'muted', '(' + v.session + ' ' + v.dir + ' #' + v.index + (v.method ? ' ' + v.method : '') + ')'));
  return li;
}

// ---- rendering ---------------------------------------------------------------------------------
function scheduleRender() {
  if (state.renderQueued) return;
  state.renderQueued = true;
  requestAnimationFrame(() => { state.renderQueued = false; render(); });
}

function render() {
  renderHeader();
  renderTimeline();
  renderSessions();
  renderRules();
  drawChart($('chart-messages'), [['c2s', '--c2s'], ['s2c', '--s2c']]);
  drawChart($('chart-faults'), [['faults', '--fault']]);
}

function renderHeader() {
  const s = state.status;
  if (!s || state.offline) return;
  $('summary').textContent = s.transport + ' · seed ' + s.seed + ' · up ' + Math.round(s.uptime_seconds) + ' s · '
    + s.sessions_active + ' sessions · ' + s.messages.client_to_server + ' c→s, ' + s.messages.server_to_client
    + ' s→c · ' + s.faults_injected + ' injected by the rules as they are';
  const panic = $('panic');
  panic.disabled = false;
  panic.textContent = s.faults_enabled ? 'faults ON: stop them all' : 'faults OFF: turn them back on';
  panic.className = 'panic ' + (s.faults_enabled ? 'on' : 'off');
  panic.dataset.enabled = String(s.faults_enabled);
}

const timeline = $('timeline');
let lastRowCount = -1;
let autoScrolled = false;   // the next scroll event is the page's own, not the reader's

function renderTimeline() {
  const indices = state.view;
  const count = indices ? indices.length : state.rows.length;
  const spacer = $('tl-spacer');
  spacer.style.height = (count * ROW_H) + 'px';
  if ($('follow').checked && count !== lastRowCount) {
    autoScrolled = true;
    timeline.scrollTop = timeline.scrollHeight;
  }
  lastRowCount = count;
  const first = Math.max(0, Math.floor(timeline.scrollTop / ROW_H) - 5);
  const last = Math.min(count, Math.ceil((timeline.scrollTop + timeline.clientHeight) / ROW_H) + 5);
  const frag = document.createDocumentFragment();
  frag.append(spacer);
  for (let i = first; i < last; i++) {
    const row = state.rows[indices ? indices[i] : i];
    const div = rowElement(row);
    div.style.top = (i * ROW_H) + 'px';
    frag.append(div);
  }
  timeline.replaceChildren(frag);
  const notes = [count + ' rows'];
  if (state.rowsDropped) notes.push(state.rowsDropped + ' older rows let go (the tab keeps the last ' + MAX_ROWS + ')');
  if (state.journalEvicted) notes.push(state.journalEvicted + ' messages left the proxy\'s journal before the page read them');
  if (state.eventsMissed) notes.push(state.eventsMissed + ' events missed');
  $('tl-info').textContent = notes.join(' · ');
}

function rowElement(row) {
  const div = el('div', 'row' + (row.faults.length ? ' acted' : '') + (row.synthetic ? ' synthetic' : ''));
  div.dataset.seq = row.seq;
  div.dataset.dir = row.dir;
  div.dataset.kind = row.kind;
  if (row.method) div.dataset.method = row.method;
  if (row.tool) div.dataset.tool = row.tool;
  if (row.id !== undefined && row.id !== null) div.dataset.id = row.id;
  if (row.synthetic) div.dataset.synthetic = row.synthetic;
  div.append(el('span', 'mono', row.synthetic ? '' : '#' + row.seq), el('span', 'mono', '+' + (row.t / 1000).toFixed(3)),
    el('span', 'sess', row.session));
  div.lastChild.title = row.session;
  const text = (row.synthetic ? '' : (row.dir === 'c2s' ? '→ ' : '← ')) + row.kind
    + (row.id !== undefined && row.id !== null ? ' ' + row.id : '') + (row.method ? ' ' + row.method : '')
    + (row.tool ? ' ' + row.tool : '') + (row.httpStatus ? ' HTTP ' + row.httpStatus : '');
  const msg = el('span', 'msg ' + row.dir, text);
  if (!row.synthetic && row.faults.length && !row.delivered) msg.append(el('span', 'state dropped', 'not delivered'));
  div.append(row.dir === 'c2s' ? msg : el('span'), row.dir === 's2c' ? msg : el('span'));
  div.append(el('span', 'lat' + (row.latency > 1000 ? ' slow' : ''), row.latency === null ? ''
    : (row.kind === 'request' ? 'answered ' : 'after ') + fmtMs(row.latency) + ' (#' + row.pairSeq + ')'));
  const faults = el('span', 'faults');
  for (const f of row.faults) {
    const effect = EFFECT[f.fault] || 'changed';
    const b = el('span', 'badge fault ' + effect, effect + ' · ' + f.rule + ' (' + f.fault + ')');
    b.dataset.rule = f.rule;
    b.dataset.fault = f.fault;
    b.dataset.effect = effect;
    b.title = f.detail || '';
    faults.append(b);
  }
  div.append(faults);
  div.title = row.faults.map((f) => f.rule + ': ' + (f.detail || f.fault)).join('\n');
  return div;
}

function fmtMs(ms) { return ms >= 1000 ? (ms / 1000).toFixed(2) + ' s' : ms.toFixed(1) + ' ms'; }

timeline.addEventListener('scroll', () => {
  const atEnd = timeline.scrollTop + timeline.clientHeight >= timeline.scrollHeight - ROW_H;
  if (autoScrolled) {
    autoScrolled = false;
  } else if (!atEnd && $('follow').checked) {
    $('follow').checked = false;   // the reader scrolled back: stop following until asked again
  }
  scheduleRender();
});
$('follow').addEventListener('change', scheduleRender);
$('only-faults').addEventListener('change', (e) => {
  if (e.target.checked) rebuildView(); else state.view = null;
  scheduleRender();
});

function renderSessions() {
  const tbody = $('sessions').tBodies[0];
  const list = [...state.sessions.entries()].sort((a, b) => b[1].last - a[1].last).slice(0, 12);
  tbody.replaceChildren(...list.map(([name, s]) => {
    const tr = el('tr');
    tr.dataset.session = name;
    tr.append(el('td', 'mono', name), el('td', 'num', s.c2s), el('td', 'num', s.s2c), el('td', 'num', s.acted),
      el('td', 'num', s.answered), el('td', 'num', s.answered ? fmtMs(s.latencySum / s.answered) : ''));
    return tr;
  }));
  if (state.sessions.size > list.length) {
    const tr = el('tr');
    tr.append(el('td', 'muted', '... ' + (state.sessions.size - list.length) + ' more'));
    tbody.append(tr);
  }
}

function renderRules() {
  const stats = new Map(((state.status && state.status.rules) || []).map((r) => [r.name, r]));
  const tbody = $('rules').tBodies[0];
  const disabledAll = state.status && !state.status.faults_enabled;
  $('rules-info').textContent = state.rules.length + (state.rules.length === 1 ? ' rule' : ' rules') + (disabledAll ? ' · the panic switch is off: none acts' : '');
  tbody.replaceChildren(...state.rules.map((rule) => {
    const st = stats.get(rule.name) || { matched: 0, injected: 0, enabled: rule.enabled !== false };
    const enabled = st.enabled;
    const tr = el('tr', enabled ? '' : 'disabled');
    tr.dataset.rule = rule.name;
    tr.dataset.enabled = String(enabled);
    const fault = rule.fault && rule.fault.type ? rule.fault.type : (st.fault || '?');
    tr.append(el('td', 'mono', rule.name), el('td', null, fault), el('td', 'mono', matchText(rule)),
      el('td', 'num matched', st.matched), el('td', 'num injected', st.injected));
    const actions = el('td', 'actions');
    const toggle = el('button', 'toggle', enabled ? 'disable' : 'enable');
    toggle.type = 'button';
    toggle.addEventListener('click', () => act(toggle, 'PATCH', 'rules/' + encodeURIComponent(rule.name), { enabled: !enabled }));
    const remove = el('button', 'remove', 'remove');
    remove.type = 'button';
    remove.addEventListener('click', () => {
      if (confirm("Remove rule '" + rule.name + "'?")) act(remove, 'DELETE', 'rules/' + encodeURIComponent(rule.name));
    });
    actions.append(toggle, remove);
    tr.append(actions);
    return tr;
  }));
}

function matchText(rule) {
  const m = rule.match || {};
  const keys = Object.keys(m);
  const parts = keys.map((k) => k + '=' + (typeof m[k] === 'object' ? JSON.stringify(m[k]) : m[k]));
  for (const k of ['probability', 'after', 'times', 'start', 'duration']) {
    if (rule[k] !== undefined) parts.push(k + '=' + rule[k]);
  }
  return parts.length ? parts.join(' ') : '*';
}

async function act(button, method, path, body) {
  button.disabled = true;
  try {
    const res = await api(method, path, body);
    if (!res.ok) alert(method + ' ' + path + ': ' + ((res.json && res.json.error) || res.status));
  } catch (e) {
    if (!(e instanceof Unauthorized)) alert(method + ' ' + path + ': ' + e.message);
  } finally {
    state.rulesStale = true;
    button.disabled = false;
    poll();
  }
}

$('panic').addEventListener('click', () => {
  const on = state.status && state.status.faults_enabled;
  act($('panic'), 'POST', on ? 'faults/disable' : 'faults/enable');
});

function drawChart(canvas, series) {
  const ctx = canvas.getContext('2d');
  const w = canvas.width, h = canvas.height, pad = 22;
  ctx.clearRect(0, 0, w, h);
  const now = state.offline ? CHART_SECONDS - 1 : Math.floor(Date.now() / 1000);
  const byT = new Map(state.rate.buckets.map((b) => [b.t, b]));
  let max = 1;
  for (const b of state.rate.buckets) for (const [k] of series) max = Math.max(max, b[k]);
  const css = getComputedStyle(document.documentElement);
  ctx.strokeStyle = '#e5e7eb';
  ctx.fillStyle = '#6b7280';
  ctx.font = '10px system-ui, sans-serif';
  ctx.beginPath(); ctx.moveTo(pad, 4); ctx.lineTo(pad, h - pad + 4); ctx.lineTo(w - 4, h - pad + 4); ctx.stroke();
  ctx.fillText(String(max), 2, 12);
  ctx.fillText('0', 10, h - pad + 4);
  const [from, to] = state.offline ? state.rate.labels : ['-60 s', 'now'];
  ctx.fillText(from, pad, h - 6);
  ctx.fillText(to, w - 6 - ctx.measureText(to).width, h - 6);
  const x = (i) => pad + (i / (CHART_SECONDS - 1)) * (w - pad - 6);
  const y = (v) => h - pad + 4 - (v / max) * (h - pad - 8);
  for (const [key, color] of series) {
    ctx.strokeStyle = css.getPropertyValue(color).trim() || '#000';
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    for (let i = 0; i < CHART_SECONDS; i++) {
      const b = byT.get(now - CHART_SECONDS + 1 + i);
      const v = b ? b[key] : 0;
      if (i === 0) ctx.moveTo(x(i), y(v)); else ctx.lineTo(x(i), y(v));
    }
    ctx.stroke();
  }
  canvas.dataset.max = String(max);
}

// ---- the add-a-rule form: fields make YAML, the proxy's parser judges it -----------------------
const form = {
  fields: ['f-name', 'f-fault', 'f-direction', 'f-kind', 'f-method', 'f-tool', 'f-probability', 'f-times', 'f-params'],
};

function yamlScalar(v) {
  return /^[A-Za-z0-9_./*?-]+$/.test(v) && !/^(true|false|null|yes|no|on|off|~)$/i.test(v) ? v : JSON.stringify(v);
}

function composeRule() {
  const v = (id) => $(id).value.trim();
  const lines = ['name: ' + yamlScalar(v('f-name'))];
  const match = [];
  if (v('f-direction') !== 'any') match.push('direction: ' + v('f-direction'));
  if (v('f-kind') !== 'any') match.push('kind: ' + v('f-kind'));
  if (v('f-method')) match.push('method: ' + yamlScalar(v('f-method')));
  if (v('f-tool')) match.push('tool: ' + yamlScalar(v('f-tool')));
  if (match.length) lines.push('match:', ...match.map((m) => '  ' + m));
  if (v('f-probability')) lines.push('probability: ' + v('f-probability'));
  if (v('f-times')) lines.push('times: ' + v('f-times'));
  lines.push('fault:', '  type: ' + v('f-fault'));
  for (const p of $('f-params').value.split('\n')) if (p.trim()) lines.push('  ' + p.trim());
  $('f-rule').value = lines.join('\n') + '\n';
}

for (const type of Object.keys(CATALOGUE)) $('f-fault').append(el('option', null, type));
$('f-fault').addEventListener('change', () => {
  $('f-params').value = CATALOGUE[$('f-fault').value];
  $('f-doc').textContent = 'see docs/rules.md#' + $('f-fault').value.replace(/_/g, '');
  composeRule();
});
for (const id of form.fields) $(id).addEventListener('input', composeRule);
$('f-params').value = CATALOGUE.latency;
composeRule();

$('add-rule').addEventListener('submit', async (e) => {
  e.preventDefault();
  const error = $('f-error'), ok = $('f-ok');
  error.hidden = true; ok.hidden = true;
  try {
    const res = await api('POST', 'rules', $('f-rule').value);
    if (res.ok) {
      ok.textContent = "added rule '" + res.json.name + "'";
      ok.hidden = false;
      state.rulesStale = true;
    } else {
      error.textContent = (res.json && res.json.error) || ('HTTP ' + res.status + ' ' + res.text);
      error.hidden = false;
    }
  } catch (err) {
    if (!(err instanceof Unauthorized)) { error.textContent = err.message; error.hidden = false; }
  }
  poll();
});

// ---- a report: the same views, from data in the file, with no server --------------------------
// HtmlReport (proxy-server) writes this file with app.js and app.css inline and the data in
// <script id="mcp-chaos-data" type="application/json">: a journal (as GET /journal serves it), an
// event log's events, a referee's report (as GET /check). Nothing is fetched; nothing can change.
function loadReport(data) {
  state.offline = true;
  document.body.classList.add('report');
  const events = data.events || [];
  if (data.journal) {
    takeJournal({ status: 200, ok: true, json: data.journal });
  } else {
    state.journalOn = false;
    $('tl-note').textContent = 'No journal in this report: the timeline shows the messages faults acted on, from the event log.';
  }
  takeEvents({ last: 0, missed: 0, events });
  // The rules, as what they did: per rule, its fault type and how many faults the event log (or,
  // without one, the journal) holds.
  const byRule = new Map();
  const count = (rule, fault) => {
    const r = byRule.get(rule) || { name: rule, fault, injected: 0 };
    r.injected++;
    byRule.set(rule, r);
  };
  const faultEvents = events.filter((e) => e.event === 'fault');
  if (faultEvents.length || !data.journal) {
    for (const e of faultEvents) count(e.rule, e.fault);
  } else {
    for (const e of data.journal.entries || []) for (const f of e.faults || []) count(f.rule, f.fault);
  }
  state.rules = [...byRule.values()].map((r) => ({ name: r.name, fault: { type: r.fault } }));
  const rows = state.rows.filter((r) => !r.synthetic);
  state.status = {
    faults_enabled: true,
    rules: [...byRule.values()].map((r) => ({ name: r.name, enabled: true, fault: r.fault, matched: '', injected: r.injected })),
  };
  // Rates over the whole run, in 60 buckets.
  const span = rows.length ? rows[rows.length - 1].t - rows[0].t : 0;
  const width = Math.max(1000, Math.ceil(span / CHART_SECONDS));
  const t0 = rows.length ? rows[0].t : 0;
  state.rate.buckets = Array.from({ length: CHART_SECONDS }, (_, t) => ({ t, c2s: 0, s2c: 0, faults: 0 }));
  for (const r of rows) {
    const b = state.rate.buckets[Math.min(CHART_SECONDS - 1, Math.floor((r.t - t0) / width))];
    b[r.dir]++;
    b.faults += r.faults.length;
  }
  state.rate.labels = ['+' + (t0 / 1000).toFixed(1) + ' s', '+' + ((t0 + width * CHART_SECONDS) / 1000).toFixed(1) + ' s'];
  document.querySelector('.chart-row').previousElementSibling.lastElementChild.textContent =
    'the whole run, ' + (width / 1000) + ' s a point';
  if (data.check) takeCheck({ status: 200, ok: true, json: data.check });
  else $('check-info').textContent = 'no referee report in this file';
  if (data.drill) showScorecard(data.drill);
  const faults = state.status.rules.reduce((n, r) => n + r.injected, 0);
  $('summary').textContent = 'report' + (data.title ? ': ' + data.title : '') + ' · ' + rows.length + ' messages · '
    + faults + ' faults' + (data.drill ? ' · drill of ' + data.drill.scenarios.length + ' scenarios' : '')
    + (data.generated ? ' · written ' + data.generated : '');
  $('follow').checked = false;
  render();
}

// A drill's scorecard (mcp-chaos drill --html, or its --report-json given to mcp-chaos report): the
// verdicts by count, then a row per scenario with its reason and the journal lines that decided it.
// Its sessions on the timeline are named "<scenario>: <session>".
const OUTCOMES = ['pass', 'fail', 'not_applicable', 'not_exercised', 'not_built'];

function showScorecard(card) {
  const panel = el('section', 'panel wide');
  panel.id = 'scorecard';
  const head = el('div', 'panel-head');
  const mustFailed = card.scenarios.filter((s) => s.outcome === 'fail' && s.level === 'MUST').length;
  head.append(el('h2', null, 'Drill scorecard'), el('span', 'muted', 'seed ' + card.seed + (card.transport
    ? ' · ' + card.transport : '') + ' · exit code ' + card.exit_code + (mustFailed ? ' (a MUST scenario failed)' : '')));
  const totals = el('div', 'totals');
  totals.id = 'scorecard-totals';
  for (const outcome of OUTCOMES) {
    const n = card.scenarios.filter((s) => s.outcome === outcome).length;
    const span = stat(outcome.replace('_', ' '), n, outcome === 'fail' && n ? 'bad' : '');
    span.dataset.outcome = outcome;
    totals.append(span);
  }
  const table = el('table', 'grid');
  const header = el('tr');
  for (const h of ['scenario', 'level', 'verdict', 'took', 'why']) header.append(el('th', null, h));
  table.append(el('thead'), el('tbody'));
  table.tHead.append(header);
  for (const s of card.scenarios) {
    const tr = el('tr');
    tr.dataset.scenario = s.name;
    tr.dataset.outcome = s.outcome;
    const why = el('td', null, s.reason);
    if (s.evidence && s.evidence.length) {
      const details = el('details');
      details.append(el('summary', 'muted', 'the journal'), el('pre', null, s.evidence.join('\n')));
      why.append(details);
    }
    tr.append(el('td', 'mono', s.name), el('td', null, s.level),
      el('td', s.outcome === 'fail' ? 'sev-error' : s.outcome === 'pass' ? 'ok' : 'muted', s.outcome.replace('_', ' ')),
      el('td', 'num', ((s.took_ms || 0) / 1000).toFixed(1) + ' s'), why);
    table.tBodies[0].append(tr);
  }
  panel.append(head, totals, table);
  document.querySelector('main').prepend(panel);
}

// ---- start -------------------------------------------------------------------------------------
const embedded = document.getElementById('mcp-chaos-data');
if (embedded) {
  loadReport(JSON.parse(embedded.textContent));
} else {
  poll();
  setInterval(poll, POLL_MS);
  document.addEventListener('visibilitychange', () => { if (!document.hidden) poll(); });
}
