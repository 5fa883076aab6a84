package dev.mcpchaos.server;

import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.core.transport.stdio.ServerStartException;
import dev.mcpchaos.core.transport.stdio.StdioProxy;
import dev.mcpchaos.rules.RuleEngine;
import dev.mcpchaos.rules.RuleFileException;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
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
 */
public final class McpChaosProxy {

    private McpChaosProxy() {
    }

    /** A proxy that starts {@code command} as an MCP server over stdio and relays to it. */
    public static StdioBuilder stdio(List<String> command) {
        return new StdioBuilder(command);
    }

    /**
     * A proxy in front of the Streamable HTTP MCP server at {@code upstream}, such as
     * {@code http://127.0.0.1:3001/mcp}. Clients use the same paths on the proxy.
     */
    public static HttpProxyBuilder http(java.net.URI upstream) {
        return new HttpProxyBuilder(upstream);
    }

    /** A running proxy. Closing it shuts the server down as the MCP lifecycle says. */
    public interface Running extends AutoCloseable {
        /** Completes with the server's exit code once everything it wrote was relayed. */
        CompletableFuture<Integer> exitCode();

        /** Passes {@code TERM} or {@code INT} on to the server. */
        void signal(String name);

        /**
         * The rules in force, to read or change while running ({@link RuleEngine#update},
         * {@link RuleEngine#faultsEnabled(boolean, String)}); empty when none were given.
         */
        RuleEngine rules();

        /** Where the control endpoint listens, or null when there is none. */
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

        /** The server's working directory; default: the proxy's. */
        public StdioBuilder directory(Path directory) {
            delegate.directory(directory);
            return this;
        }

        /** Variables added to the environment the server inherits. */
        public StdioBuilder environment(Map<String, String> variables) {
            delegate.environment(variables);
            return this;
        }

        /** Where the client's messages come from; default: this process's stdin. */
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
         * Starts the control endpoint (if any), the server and the relay.
         *
         * @throws ServerStartException when the command cannot be started; its message says why
         * @throws RuleFileException when a rule cannot work on stdio (such as {@code http_status});
         *                           checked before the server is started
         * @throws UncheckedIOException when the control endpoint cannot listen on its address
         */
        public Running start() throws ServerStartException {
            interceptors.build(TransportKind.STDIO).forEach(delegate::interceptor);
            delegate.observer(interceptors.observer(TransportKind.STDIO));
            try {
                interceptors.startServices(TransportKind.STDIO);
            } catch (IOException e) {
                throw new UncheckedIOException(e.getMessage(), e);
            }
            StdioProxy proxy;
            try {
                proxy = delegate.start();
            } catch (ServerStartException | RuntimeException e) {
                interceptors.close();
                throw e;
            }
            RuleEngine engine = interceptors.engine();
            interceptors.readiness(() -> proxy.exitCode().isDone() ? "the server exited" : null);
            return new Running() {
                @Override
                public CompletableFuture<Integer> exitCode() {
                    return proxy.exitCode();
                }

                @Override
                public void signal(String name) {
                    proxy.signal(name);
                }

                @Override
                public RuleEngine rules() {
                    return engine;
                }

                @Override
                public InetSocketAddress controlAddress() {
                    return interceptors.controlAddress();
                }

                @Override
                public InetSocketAddress operationsAddress() {
                    return interceptors.operationsAddress();
                }

                @Override
                public void close() {
                    try {
                        proxy.close();
                    } finally {
                        interceptors.close();
                    }
                }
            };
        }
    }
}
