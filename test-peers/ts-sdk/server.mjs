// A 2026-07-28 MCP server on the TypeScript SDK 2.4 (@modelcontextprotocol/server), served
// sessionless over Streamable HTTP on 127.0.0.1. PORT=0 (the default) takes a free port; the port
// taken is printed on stderr as "listening on port N". Every request's MCP headers are logged on
// stderr as "request METHOD {headers}" so a test can see what reached the server.
import http from 'node:http';
import { Readable } from 'node:stream';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import * as z from 'zod';

function newServer() {
  const server = new McpServer({ name: 'ts-sdk-2026-peer', version: '2.4.0' });
  server.registerTool('echo', { description: 'Returns text unchanged.', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerTool('slow', {
    description: 'Sends steps progress notifications, 20 ms apart, then answers.',
    inputSchema: z.object({ steps: z.number().int().min(1).max(50) })
  }, async ({ steps }, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      if (token !== undefined) {
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } });
      }
      await new Promise(resolve => setTimeout(resolve, 20));
    }
    return { content: [{ type: 'text', text: `done ${steps}` }] };
  });
  return server;
}

const handler = createMcpHandler(newServer);

// node:http to the handler's fetch face (the SDK's own adapter package has no 2.4 release).
const httpServer = http.createServer(async (req, res) => {
  const mcpHeaders = Object.fromEntries(Object.entries(req.headers).filter(([name]) => name.startsWith('mcp-')));
  console.error(`request ${req.method} ${JSON.stringify(mcpHeaders)}`);
  try {
    const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Readable.toWeb(req);
    const request = new Request(`http://${req.headers.host}${req.url}`,
      { method: req.method, headers: req.headers, body, duplex: 'half' });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) {
      for await (const chunk of response.body) {
        res.write(chunk);
      }
    }
    res.end();
  } catch (error) {
    console.error(`handler failed: ${error.stack || error}`);
    if (!res.headersSent) {
      res.writeHead(500, { 'content-type': 'text/plain' });
    }
    res.end();
  }
});
httpServer.listen(Number(process.env.PORT || 0), '127.0.0.1',
  () => console.error(`listening on port ${httpServer.address().port}`));
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => { handler.close().finally(() => process.exit(0)); });
}
