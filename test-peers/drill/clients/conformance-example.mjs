// The conformance suite's example client, as mcp-chaos drill runs it (docs/drill.md, "Real clients").
// @modelcontextprotocol/conformance 0.1.16 does not ship its example clients in the npm package:
// they live in the suite's repository (examples/clients/typescript/everything-client.ts, run with
// tsx) and are not vendored here. This driver does exactly what that client's handler for the basic
// scenarios ("initialize", "tools-call") does, on the SDK the conformance package depends on
// (@modelcontextprotocol/sdk, 1.32.2 here): a Client with no capabilities, a Streamable HTTP
// transport with no options, connect, listTools() with the SDK's default timeout (60 s), then
// transport.close(); exit 0, or exit 1 on the first error. The example client answers a scenario
// name it does not know with "Unknown scenario" and exit 1; the drill's scenarios are not its names,
// so every drill scenario is run with the basic handler (the one the suite's tools-call uses).
// Invoked as the suite invokes it: node conformance-example.mjs URL, MCP_CONFORMANCE_SCENARIO set.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const serverUrl = process.argv[process.argv.length - 1];
if (!process.env.MCP_CONFORMANCE_SCENARIO || !serverUrl?.startsWith('http')) {
  console.error('Usage: MCP_CONFORMANCE_SCENARIO=<scenario> node conformance-example.mjs <server-url>');
  process.exit(1);
}
try {
  const client = new Client({ name: 'test-client', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(serverUrl));
  await client.connect(transport);
  console.log('Successfully connected to MCP server');
  await client.listTools();
  console.log('Successfully listed tools');
  await transport.close();
  console.log('Connection closed successfully');
  process.exit(0);
} catch (error) {
  console.error('Error:', error);
  process.exit(1);
}
