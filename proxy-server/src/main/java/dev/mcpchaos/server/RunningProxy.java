package dev.mcpchaos.server;

import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.Chaos;
import dev.mcpchaos.rules.RuleEngine;
import dev.mcpchaos.rules.journal.Journal;

import java.net.InetSocketAddress;
import java.net.URI;

/**
 * A running proxy, on either transport: what a test or an application needs of it. Made by
 * {@code start()} of {@link McpChaosProxy#stdio} ({@link McpChaosProxy.Running}) and of
 * {@link McpChaosProxy#http} ({@link HttpProxyBuilder.RunningHttp}); closing it stops everything
 * it started.
 *
 * <pre>{@code
 * try (RunningProxy proxy = McpChaosProxy.http(URI.create("http://127.0.0.1:3001/mcp")).start()) {
 *     RuleHandle slow = proxy.chaos().add(Rules.latency("slow", Duration.ofMillis(300)).onTool("search*").onResponses());
 *     // point the client at proxy.mcpUrl() ...
 *     slow.remove();
 * }
 * }</pre>
 *
 * <p>Asking a stdio proxy for an HTTP address ({@link #mcpUrl()}, {@link #uri(String)}) is a
 * mistake in the caller's code, not a state to test for: it throws
 * {@link UnsupportedOperationException} rather than returning an empty {@code Optional} every HTTP
 * test would have to unwrap.
 */
public interface RunningProxy extends AutoCloseable {

    /** The transport it relays. */
    TransportKind transport();

    /**
     * Where MCP clients connect: the upstream URL's path on the proxy's address, such as
     * {@code http://127.0.0.1:41234/mcp} in front of {@code http://127.0.0.1:3001/mcp}.
     *
     * @throws UnsupportedOperationException on stdio, which has no URL (the client talks to the
     *                                       proxy's stdin and stdout)
     */
    default URI mcpUrl() {
        throw new UnsupportedOperationException("mcpUrl(): a stdio proxy has no URL (expected: an HTTP proxy, "
                + "McpChaosProxy.http(...); a stdio client talks to the proxy's stdin and stdout)");
    }

    /**
     * {@code path} (starting with {@code /}, with a query if wanted) on the proxy's address, such
     * as {@code uri("/mcp")}.
     *
     * @throws UnsupportedOperationException on stdio
     * @throws IllegalArgumentException when {@code path} does not start with {@code /}
     */
    default URI uri(String path) {
        throw new UnsupportedOperationException("uri(" + path + "): a stdio proxy has no URL (expected: an HTTP "
                + "proxy, McpChaosProxy.http(...))");
    }

    /**
     * The control API's base URL, such as {@code http://127.0.0.1:9090/} (see
     * {@code docs/control-api.md}).
     *
     * @throws IllegalStateException when the proxy was started without one ({@code .control(address)})
     */
    default URI controlUrl() {
        InetSocketAddress address = controlAddress();
        if (address == null) {
            throw new IllegalStateException("controlUrl(): this proxy has no control endpoint (expected: one "
                    + "asked for with .control(new InetSocketAddress(\"127.0.0.1\", 0)) before start())");
        }
        return ProxyUrls.base(address);
    }

    /** Where the control endpoint listens, or null when there is none. */
    InetSocketAddress controlAddress();

    /** The seed every random choice of the rules is drawn from: given, from the rule file, or generated. */
    default long seed() {
        return rules().seed();
    }

    /**
     * Changes the rules while the proxy runs: add one in a line of Java or text, switch it on or
     * off, remove it, the panic switch, and {@link Chaos#reset()} back to the rules it started with.
     */
    default Chaos chaos() {
        return rules().chaos();
    }

    /**
     * What passed through, message by message, and {@code verify()} on it (see
     * {@code docs/journal.md}).
     *
     * @throws IllegalStateException when the journal was turned off ({@code journal(0)})
     */
    default Journal journal() {
        throw new IllegalStateException("journal: off (expected: a proxy built without journal(0))");
    }

    /** The rule engine itself, for what {@link #chaos()} does not offer (listeners, {@code update}). */
    RuleEngine rules();

    /** Stops the proxy and everything it started (the server process on stdio, the control endpoint). */
    @Override
    void close();
}
