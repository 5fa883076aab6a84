// The fixed workload of bench/verdicts.sh on the TypeScript SDK's client (@modelcontextprotocol/client
// from test-peers/, the version its package.json pins):
//
//   node ts-client.mjs stdio -- COMMAND ARG...     (the SDK starts COMMAND and talks on its pipes)
//   node ts-client.mjs http URL                     (Streamable HTTP, such as http://127.0.0.1:8080/mcp)
//
// initialize, tools/list, CALLS (default 40) sequential tools/call of `echo`, each bounded by
// CALL_TIMEOUT_MS (default 5000), then close. A failed call is recorded and the next one goes on.
// The SDK's default version negotiation ('legacy': a plain 2025 initialize) is kept on purpose:
// server-everything speaks the 2025 revisions, and this is how a user's client meets it.
//
// stdout: one JSON line per step, then {"summary": {...}} as the last line. The SDK client is
// loaded from TEST_PEERS (default: ../../test-peers from this file) through its package exports,
// so this file needs no node_modules of its own.
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const peers = resolve(process.env.TEST_PEERS || join(here, '..', '..', 'test-peers'));
const require = createRequire(join(peers, 'package.json'));
const { Client, StreamableHTTPClientTransport } = require('@modelcontextprotocol/client');
const { StdioClientTransport } = require('@modelcontextprotocol/client/stdio');

const calls = Number(process.env.CALLS || 40);
const callTimeout = Number(process.env.CALL_TIMEOUT_MS || 5000);
// The first answer waits for the proxy's JVM and the server to start: more room than a call.
const initTimeout = Number(process.env.INIT_TIMEOUT_MS || 30000);
const print = line => process.stdout.write(JSON.stringify(line) + '\n');

// How a failure is counted: a JSON-RPC error by its code, a timeout as such, anything else by
// the SDK's error name and code (a closed connection, a transport error).
function kind(error) {
  if (error?.code === 'REQUEST_TIMEOUT') return 'timeout';
  if (typeof error?.code === 'number') return `error ${error.code}`;
  return `${error?.name ?? 'Error'}${error?.code !== undefined ? ' ' + error.code : ''}`;
}

const [mode, ...rest] = process.argv.slice(2);
let transport;
if (mode === 'stdio' && rest[0] === '--' && rest.length > 1) {
  // The SDK passes only a few variables (HOME, PATH, ...) to the child by default; the proxy's
  // launcher needs the caller's (MCP_CHAOS_CDS, JAVA_HOME...), so the whole environment goes.
  transport = new StdioClientTransport({ command: rest[1], args: rest.slice(2), env: { ...process.env }, stderr: 'inherit' });
} else if (mode === 'http' && rest.length === 1) {
  transport = new StreamableHTTPClientTransport(new URL(rest[0]));
} else {
  process.stderr.write('usage: ts-client.mjs stdio -- COMMAND ARG... | ts-client.mjs http URL\n');
  process.exit(2);
}

const summary = { client: 'ts-sdk', initialize: null, tools: null, ok: 0, isError: 0, wrong: 0, failed: 0, failures: {}, close: null };
const client = new Client({ name: 'mcp-chaos-verdicts', version: '0' });
let started = performance.now();
const elapsed = () => Math.round(performance.now() - started);
try {
  await client.connect(transport, { timeout: initTimeout });
  summary.initialize = 'ok';
  print({ step: 'initialize', ms: elapsed(), protocolVersion: client.getNegotiatedProtocolVersion(), server: client.getServerVersion() });
} catch (error) {
  summary.initialize = kind(error);
  print({ step: 'initialize', ms: elapsed(), error: kind(error), message: String(error?.message) });
  print({ summary });
  process.exit(0); // the script sees initialize != ok and calls the run broken
}

started = performance.now();
try {
  const listed = await client.listTools(undefined, { timeout: callTimeout });
  summary.tools = listed.tools.length;
  print({ step: 'tools/list', ms: elapsed(), tools: listed.tools.length });
} catch (error) {
  summary.tools = kind(error);
  print({ step: 'tools/list', ms: elapsed(), error: kind(error), message: String(error?.message) });
}

for (let i = 1; i <= calls; i++) {
  const message = `verdicts-${i}`;
  started = performance.now();
  try {
    const result = await client.callTool({ name: 'echo', arguments: { message } }, { timeout: callTimeout });
    const text = result.content?.[0]?.text;
    // A tool error (isError) is an answer, not a failure of the call; an answer with another
    // call's text would mean answers were crossed.
    if (result.isError === true) summary.isError++;
    else if (text === `Echo: ${message}`) summary.ok++;
    else summary.wrong++;
    print({ step: `echo ${i}`, ms: elapsed(), isError: result.isError === true, text });
  } catch (error) {
    summary.failed++;
    summary.failures[kind(error)] = (summary.failures[kind(error)] ?? 0) + 1;
    print({ step: `echo ${i}`, ms: elapsed(), error: kind(error), message: String(error?.message) });
  }
}

started = performance.now();
try {
  // stdio: ends the proxy's stdin, waits up to 2 s, then SIGTERM (the SDK's own shutdown);
  // HTTP: DELETEs the session.
  await client.close();
  summary.close = 'ok';
} catch (error) {
  summary.close = kind(error);
}
print({ step: 'close', ms: elapsed() });
print({ summary });
