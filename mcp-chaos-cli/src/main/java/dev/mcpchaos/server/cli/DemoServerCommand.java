package dev.mcpchaos.server.cli;

import dev.mcpchaos.core.config.Units;
import dev.mcpchaos.server.demo.DemoHttpServer;
import dev.mcpchaos.server.demo.DemoServer;
import dev.mcpchaos.server.host.McpHttpHost;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** {@code mcp-chaos demo-server [--http HOST:PORT]}: the built-in MCP server over stdio or Streamable HTTP. */
@Command(name = "demo-server",
        mixinStandardHelpOptions = true,
        description = {"Run the built-in MCP server: tools echo, add, slow (with progress) and large.",
            "Over stdio by default; over MCP Streamable HTTP at http://HOST:PORT/mcp with --http.",
            "The demo, the docs and the tests put the proxy in front of it."},
        footer = {"", "Examples:", "  mcp-chaos demo-server",
            "  mcp-chaos demo-server --http 127.0.0.1:3001"})
final class DemoServerCommand implements Callable<Integer> {

    @Option(names = "--http", paramLabel = "HOST:PORT",
            description = "Serve MCP Streamable HTTP on this address instead of stdio (port 0 picks a free port; "
                    + "an IPv6 host goes in brackets, [::1]:3001). The endpoint URL is printed on stderr. "
                    + "Runs until SIGTERM or SIGINT. Bind a loopback address unless it must be reached from elsewhere.")
    String http;

    @Option(names = "--keep-alive", paramLabel = "DURATION", defaultValue = "15s",
            description = "With --http: how long an SSE stream may be silent before a keep-alive comment. "
                    + "Default: ${DEFAULT-VALUE}.")
    String keepAlive;

    @Option(names = "--dual-era",
            description = "Serve the sessionless 2026-07-28 revision too, beside the 2025 ones (a dual-era server): "
                    + "server/discover, and tools/list, tools/call and ping with the version in _meta; initialize "
                    + "still starts a 2025 session. Over stdio a request is 2026-07-28 by its _meta, over --http by "
                    + "its MCP-Protocol-Version header. What mcp-chaos drill --era 2026 runs.")
    boolean dualEra;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (http == null) {
            return serveStdio(dualEra);
        }
        InetSocketAddress address;
        Duration keepAliveInterval;
        try {
            address = parseHostPort(http);
            keepAliveInterval = Units.parseDuration(keepAlive);
            if (keepAliveInterval.isZero() || keepAliveInterval.isNegative()) {
                throw new IllegalArgumentException("--keep-alive: " + keepAlive + " (expected: > 0)");
            }
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        McpHttpHost server;
        try {
            server = DemoHttpServer.start(address, keepAliveInterval, dualEra);
        } catch (IOException e) {
            System.err.println("mcp-chaos: cannot listen on " + http + ": " + e);
            return 1;
        }
        CountDownLatch stop = new CountDownLatch(1);
        StopSignals.handle(name -> stop.countDown());
        System.err.println("mcp-chaos demo-server: MCP Streamable HTTP at " + server.endpoint());
        try {
            stop.await();
        } finally {
            server.close();
        }
        System.err.println("mcp-chaos demo-server: stopped");
        return 0;
    }

    /**
     * Serves over this process's stdin and stdout until stdin ends; the exit code. A failure is
     * said in one line on stderr with code 1, as the command line says a command's failure.
     */
    static int serveStdio(boolean dualEra) {
        // stdout is the protocol: nothing else may print there, whatever a library does.
        FileOutputStream protocolOut = new FileOutputStream(FileDescriptor.out);
        System.setOut(System.err);
        try {
            return DemoServer.serve(new FileInputStream(FileDescriptor.in), protocolOut, dualEra);
        } catch (IOException | RuntimeException e) {
            System.err.println("mcp-chaos: " + e.getMessage());
            return 1;
        }
    }

    /**
     * Parses {@code HOST:PORT}, {@code [IPV6]:PORT}. The host may be a name, which is resolved
     * here, so a typo fails at start-up with a message rather than later.
     */
    static InetSocketAddress parseHostPort(String text) {
        String expected = " (expected: HOST:PORT, such as 127.0.0.1:3001 or [::1]:3001; port 0 to 65535)";
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new IllegalArgumentException("--http: " + text + expected);
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        } else if (host.contains(":")) {
            throw new IllegalArgumentException("--http: " + text + " (an IPV6 host needs brackets)" + expected);
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--http: " + text + expected);
        }
        if (host.isEmpty() || port < 0 || port > 65535) {
            throw new IllegalArgumentException("--http: " + text + expected);
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("--http: unknown host " + host + expected);
        }
    }
}
