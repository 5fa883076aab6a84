package dev.mcpchaos.junit;

import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.junit.internal.StdioClientSide;
import dev.mcpchaos.rules.Chaos;
import dev.mcpchaos.rules.RuleEngine;
import dev.mcpchaos.rules.journal.Journal;
import dev.mcpchaos.server.RunningProxy;

import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;

/**
 * The proxy a test of {@link McpChaosExtension} gets: a {@link RunningProxy}, plus, on stdio, the
 * command an MCP client runs to reach it. Closed by the extension, not by the test.
 */
public final class ChaosProxy implements RunningProxy {

    private final RunningProxy proxy;
    private final StdioClientSide stdio;
    private final AutoCloseable upstream;
    private final java.util.function.LongSupplier unmatched;

    ChaosProxy(RunningProxy proxy, StdioClientSide stdio, AutoCloseable upstream,
               java.util.function.LongSupplier unmatched) {
        this.proxy = proxy;
        this.stdio = stdio;
        this.upstream = upstream;
        this.unmatched = unmatched;
    }

    /**
     * In front of a replayed server: how many requests the cassettes had no recording for (each
     * answered with a JSON-RPC error {@code -32601} naming the closest recorded request), since
     * this proxy started.
     *
     * @throws UnsupportedOperationException in front of a real server
     */
    public long unmatchedRequests() {
        if (unmatched == null) {
            throw new UnsupportedOperationException("unmatchedRequests(): this proxy is in front of a real server "
                    + "(expected: one made by McpChaosExtension.replayHttp/replayStdio or @McpChaosTest(replay = ...))");
        }
        return unmatched.getAsLong();
    }

    /**
     * On stdio, the command an MCP client starts as its "server" to talk to this proxy (a small
     * relay to the proxy's client side), such as
     * {@code ServerParameters.builder(cmd.get(0)).args(cmd.subList(1, cmd.size()))} for the MCP
     * Java SDK. One client per proxy: with {@link Lifecycle#PER_CLASS} make it once for the class.
     *
     * @throws UnsupportedOperationException on HTTP: use {@link #mcpUrl()}
     */
    public List<String> stdioClientCommand() {
        if (stdio == null) {
            throw new UnsupportedOperationException("stdioClientCommand(): this proxy runs HTTP (expected: a stdio "
                    + "proxy; an HTTP client connects to mcpUrl(), " + proxy.mcpUrl() + ")");
        }
        return stdio.clientCommand();
    }

    @Override
    public TransportKind transport() {
        return proxy.transport();
    }

    @Override
    public URI mcpUrl() {
        return proxy.mcpUrl();
    }

    @Override
    public URI uri(String path) {
        return proxy.uri(path);
    }

    @Override
    public URI controlUrl() {
        return proxy.controlUrl();
    }

    @Override
    public InetSocketAddress controlAddress() {
        return proxy.controlAddress();
    }

    @Override
    public long seed() {
        return proxy.seed();
    }

    @Override
    public Chaos chaos() {
        return proxy.chaos();
    }

    @Override
    public Journal journal() {
        return proxy.journal();
    }

    @Override
    public RuleEngine rules() {
        return proxy.rules();
    }

    /** Closes the client side, the proxy (and its server), then the upstream the extension started. */
    @Override
    public void close() {
        try {
            if (stdio != null) {
                stdio.close();
            }
            proxy.close();
        } finally {
            if (upstream != null) {
                try {
                    upstream.close();
                } catch (Exception ignored) {
                    // the demo server: nothing to do about it
                }
            }
        }
    }

    @Override
    public String toString() {
        return "ChaosProxy(" + proxy.transport().name().toLowerCase(java.util.Locale.ROOT) + ", seed " + seed() + ')';
    }
}
