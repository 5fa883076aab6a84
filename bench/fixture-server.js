// A tiny stdio MCP server for bench/fixture-spawn.sh: one JSON-RPC message a line on stdin, an
// answer a line on stdout (initialize, tools/list, tools/call of `echo`, ping; -32601 for the
// rest). It ends when stdin ends, or, with FIXTURE_EXIT_CODE set, right after its first answer,
// with that code. With FIXTURE_EXIT_STAMP set to a file, it writes there, as it exits, the time
// of its exit on the monotonic clock in nanoseconds (process.hrtime, the clock of Java's
// System.nanoTime on Linux), so that the bench can tell how long after it a proxy in front of it
// exits.
'use strict';
const fs = require('fs');
const readline = require('readline');

const exitCode = process.env.FIXTURE_EXIT_CODE;
const stamp = process.env.FIXTURE_EXIT_STAMP;
if (stamp) {
  process.on('exit', () => fs.writeFileSync(stamp, process.hrtime.bigint().toString()));
}

function answer(message) {
  switch (message.method) {
    case 'initialize':
      return {
        protocolVersion: '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'fixture-server', version: '1.0.0' },
      };
    case 'tools/list':
      return {
        tools: [{ name: 'echo', description: 'Says it back', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }],
      };
    case 'tools/call':
      return { content: [{ type: 'text', text: String((message.params && message.params.arguments || {}).text) }] };
    case 'ping':
      return {};
    default:
      return undefined;
  }
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch (e) {
    return;
  }
  if (message.id === undefined || message.method === undefined) {
    return; // a notification, or an answer to nothing we asked
  }
  const result = answer(message);
  const reply = result === undefined
    ? { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'no method ' + message.method } }
    : { jsonrpc: '2.0', id: message.id, result };
  process.stdout.write(JSON.stringify(reply) + '\n', () => {
    if (exitCode !== undefined) {
      process.exit(Number(exitCode));
    }
  });
}).on('close', () => process.exit(0));
