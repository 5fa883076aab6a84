// A client written to be drilled (mcp-chaos drill, docs/drill.md), on the TypeScript SDK 2.4
// (@modelcontextprotocol/client), speaking the 2025 revisions (sessions). Invoked as the MCP
// conformance suite's client mode invokes a client: node client.mjs [--flaw FLAW] URL, with
// MCP_CONFORMANCE_SCENARIO set (it does the same in every scenario). Over stdio (drill
// --transport stdio): node client.mjs [--flaw FLAW] --stdio COMMAND [ARGS...], the server command
// the drill appends, spawned by StdioClientTransport; it then also sends two tools/calls of add
// at once and checks each answer against its own call (exit 1 when they are mixed up), and does
// not start the server again after it died. Well behaved by default:
//   - every request has a timeout (TIMEOUT_MS, default 1500), after which the SDK cancels it;
//   - reads (tools/list) are sent again after a timeout, as new requests (new ids), up to 3 times;
//   - writes (tools/call) are never sent again blindly: after a lost answer the outcome is
//     reported unknown and the client reads back (tools/list) instead;
//   - a 429 or 503 with Retry-After is retried once, after waiting as long as it says;
//   - a 404 on the session starts a new session (initialize) and goes on.
// --flaw gives it one flaw, to prove the drill catches it:
//   naive-retrier       sends a write again after a timeout, with the same arguments;
//   no-timeout          waits for ever for every answer;
//   ignore-retry-after  retries a 429/503 at once;
//   reuse-id            resends a read that timed out under the same JSON-RPC id (at the HTTP level;
//                       over stdio, the same message written again);
//   no-resume           never resumes an SSE stream that broke off (no GET with Last-Event-ID);
//   ignore-retry        ignores the SSE retry: field (reconnects after its own first delay, 250 ms);
//   wait-resume         after a call whose SSE answer broke before any event id (no priming event),
//                       waits for a resumption it has no id for, for ever, instead of going on.
// Over HTTP it resumes a cut SSE stream (the SDK's own reconnection: a GET with Last-Event-ID,
// after 250 ms, or after the retry: field's delay when the server sent one), and at the end it
// sets the log level and waits for the demo server's log message on the GET stream (LOG_WAIT_MS,
// default 4000).
// --era 2026 (before the URL or --stdio) speaks the stateless 2026-07-28 revision too: the SDK's
// version negotiation in 'auto' mode (server/discover first; a server that is not 2026-07-28 is
// spoken to in the 2025 revisions, with initialize), and these on top, well behaved. Over stdio
// it probes in place, on the process it then talks to (--probe in-place, the default: a subclass
// of the SDK's StdioClientTransport, which the SDK probes in place), or as the SDK does with its
// own transport, on a sibling process spawned from the same command and reaped before the one it
// talks to starts (--probe sibling: twice the processes, which the drill grades as one journal):
//   - input_required rounds are answered by the SDK (a retry under a new id, requestState echoed)
//     at most 3 times (inputRequired.maxRounds), then the call is reported failed;
//   - a call refused -32020 (HeaderMismatch), -32022 (unsupported version) and a failed
//     server/discover are the SDK's to handle (2.4 lists the tools again and retries the call once;
//     picks another version or initialize; or reports the error): nothing is resent by hand.
//   - a request whose response stream breaks (the connection closes before its answer: 2026-07-28
//     has no resumption) is re-issued once as a new request (a new id), a write too: the revision
//     says the broken stream lost it (the fetch layer notices the break and fails the call at once);
//   - a request it gives up on is cancelled by closing its stream (the SDK's own 2026 behaviour:
//     it aborts the request's POST and sends no notifications/cancelled).
//   - at the end (when it speaks 2026-07-28) it listens for tools/list_changed (subscriptions/listen)
//     and holds the stream open a while (LISTEN_HOLD_MS, default 200); a listen that fails, or whose
//     stream ends without the server's graceful result, is sent again (a new request, a new id), up
//     to 3 times; then it closes the subscription.
// Its flaws, one per 2026 scenario:
//   endless-input       answers input_required rounds up to 1000 times (no bound of its own);
//   no-relisten         listens once: a listen stream that is cut is not opened again;
//   retry-mismatch      POSTs a request refused -32020 again at once, as it was (before the SDK sees it);
//   retry-version       POSTs a request answered -32022 again as it was (the refused version);
//   retry-discover      POSTs a server/discover answered 500 again as it was;
//   no-reissue          reports a call whose stream broke failed, and does not re-issue it;
//   reissue-same-id     POSTs a request whose stream broke again as it was, id and all (below the SDK);
//   no-cancel           never closes a request's stream: its POSTs ignore the SDK's abort, so an
//                       answer it gave up on still comes in on the open stream.
// Prints one JSON line per step on stdout; exits 0 when it finished its steps.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const args = process.argv.slice(2);
const stdioAt = args.indexOf('--stdio');
const serverCommand = stdioAt >= 0 ? args.slice(stdioAt + 1) : null;
const url = stdioAt >= 0 ? null : args[args.length - 1];
const flawAt = args.indexOf('--flaw');
const flaw = flawAt >= 0 && (stdioAt < 0 || flawAt < stdioAt) ? args[flawAt + 1] : 'none';
const eraAt = args.indexOf('--era');
const era = eraAt >= 0 && (stdioAt < 0 || eraAt < stdioAt) ? args[eraAt + 1] : '2025';
const probeAt = args.indexOf('--probe');
const probe = probeAt >= 0 && (stdioAt < 0 || probeAt < stdioAt) ? args[probeAt + 1] : 'in-place';
const FLAWS = ['none', 'naive-retrier', 'no-timeout', 'ignore-retry-after', 'reuse-id', 'no-resume', 'ignore-retry', 'wait-resume',
  'endless-input', 'retry-mismatch', 'retry-version', 'retry-discover', 'no-relisten', 'no-reissue', 'reissue-same-id', 'no-cancel'];
if (!FLAWS.includes(flaw) || !['2025', '2026'].includes(era) || !['in-place', 'sibling'].includes(probe)
    || !(url || serverCommand?.length)) {
  process.stderr.write(`usage: node client.mjs [--flaw ${FLAWS.slice(1).join('|')}] [--era 2025|2026] `
    + '[--probe in-place|sibling] (URL | --stdio COMMAND...)\n');
  process.exit(2);
}
const T = Number(process.env.TIMEOUT_MS || 1500);
const timeout = flaw === 'no-timeout' ? 3_600_000 : flaw === 'reuse-id' ? 4 * T : T;
// A write waits longer than a read: long enough for a Retry-After of a few seconds to be honoured
// under it (the SDK aborts the HTTP request when its timeout fires).
const writeTimeout = flaw === 'no-timeout' ? timeout : Math.max(timeout, 4000);
const print = line => process.stdout.write(JSON.stringify({ scenario: process.env.MCP_CONFORMANCE_SCENARIO, flaw, ...line }) + '\n');
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
let sessionGone = false;
const LOG_WAIT = Number(process.env.LOG_WAIT_MS || 4000);
const LISTEN_HOLD = Number(process.env.LISTEN_HOLD_MS || 200);
// The SDK's defaults but a first delay of 250 ms (the SDK's is 1 s: a drill of many scenarios
// adds them up); the no-resume flaw: no reconnection at all.
const reconnectionOptions = { initialReconnectionDelay: 250, maxReconnectionDelay: 30000,
  reconnectionDelayGrowFactor: 1.5, maxRetries: flaw === 'no-resume' ? 0 : 2 };

/** The ignore-retry flaw: an SSE body with its retry: lines taken out, so the SDK never sees them. */
function withoutRetryFields(response) {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = '';
  const keep = lines => lines.filter(line => !line.startsWith('retry:')).map(line => line + '\n').join('');
  const body = response.body.pipeThrough(new TransformStream({
    transform(chunk, controller) {
      pending += decoder.decode(chunk, { stream: true });
      const lines = pending.split('\n');
      pending = lines.pop();
      const kept = keep(lines);
      if (kept) controller.enqueue(encoder.encode(kept));
    },
    flush(controller) {
      if (pending && !pending.startsWith('retry:')) controller.enqueue(encoder.encode(pending));
    }
  }));
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

// How many POSTs' SSE answers broke before they carried an event id (nothing to resume with):
// what the wait-resume flaw waits on.
let idlessBreaks = 0;

/** The wait-resume flaw: an SSE answer whose break before any `id:` line is counted in idlessBreaks. */
function noteIdlessBreak(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let sawId = false;
  const body = new ReadableStream({
    async pull(controller) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (!sawId) {
          idlessBreaks++;
          print({ step: 'stream-broken-without-id' });
        }
        controller.error(error);
        return;
      }
      if (chunk.done) {
        controller.close();
        return;
      }
      if (/(^|\n)id:/.test(decoder.decode(chunk.value, { stream: true }))) sawId = true;
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    }
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

// 2026: how many response streams broke (the connection closed before the request's answer), and
// what a write in flight is told when one does (see write()).
let brokenStreams = 0;
let onBrokenStream = () => {};

/** The JSON-RPC id of a POSTed request in 2026 (a response stream to watch), else undefined. */
function requestIdOf(init, body) {
  if (era !== '2026' || init?.method !== 'POST' || body === null) return undefined;
  try {
    const message = JSON.parse(body);
    return message.method && message.id !== undefined ? message.id : undefined;
  } catch {
    return undefined;
  }
}

/** Whether text (a JSON body, or SSE events) holds the answer (result or error) to request id. */
function holdsAnswer(text, id) {
  const isAnswer = m => m && m.id === id && (m.result !== undefined || m.error !== undefined);
  try {
    return isAnswer(JSON.parse(text));
  } catch { /* SSE */ }
  return text.split('\n').filter(line => line.startsWith('data:')).some(line => {
    try { return isAnswer(JSON.parse(line.slice(5))); } catch { return false; }
  });
}

/**
 * A 2026 response watched for a break: its body failing (the connection closed) before the answer
 * to request id came, while the SDK had not aborted it. Then the break is counted and the write in
 * flight told (the well-behaved client re-issues it as a new request); the reissue-same-id flaw
 * POSTs the request again as it was instead and goes on with that response's body.
 */
function watched(response, id, input, init) {
  if (!response.body) return response;
  let text = '';
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  let current = reader;
  const body = new ReadableStream({
    async pull(controller) {
      try {
        const { value, done } = await current.read();
        if (done) {
          controller.close();
          return;
        }
        text += decoder.decode(value, { stream: true });
        controller.enqueue(value);
      } catch (error) {
        if (init.signal?.aborted || holdsAnswer(text, id)) {
          controller.error(error);
          return;
        }
        brokenStreams++;
        print({ step: 'stream-broken', id, error: String(error?.message ?? error) });
        if (flaw === 'reissue-same-id') {
          print({ step: 'resend-same-id', id });
          const again = await fetch(input, init);
          current = again.body.getReader();
          text = '';
          return;
        }
        onBrokenStream();
        controller.error(error);
      }
    },
    cancel(reason) {
      return current.cancel(reason);
    }
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** The HTTP layer: Retry-After (honoured, or not), 404 noticed, and the reuse-id flaw's resend. */
async function drillFetch(input, init) {
  const body = typeof init?.body === 'string' ? init.body : null;
  const isListTools = init?.method === 'POST' && body !== null && body.includes('"tools/list"');
  const watchedId = requestIdOf(init, body);
  if (watchedId !== undefined && flaw === 'no-cancel') {
    init = { ...init, signal: undefined }; // the flaw: the SDK's abort never closes the stream
  }
  let response;
  if (watchedId !== undefined && !(flaw === 'reuse-id' && isListTools)) {
    try {
      response = await fetch(input, init);
    } catch (error) {
      if (init.signal?.aborted) throw error;
      // The connection closed before the response began: a broken stream too.
      brokenStreams++;
      print({ step: 'stream-broken', id: watchedId, error: String(error?.message ?? error) });
      if (flaw !== 'reissue-same-id') {
        onBrokenStream();
        throw error;
      }
      print({ step: 'resend-same-id', id: watchedId });
      response = await fetch(input, init);
    }
    response = watched(response, watchedId, input, init);
  } else if (flaw === 'reuse-id' && isListTools) {
    // The flaw: a read that timed out is POSTed again as it was, id and all.
    const first = new AbortController();
    const timer = setTimeout(() => first.abort(), T);
    try {
      response = await fetch(input, { ...init, signal: first.signal });
    } catch (error) {
      if (!first.signal.aborted) throw error;
      print({ step: 'resend-same-id', body });
      response = await fetch(input, init);
    } finally {
      clearTimeout(timer);
    }
  } else {
    response = await fetch(input, init);
  }
  if (init?.method === 'POST' && (response.status === 429 || response.status === 503)) {
    const after = response.headers.get('retry-after');
    const seconds = Number(after);
    const wait = flaw === 'ignore-retry-after' || !Number.isFinite(seconds) ? 0 : seconds * 1000;
    print({ step: 'retry-after', status: response.status, retryAfter: after, waitMs: wait });
    await sleep(wait);
    response = await fetch(input, init);
  }
  if (response.status === 404 && init?.method === 'POST') {
    sessionGone = true;
  }
  if (init?.method === 'GET' || !init?.method) {
    const lastEventId = new Headers(init?.headers).get('last-event-id');
    print({ step: 'get', status: response.status, lastEventId });
  }
  if (flaw === 'ignore-retry' && response.body && response.headers.get('content-type')?.includes('text/event-stream')) {
    return withoutRetryFields(response);
  }
  if (flaw === 'wait-resume' && init?.method === 'POST' && response.body
      && response.headers.get('content-type')?.includes('text/event-stream')) {
    return noteIdlessBreak(response);
  }
  if (era === '2026' && init?.method === 'POST' && body !== null) {
    response = await resendByFlaw(input, init, body, response);
  }
  return response;
}

/**
 * The 2026 flaws, at the HTTP level, below the SDK: a POST refused 400 with -32020 (retry-mismatch)
 * or answered -32022 (retry-version), or a server/discover answered 500 (retry-discover), is POSTed
 * again as it was, id and version and all.
 */
async function resendByFlaw(input, init, body, response) {
  if (flaw === 'retry-mismatch' && response.status === 400) {
    const text = await response.clone().text();
    if (text.includes('-32020')) {
      print({ step: 'resend-mismatch', body });
      return fetch(input, init);
    }
  }
  if (flaw === 'retry-discover' && response.status === 500 && body.includes('"server/discover"')) {
    print({ step: 'resend-discover', status: response.status });
    return fetch(input, init);
  }
  if (flaw === 'retry-version' && (response.headers.get('content-type') || '').includes('application/json')) {
    const text = await response.clone().text();
    if (text.includes('-32022')) {
      print({ step: 'resend-refused-version', body });
      return fetch(input, init);
    }
  }
  return response;
}

/** The reuse-id flaw over stdio: a tools/list unanswered after T is written again as it was, id and all. */
function resendSameId(transport) {
  const send = transport.send.bind(transport);
  const answered = new Set();
  transport.send = async (message, options) => {
    await send(message, options);
    if (message.method === 'tools/list' && message.id !== undefined) {
      setTimeout(() => {
        if (answered.has(message.id)) return;
        print({ step: 'resend-same-id', body: JSON.stringify(message) });
        send(message).catch(() => {});
      }, T);
    }
  };
  return (message) => { if (message.id !== undefined && !message.method) answered.add(message.id); };
}

/** The SDK's stdio transport as a subclass: the SDK probes server/discover in place on it, not on a sibling. */
class InPlaceStdioClientTransport extends StdioClientTransport {}

let client;
let logged = false;
let onLog = () => {};
async function connect() {
  client = era === '2026'
    ? new Client({ name: 'mcp-chaos-drill-client', version: '1.0.0' }, {
      versionNegotiation: { mode: 'auto' },
      inputRequired: { maxRounds: flaw === 'endless-input' ? 1000 : 3 }
    })
    : new Client({ name: 'mcp-chaos-drill-client', version: '1.0.0' });
  client.setNotificationHandler('notifications/message', () => { logged = true; onLog(); });
  const Stdio = era === '2026' && probe === 'in-place' ? InPlaceStdioClientTransport : StdioClientTransport;
  const transport = serverCommand
    ? new Stdio({ command: serverCommand[0], args: serverCommand.slice(1), stderr: 'inherit' })
    : new StreamableHTTPClientTransport(new URL(url), { fetch: drillFetch, reconnectionOptions });
  const seen = serverCommand && flaw === 'reuse-id' ? resendSameId(transport) : null;
  // No scenario faults the handshake: a generous timeout keeps a loaded machine from failing it.
  await client.connect(transport, { timeout: Math.max(timeout, 10000) });
  if (seen) {
    const onmessage = transport.onmessage;
    transport.onmessage = (message, extra) => { seen(message); onmessage?.(message, extra); };
  }
  if (serverCommand && era === '2026' && probe === 'sibling') {
    // In 2026-07-28 over stdio the SDK probed on a process of its own: connecting to this one sent
    // nothing, so the first read would wait out the server's start (two JVMs under the drill) on
    // its short timeout. A server/discover of its own (2026-07-28 has no ping) stands in for the
    // handshake of the 2025 revisions, with as generous a timeout.
    await client.discover({ timeout: Math.max(timeout, 10000) });
  }
  sessionGone = false;
  print({ step: 'connect', protocolVersion: transport.protocolVersion ?? client.getNegotiatedProtocolVersion?.() });
}

const failure = error => ({ name: error?.name, code: error?.code, message: String(error?.message) });

/** A read: sent again after a failure, as a new request (a new id), up to three times. */
async function read(step, call) {
  const attempts = flaw === 'reuse-id' ? 1 : 3;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const result = await call();
      print({ step, attempt, ok: true });
      return result;
    } catch (error) {
      print({ step, attempt, error: failure(error) });
      if (sessionGone) await connect();
    }
  }
  return null;
}

/**
 * A write: once; after a failure its outcome is unknown, and it is not sent again (unless the flaw
 * says so). In 2026, a write whose response stream broke is re-issued once, as a new request: the
 * break fails the call at once (its signal), and the SDK gives the new request a new id.
 */
async function write(step, call, reissued = false) {
  const broken = brokenStreams;
  const idless = idlessBreaks;
  const abort = new AbortController();
  onBrokenStream = () => abort.abort(new Error('the response stream broke before the answer'));
  try {
    const result = await call(era === '2026' ? abort.signal : undefined);
    print({ step, ok: true, isError: result?.isError === true });
  } catch (error) {
    print({ step, error: failure(error), outcome: brokenStreams > broken ? 'lost with its stream' : 'unknown' });
    if (brokenStreams > broken && !reissued && flaw !== 'no-reissue') {
      print({ step: step + '-reissue' });
      return write(step, call, true);
    }
    if (sessionGone) {
      await connect(); // a 404: the session is gone, the call was not done
      return write(step, call);
    }
    if (flaw === 'wait-resume' && idlessBreaks > idless) {
      // The flaw: it waits for the stream to come back, which it cannot: it holds no event id.
      print({ step: step + '-wait-resume' });
      await sleep(3_600_000);
    }
    if (flaw === 'naive-retrier') {
      try {
        const result = await call();
        print({ step: step + '-again', ok: true, isError: result?.isError === true });
      } catch (again) {
        print({ step: step + '-again', error: failure(again) });
      }
    }
  }
}

try {
  await connect();
} catch (error) {
  print({ step: 'connect', error: failure(error) });
  process.exit(1);
}
await read('list', () => client.listTools(undefined, { timeout }));
// Asks for progress, so the demo server answers as an SSE stream.
await write('call-slow', signal => client.callTool({ name: 'slow', arguments: { ms: 50 } },
  { timeout: writeTimeout, onprogress: () => {}, signal }));
await write('call-echo', signal => client.callTool({ name: 'echo', arguments: { text: 'after' } },
  { timeout: writeTimeout, signal }));
await read('read-back', () => client.listTools(undefined, { timeout }));
let mixedUp = false;
if (serverCommand) {
  // Two calls in flight on the one stream: each answer must be taken for its own call.
  const sums = [[1, 2], [10, 20]];
  const results = await Promise.allSettled(sums.map(([a, b]) =>
    client.callTool({ name: 'add', arguments: { a, b } }, { timeout: writeTimeout })));
  results.forEach((r, i) => {
    if (r.status === 'rejected') {
      print({ step: 'call-add-' + i, error: failure(r.reason) });
      return;
    }
    const text = r.value?.content?.[0]?.text;
    const expected = String(sums[i][0] + sums[i][1]);
    print({ step: 'call-add-' + i, ok: text === expected, text, expected });
    if (text !== expected) mixedUp = true;
  });
}
// Over HTTP the server's log message comes on the GET stream: wait for it a while, so that a
// stream dropped under it can be opened again (get-stream-dropped). Not over stdio, where the
// steps are as they were before the SSE scenarios; nor in 2026, which has no GET stream.
if (!serverCommand && era !== '2026') {
  try {
    await client.setLoggingLevel('info', { timeout });
    print({ step: 'set-log-level', ok: true });
    const received = logged || await new Promise(resolve => {
      const timer = setTimeout(() => resolve(false), LOG_WAIT);
      onLog = () => { clearTimeout(timer); resolve(true); };
    });
    print({ step: 'log-message', received });
  } catch (error) {
    print({ step: 'set-log-level', error: failure(error) });
  }
}
// 2026: a listen stream for tools/list_changed, opened again when it is cut (listen-cut).
if (era === '2026' && client.getNegotiatedProtocolVersion() === '2026-07-28') {
  const attempts = flaw === 'no-relisten' ? 1 : 3;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    let subscription;
    try {
      subscription = await client.listen({ toolsListChanged: true }, { timeout });
    } catch (error) {
      print({ step: 'listen', attempt, error: failure(error) });
      continue;
    }
    print({ step: 'listen', attempt, ok: true, honored: subscription.honoredFilter });
    const cause = await Promise.race([subscription.closed,
      new Promise(resolve => setTimeout(() => resolve('held'), LISTEN_HOLD))]);
    if (cause === 'held') {
      await subscription.close().catch(() => {});
      print({ step: 'listen-close', ok: true });
      break;
    }
    // Ended by the server: gracefully (the complete result) is the end; else the stream was lost.
    print({ step: 'listen-ended', attempt, cause });
    if (cause === 'graceful') break;
  }
}
const closing = Date.now();
await client.close().catch(() => {});
print({ step: 'close', ms: Date.now() - closing });
process.exit(mixedUp ? 1 : 0);
