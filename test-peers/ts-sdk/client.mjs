// A 2026-07-28 MCP client on the TypeScript SDK 2.4 (@modelcontextprotocol/client), pinned to that
// revision: node client.mjs URL STEP... where a step is `list`, `echo:TEXT` or `slow:STEPS`. Prints
// one JSON line per step on stdout: {"step", "ms", ...result} or {"step", "ms", "error": {...}};
// a failed step does not stop the next. TIMEOUT_MS (default 10000) bounds each request.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, ...steps] = process.argv.slice(2);
const timeout = Number(process.env.TIMEOUT_MS || 10000);
const print = line => process.stdout.write(JSON.stringify(line) + '\n');
const failure = error => ({ name: error.name, code: error.code, status: error.status, message: String(error.message) });

const client = new Client({ name: 'mcp-chaos-it-ts-client', version: '2.4.0' },
  { versionNegotiation: { mode: { pin: '2026-07-28' } } });
const transport = new StreamableHTTPClientTransport(new URL(url));
let started = performance.now();
try {
  await client.connect(transport, { timeout });
  print({ step: 'connect', ms: Math.round(performance.now() - started), protocolVersion: transport.protocolVersion });
} catch (error) {
  print({ step: 'connect', ms: Math.round(performance.now() - started), error: failure(error) });
  process.exit(0);
}
for (const step of steps) {
  const [kind, argument] = [step.split(':')[0], step.slice(step.indexOf(':') + 1)];
  started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    if (kind === 'list') {
      const listed = await client.listTools(undefined, { timeout });
      print({ step, ms: elapsed(), tools: listed.tools.map(tool => tool.name) });
    } else if (kind === 'echo') {
      const result = await client.callTool({ name: 'echo', arguments: { text: argument } }, { timeout });
      print({ step, ms: elapsed(), isError: result.isError === true, text: result.content?.[0]?.text });
    } else if (kind === 'slow') {
      const progress = [];
      const result = await client.callTool({ name: 'slow', arguments: { steps: Number(argument) } },
        { timeout, onprogress: p => progress.push(p.progress) });
      print({ step, ms: elapsed(), isError: result.isError === true, text: result.content?.[0]?.text, progress });
    } else {
      print({ step, ms: 0, error: { name: 'UsageError', message: `unknown step ${step} (expected: list, echo:TEXT, slow:N)` } });
    }
  } catch (error) {
    print({ step, ms: elapsed(), error: failure(error) });
  }
}
await client.close();
