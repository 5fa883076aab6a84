package dev.mcpchaos.server.demo;

import static java.util.Objects.requireNonNull;

import dev.mcpchaos.server.host.McpStdioHost;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The built-in demo MCP server ({@code mcp-chaos demo-server}): a small, dependable MCP server
 * over the stdio transport (newline-delimited JSON-RPC 2.0), so the proxy can be tried, tested and
 * demonstrated without installing a third-party server.
 *
 * <p>It answers {@code initialize} (protocol versions 2024-11-05, 2025-03-26, 2025-06-18 and
 * 2025-11-25; anything else is answered with the latest), {@code ping}, {@code logging/setLevel},
 * {@code tools/list} and {@code tools/call} for four tools:
 * <ul>
 *   <li>{@code echo {text}} returns the text;
 *   <li>{@code add {a, b}} returns the sum;
 *   <li>{@code slow {ms}} sleeps (off the reader thread) and reports progress when given a
 *       {@code _meta.progressToken};
 *   <li>{@code large {bytes}} returns exactly that many ASCII characters (at most 64 MiB).
 * </ul>
 * It also answers JSON-RPC batches, and the errors -32700 (not JSON), -32600 (not a request),
 * -32601 (unknown method) and -32602 (unknown tool). Diagnostics go to stderr only. With
 * {@code --dual-era} ({@link #serve(InputStream, OutputStream, boolean)}) it serves the sessionless
 * 2026-07-28 revision too, as the HTTP one does.
 *
 * <p>The same server over MCP Streamable HTTP is {@link DemoHttpServer}; both hand messages to
 * a {@link DemoHandler}, so they answer alike. This one runs on an {@link McpStdioHost}.
 */
public final class DemoServer {

    /** The {@code serverInfo.name} this server reports. */
    public static final String NAME = "mcp-chaos-demo";

    private static final String VERSION_RESOURCE = "/dev/mcpchaos/server/version.properties";
    private static final String FALLBACK_VERSION = "0.1.0";
    private static final AtomicInteger RUNS = new AtomicInteger();

    private DemoServer() {
    }

    /**
     * Serves MCP on the given streams until {@code in} ends, then waits (at most 10 s) for tool
     * calls still running, and returns.
     *
     * <p>Each message is written to {@code out} as one line of compact JSON and flushed. Neither
     * stream is closed: they belong to the caller.
     *
     * @param in where client messages arrive
     * @param out where replies and notifications go; nothing else is written to it
     * @return the process exit code, {@code 0}
     * @throws IOException if reading {@code in} fails (a failing {@code out} is logged and tolerated,
     *     because a client that stopped reading will close {@code in} next)
     */
    public static int serve(InputStream in, OutputStream out) throws IOException {
        return serve(in, out, false);
    }

    /**
     * Serves MCP on the given streams as {@link #serve(InputStream, OutputStream)} does, serving
     * the sessionless 2026-07-28 revision too when {@code dualEra}, as the HTTP one does
     * ({@link DemoHttpServer#start(java.net.InetSocketAddress, java.time.Duration, boolean)}; the
     * same {@link DemoHandler} answers both): a {@code server/discover}, or a request whose
     * {@code _meta} names its protocol version, is answered on its own ({@code server/discover},
     * {@code tools/list} with {@code ttlMs} and {@code cacheScope}, {@code tools/call},
     * {@code ping}, each result with {@code resultType: "complete"}; another version gets
     * {@code -32022}), and {@code initialize} starts the 2025 session as before. The spec's
     * Versioning page: a dual-era server "selects its behavior from how the client opens".
     *
     * @param dualEra whether sessionless 2026-07-28 requests are served too
     */
    public static int serve(InputStream in, OutputStream out, boolean dualEra) throws IOException {
        requireNonNull(in, "in");
        requireNonNull(out, "out");
        DemoHandlers handlers = new DemoHandlers(System.err, version(), NAME + "-" + RUNS.incrementAndGet() + "-tool-",
                dualEra);
        return McpStdioHost.serve(in, out, System.err, NAME, handlers);
    }

    /**
     * Runs the server on this process's stdin and stdout, then exits with {@link #serve}'s code.
     * Used by {@code java -cp ... dev.mcpchaos.server.demo.DemoServer} and by tests that need a
     * real child process.
     *
     * @param args ignored
     * @throws Exception if serving fails
     */
    public static void main(String[] args) throws Exception {
        // stdout is the protocol. Take it for ourselves and point System.out at stderr, so that a
        // library printing to System.out (a logging default, a stray println) cannot corrupt it.
        OutputStream protocol = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 64 * 1024);
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true));
        System.exit(serve(System.in, protocol));
    }

    /** The version from the build's {@code version.properties}, else the jar manifest, else a default. */
    static String version() {
        try (InputStream resource = DemoServer.class.getResourceAsStream(VERSION_RESOURCE)) {
            if (resource != null) {
                Properties properties = new Properties();
                properties.load(resource);
                String version = properties.getProperty("version");
                // An unfiltered placeholder means the resource was copied without Maven filtering.
                if (version != null && !version.isBlank() && !version.contains("${")) {
                    return version.trim();
                }
            }
        } catch (IOException e) {
            // Fall through: a missing version must never stop the server from starting.
        }
        String fromManifest = DemoServer.class.getPackage().getImplementationVersion();
        return fromManifest != null ? fromManifest : FALLBACK_VERSION;
    }
}
