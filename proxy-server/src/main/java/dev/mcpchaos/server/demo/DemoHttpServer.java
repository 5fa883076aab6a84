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
        DemoHandlers handlers = new DemoHandlers(System.err, DemoServer.version(), DemoServer.NAME + "-http-tool-");
        try {
            return McpHttpHost.start(address, keepAliveInterval, DemoServer.NAME, handlers);
        } catch (IOException | RuntimeException e) {
            handlers.close();
            throw e;
        }
    }
}
