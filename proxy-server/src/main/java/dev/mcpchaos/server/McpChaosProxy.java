package dev.mcpchaos.server;

import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.core.transport.stdio.ServerStartException;
import dev.mcpchaos.core.transport.stdio.StdioProxy;
import dev.mcpchaos.core.transport.stdio.StdioServer;
import dev.mcpchaos.rules.RuleEngine;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The one entry point that starts an mcp-chaos proxy in-process. The command line, the demo and
 * the tests all go through it.
 *
 * <pre>{@code
 * try (McpChaosProxy.Running proxy = McpChaosProxy.stdio(List.of("npx", "my-mcp-server"))
 *         .logTraffic(true)
 *         .start()) {
 *     int code = proxy.exitCode().join();
 * }
 * }</pre>
 *
 * <p>Both transports start the same way and return a {@link RunningProxy} (the stdio one is a
 * {@link Running}, the HTTP one a {@link HttpProxyBuilder.RunningHttp}); every start failure is a
 * {@link ProxyStartException}.
 */
public final class McpChaosProxy {

    private McpChaosProxy() {
    }

    /** A proxy that starts {@code command} as an MCP server over stdio and relays to it. */
    public static StdioBuilder stdio(List<String> command) {
        return new StdioBuilder(command);
    }

    /**
     * A stdio proxy in front of a server that is not a child process, such as one running in this
     * JVM ({@link dev.mcpchaos.core.transport.stdio.InProcessServer}): the replay of a cassette
     * sits behind the same interceptor chain, rules included, this way. The directory and
     * environment settings do not apply.
     */
    public static StdioBuilder stdio(StdioServer.Launcher server) {
        return new StdioBuilder(StdioProxy.builder(server));
    }

    /**
     * A stdio proxy in front of the server recorded in cassettes: {@code replay} plays it in this
     * JVM, behind the same chain as a live server (rules, seed, journal, metrics).
     *
     * <pre>{@code
     * StdioReplay replay = new StdioReplay(List.of(Cassette.read(Path.of("cassettes/everything.ndjson"))));
     * try (McpChaosProxy.Running proxy = McpChaosProxy.replay(replay).rules(rules).seed(42).start()) { ... }
     * }</pre>
     */
    public static StdioBuilder replay(dev.mcpchaos.server.replay.StdioReplay replay) {
        java.util.Objects.requireNonNull(replay, "replay");
        return stdio(dev.mcpchaos.core.transport.stdio.InProcessServer.launcher("replay", replay::serveUntilEnd));
    }

    /**
     * An HTTP proxy in front of the server recorded in cassettes, played over Streamable HTTP by
     * {@code replay} on 127.0.0.1 (a free port, started now, closed with the proxy or when it fails
     * to start). Clients use {@link RunningProxy#mcpUrl()}.
     *
     * @throws ProxyStartException ({@code ADDRESS}) when the replay cannot listen on loopback
     */
    public static HttpProxyBuilder replay(dev.mcpchaos.server.replay.HttpReplay replay) {
        java.util.Objects.requireNonNull(replay, "replay");
        dev.mcpchaos.server.host.McpHttpHost server;
        try {
            server = replay.start(new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0));
        } catch (java.io.IOException e) {
            throw new ProxyStartException(ProxyStartException.Reason.ADDRESS,
                    "the replay cannot listen on 127.0.0.1: " + e.getMessage(), e);
        }
        return new HttpProxyBuilder(server.endpoint()).owning(server);
    }

    /**
     * A proxy in front of the Streamable HTTP MCP server at {@code upstream}, such as
     * {@code http://127.0.0.1:3001/mcp}. Clients use the same paths on the proxy.
     */
    public static HttpProxyBuilder http(java.net.URI upstream) {
        return new HttpProxyBuilder(upstream);
    }

    /** A running stdio proxy. Closing it shuts the server down as the MCP lifecycle says. */
    public interface Running extends RunningProxy {
        /** Completes with the server's exit code once everything it wrote was relayed. */
        CompletableFuture<Integer> exitCode();

        /** Passes {@code TERM} or {@code INT} on to the server. */
        void signal(String name);

        /**
         * The rules in force, to read or change while running ({@link RuleEngine#update},
         * {@link RuleEngine#faultsEnabled(boolean, String)}); empty when none were given.
         */
        @Override
        RuleEngine rules();

        @Override
        default TransportKind transport() {
            return TransportKind.STDIO;
        }

        /** Where the control endpoint listens, or null when there is none. */
        @Override
        default InetSocketAddress controlAddress() {
            return null;
        }

        /** Where the operations listener listens, or null when there is none. */
        default InetSocketAddress operationsAddress() {
            return null;
        }

        /** Shuts down and waits for the server to exit; then stops the control endpoint. */
        @Override
        void close();
    }

    /** Configures a stdio proxy. */
    public static final class StdioBuilder extends AbstractChaosBuilder<StdioBuilder> {
        private final StdioProxy.Builder delegate;

        private StdioBuilder(List<String> command) {
            this.delegate = StdioProxy.builder(command);
        }

        private StdioBuilder(StdioProxy.Builder delegate) {
            this.delegate = delegate;
        }

        /** The server's working directory; default: the proxy's. */
        public StdioBuilder directory(Path directory) {
            delegate.directory(directory);
            return this;
        }

        /**
         * Variables added to the environment the server inherits. A recording's
         * {@link dev.mcpchaos.server.record.Recording#redactEnv} looks its variables up here too.
         */
        public StdioBuilder environment(Map<String, String> variables) {
            delegate.environment(variables);
            settings.serverVariables.putAll(variables); // what the server sees is what a recording must redact
            return this;
        }

        /**
         * Where the client's messages come from; default: this process's stdin, closed when the
         * session ends. A stream given here is left open.
         */
        public StdioBuilder clientInput(InputStream in) {
            delegate.clientInput(in);
            return this;
        }

        /** Where messages to the client go; default: this process's stdout. */
        public StdioBuilder clientOutput(OutputStream out) {
            delegate.clientOutput(out);
            return this;
        }

        /** Where the server's stderr is copied; default: this process's stderr. */
        public StdioBuilder serverErrorOutput(OutputStream err) {
            delegate.serverErrorOutput(err);
            return this;
        }

        /** Longest message kept, in bytes; default 16 MiB. */
        public StdioBuilder maxLineLength(int bytes) {
            delegate.maxLineLength(bytes);
            return this;
        }

        /** Time the server gets to exit after its stdin closed, before SIGTERM; default 5 s. */
        public StdioBuilder exitTimeout(Duration timeout) {
            delegate.exitTimeout(timeout);
            return this;
        }

        /** Time the server gets to exit after SIGTERM, before SIGKILL; default 5 s. */
        public StdioBuilder terminateTimeout(Duration timeout) {
            delegate.terminateTimeout(timeout);
            return this;
        }

        /** Logs every message on stderr, showing up to 200 characters of each. */
        public StdioBuilder logTraffic(boolean enabled) {
            return logTraffic(enabled ? 200 : -1);
        }

        /**
         * Starts the control endpoint (if any), the server and the relay. On failure nothing is
         * left running. Whatever may refuse (the rules, the addresses, the recording's file) is
         * checked before the server is started; what cannot is set up while it starts.
         *
         * @throws ProxyStartException when the command cannot be started
         *         ({@link ProxyStartException.Reason#SERVER_COMMAND}), a rule cannot work on stdio
         *         (such as {@code http_status}; {@code RULES}, checked before the server is started),
         *         or the control endpoint cannot listen on its address ({@code ADDRESS}); its
         *         message says which, its cause is the original exception
         */
        public Running start() {
            // What may refuse first: a refused start leaves no server started. Then the server, and
            // while it starts the rest of the chain (its rule engine, meters, logs): a server's
            // start-up (~0.1 s for node) then overlaps the proxy's instead of following it.
            ChaosRuntime runtime = ChaosRuntime.check(settings, TransportKind.STDIO, null);
            StdioProxy proxy = runtime.startTransport(() -> {
                try {
                    return delegate.start(started -> {
                        runtime.complete();
                        runtime.chain().forEach(started::interceptor);
                        started.observer(runtime.observer());
                    });
                } catch (ServerStartException e) {
                    throw new ProxyStartException(ProxyStartException.Reason.SERVER_COMMAND, e.getMessage(), e);
                }
            });
            runtime.readiness(() -> proxy.exitCode().isDone() ? "the server exited" : null);
            return new RunningStdio(runtime, proxy);
        }
    }

    /** The handle {@link StdioBuilder#start()} returns. */
    private static final class RunningStdio extends RunningBase implements Running {
        private final StdioProxy proxy;

        RunningStdio(ChaosRuntime runtime, StdioProxy proxy) {
            super(runtime, proxy::close);
            this.proxy = proxy;
        }

        @Override
        public CompletableFuture<Integer> exitCode() {
            return proxy.exitCode();
        }

        @Override
        public void signal(String name) {
            proxy.signal(name);
        }
    }
}
