// A typical application on a TypeScript MCP SDK, as drilled by mcp-chaos drill (docs/drill.md,
// "Real clients"). Invoked the way the conformance suite's client mode invokes a client:
//   node ts-app.mjs --sdk v1|v2 [--era 2026] URL      (MCP_CONFORMANCE_SCENARIO set; it does the same in every scenario)
// --sdk v1: @modelcontextprotocol/sdk 1.32 (the 2025 revisions); --sdk v2: @modelcontextprotocol/client 2.4.
// --era 2026 (v2 only): the SDK's version negotiation in 'auto' mode (server/discover first, the
// stateless 2026-07-28 revision when the server speaks it, else initialize), with its defaults
// otherwise (input_required rounds answered up to 10 times).
// What it does is what an application does with the SDK, with no resilience of its own on top:
// connect, list the tools, call slow with a progress handler (so the answer comes as an SSE stream),
// call echo, close (the order of test-peers/drill/client.mjs, so the faults hit the same messages). Each request gets a 2.5 s timeout through the SDK's own request option
// (both SDKs' default is 60 s, DEFAULT_REQUEST_TIMEOUT_MSEC), after which the SDK cancels it. A step
// that fails is printed and the application goes on with the next one, as a tool-using app would;
// nothing is retried by the driver: what is retried, the SDK retried.
// In --era 2026, when 2026-07-28 was negotiated, one step more before close: it listens for
// tools/list_changed (client.listen, subscriptions/listen), holds the stream 200 ms and closes it; the
// SDK does not listen again by itself ("No automatic re-listen"), and neither does the driver.
// Prints one JSON line per step; exits 0 when it got through its steps, 1 when connecting failed.
const args = process.argv.slice(2);
const url = args[args.length - 1];
const sdk = args[args.indexOf('--sdk') + 1];
const era = args.includes('--era') ? args[args.indexOf('--era') + 1] : '2025';
if (!['v1', 'v2'].includes(sdk) || !['2025', '2026'].includes(era) || (era === '2026' && sdk !== 'v2')
    || !url || !url.startsWith('http')) {
  process.stderr.write('usage: node ts-app.mjs --sdk v1|v2 [--era 2026] URL (--era 2026 with v2 only)\n');
  process.exit(2);
}
const { Client, StreamableHTTPClientTransport } = sdk === 'v1'
  ? { ...(await import('@modelcontextprotocol/sdk/client/index.js')),
      ...(await import('@modelcontextprotocol/sdk/client/streamableHttp.js')) }
  : await import('@modelcontextprotocol/client');

const TIMEOUT_MS = Number(process.env.TIMEOUT_MS || 2500);
const print = line => process.stdout.write(JSON.stringify({ sdk, scenario: process.env.MCP_CONFORMANCE_SCENARIO, ...line }) + '\n');
const failure = error => ({ name: error?.name, code: error?.code, message: String(error?.message) });

async function step(name, call) {
  const started = Date.now();
  try {
    const result = await call();
    print({ step: name, ok: true, isError: result?.isError === true, ms: Date.now() - started });
  } catch (error) {
    print({ step: name, error: failure(error), ms: Date.now() - started });
  }
}

const client = era === '2026'
  ? new Client({ name: `mcp-chaos-drill-ts-${sdk}`, version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } })
  : new Client({ name: `mcp-chaos-drill-ts-${sdk}`, version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(url));
client.onerror = error => print({ event: 'onerror', error: failure(error) });
try {
  // No scenario faults the handshake: a longer timeout keeps a loaded machine from failing it.
  await client.connect(transport, { timeout: 10_000 });
  print({ step: 'connect', ok: true });
} catch (error) {
  print({ step: 'connect', error: failure(error) });
  process.exit(1);
}
await step('list', () => client.listTools(undefined, { timeout: TIMEOUT_MS }));
// v1's callTool takes a result schema before the options, v2's takes the options second.
const callTool = (params, options) => sdk === 'v1' ? client.callTool(params, undefined, options) : client.callTool(params, options);
await step('call-slow', () => callTool({ name: 'slow', arguments: { ms: 50 } }, { timeout: TIMEOUT_MS, onprogress: () => {} }));
await step('call-echo', () => callTool({ name: 'echo', arguments: { text: 'hello' } }, { timeout: TIMEOUT_MS }));
if (era === '2026' && client.getNegotiatedProtocolVersion() === '2026-07-28') {
  await step('listen', async () => {
    const subscription = await client.listen({ toolsListChanged: true }, { timeout: TIMEOUT_MS });
    const cause = await Promise.race([subscription.closed,
      new Promise(resolve => setTimeout(() => resolve('held'), 200))]);
    if (cause === 'held') {
      await subscription.close();
    } else {
      print({ event: 'listen-ended', cause });
    }
  });
}
await step('close', () => client.close());
process.exit(0);
