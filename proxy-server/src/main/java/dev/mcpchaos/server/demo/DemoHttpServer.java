package dev.mcpchaos.server.demo;

import dev.mcpchaos.server.host.McpHttpHost;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * The built-in demo MCP server over the Streamable HTTP transport ({@code mcp-chaos demo-server
 * --http}): the same tools and answers as the stdio {@link DemoServer}, on an {@link McpHttpHost}
 * (endpoint {@value McpHttpHost#PATH}), whose Javadoc says how it serves HTTP.
 *
 * <pre>{@code
 * try (McpHttpHost server = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0))) {
 *     URI endpoint = server.endpoint(); // http://127.0.0.1:PORT/mcp
 *     ...
 * }
 * }</pre>
 *
 * <p>Tool calls run on at most 64 daemon threads; closing the server interrupts those still
 * running. Diagnostics go to stderr.
 */
public final class DemoHttpServer {

    private DemoHttpServer() {
    }

    /**
     * Starts the demo server on {@code address} with the default keep-alive interval.
     *
     * @param address where to listen; port 0 picks a free port (see {@link McpHttpHost#address()})
     * @return the running server
     * @throws IOException if the address cannot be bound
     */
    public static McpHttpHost start(InetSocketAddress address) throws IOException {
        return start(address, McpHttpHost.DEFAULT_KEEP_ALIVE);
    }

    /**
     * Starts the demo server on {@code address}.
     *
     * @param address where to listen; port 0 picks a free port (see {@link McpHttpHost#address()})
     * @param keepAliveInterval how long an SSE response may be silent before a {@code : keep-alive}
     *     comment is written; positive
     * @return the running server
     * @throws IOException if the address cannot be bound
     */
    public static McpHttpHost start(InetSocketAddress address, Duration keepAliveInterval) throws IOException {
        return start(address, keepAliveInterval, false);
    }

    /**
     * Starts the demo server on {@code address}, serving the sessionless 2026-07-28 revision too
     * when {@code stateless}: a dual-era server, as the spec's Versioning page allows. A request
     * without {@code Mcp-Session-Id} whose {@code MCP-Protocol-Version} is 2026-07-28 is then
     * answered on its own: {@code server/discover}, {@code tools/list} (with {@code ttlMs: 0} and
     * {@code cacheScope: "private"}), {@code tools/call} (the same tools) and {@code ping}, each
     * result with {@code resultType: "complete"}, and {@code subscriptions/listen}: an SSE stream
     * that starts with {@code notifications/subscriptions/acknowledged} ({@code toolsListChanged}
     * honoured) and stays open until the client closes it or the server stops (then it ends with
     * the graceful {@code complete} result); the tool list never changes, so no
     * {@code notifications/tools/list_changed} comes on it. A request
     * whose {@code _meta} names another version gets {@code -32022} (UnsupportedProtocolVersion,
     * listing 2026-07-28). {@code initialize} still starts a 2025 session. What it does not do
     * (yet): {@code input_required} rounds of its own, the header
     * checks ({@code Mcp-Method}/{@code Mcp-Name}, -32020), and the {@code 400} status the spec
     * gives -32022 over HTTP (it answers the error with 200).
     *
     * @param address where to listen; port 0 picks a free port (see {@link McpHttpHost#address()})
     * @param keepAliveInterval how long an SSE response may be silent before a {@code : keep-alive}
     *     comment is written; positive
     * @param stateless whether sessionless 2026-07-28 requests are served too
     * @return the running server
     * @throws IOException if the address cannot be bound
     */
    public static McpHttpHost start(InetSocketAddress address, Duration keepAliveInterval, boolean stateless)
            throws IOException {
        DemoHandlers handlers = new DemoHandlers(System.err, DemoServer.version(), DemoServer.NAME + "-http-tool-",
                stateless);
        try {
            return McpHttpHost.start(address, keepAliveInterval, DemoServer.NAME, handlers);
        } catch (IOException | RuntimeException e) {
            handlers.close();
            throw e;
        }
    }
}
