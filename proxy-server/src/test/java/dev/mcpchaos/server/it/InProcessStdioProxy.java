package dev.mcpchaos.server.it;

import dev.mcpchaos.server.ProxyStartException;
import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.McpChaosProxy;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * An mcp-chaos stdio proxy built with {@link McpChaosProxy#stdio} in this JVM (so a test gets its
 * {@link FaultEvent}s) in front of a real server process, with its client side on a loopback
 * socket. The MCP Java SDK's own {@link StdioClientTransport} only talks to a child process, so
 * {@link #sdkClient} gives it a {@code bash} that relays its stdin and stdout to that socket.
 *
 * <p>Every byte the proxy writes to its client is also kept, split into lines
 * ({@link #linesToClient()}), so a test can count what the client was sent, such as a duplicate
 * answer the SDK drops without a word.
 */
final class InProcessStdioProxy implements AutoCloseable {

    /** Bound on the wait for the SDK's relay to connect. */
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(30);

    /** Every fault the proxy injected, in order. */
    final List<FaultEvent> events = new CopyOnWriteArrayList<>();
    private final List<String> linesToClient = new CopyOnWriteArrayList<>();
    private final ByteArrayOutputStream serverStderr = new ByteArrayOutputStream();
    private final ServerSocket listener;
    private final CompletableFuture<Socket> socket = new CompletableFuture<>();
    private final McpChaosProxy.Running proxy;

    private InProcessStdioProxy(List<String> serverCommand, RuleSet rules, long seed) {
        this(serverCommand, rules, seed, null);
    }

    private InProcessStdioProxy(List<String> serverCommand, RuleSet rules, long seed,
                                dev.mcpchaos.server.check.Referee referee) {
        try {
            listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            McpChaosProxy.StdioBuilder builder = McpChaosProxy.stdio(serverCommand);
            if (referee != null) {
                builder.check(referee);
            }
            proxy = builder
                    .clientInput(new ClientInput())
                    .clientOutput(new ClientOutput())
                    .serverErrorOutput(new SynchronizedOutput(serverStderr))
                    .exitTimeout(Duration.ofSeconds(2))
                    .terminateTimeout(Duration.ofSeconds(2))
                    .rules(rules)
                    .seed(seed)
                    .faultListener(events::add)
                    .start();
        } catch (ProxyStartException e) {
            closeQuietly(listener);
            throw new IllegalStateException("cannot start " + serverCommand + ": " + e.getMessage(), e);
        }
    }

    /** Starts the proxy, which starts {@code serverCommand}; no client is connected yet. */
    static InProcessStdioProxy start(List<String> serverCommand, RuleSet rules, long seed) {
        return new InProcessStdioProxy(serverCommand, rules, seed);
    }

    /** {@link #start(List, RuleSet, long)}, with {@code referee} checking the traffic. */
    static InProcessStdioProxy start(List<String> serverCommand, RuleSet rules, long seed,
                                     dev.mcpchaos.server.check.Referee referee) {
        return new InProcessStdioProxy(serverCommand, rules, seed, referee);
    }

    /**
     * An SDK client spec, not yet built, whose {@link StdioClientTransport} runs a {@code bash}
     * relay to this proxy's client side. Call once.
     */
    McpClient.SyncSpec sdkClient(Duration requestTimeout, List<String> clientStderr) {
        CompletableFuture.runAsync(() -> {
            try {
                listener.setSoTimeout((int) CONNECT_TIMEOUT.toMillis());
                socket.complete(listener.accept());
            } catch (IOException e) {
                socket.completeExceptionally(e);
            }
        });
        // The background cat copies the proxy's output to the SDK; the exec'd one the SDK's
        // requests to the proxy. Closing the socket (close()) ends the first.
        String relay = "exec 3<>/dev/tcp/127.0.0.1/" + listener.getLocalPort() + "; cat <&3 & exec cat >&3";
        StdioClientTransport transport = new StdioClientTransport(
                ServerParameters.builder("bash").args("-c", relay).build(), McpJsonDefaults.getMapper());
        transport.setStdErrorHandler(clientStderr::add);
        return McpClient.sync(transport)
                .clientInfo(McpSchema.Implementation.builder("mcp-chaos-it-in-process", "0.0.0").build())
                .requestTimeout(requestTimeout)
                // The server's own start (node loading server-everything) is inside initialize: a
                // short call timeout must not time that out on a loaded machine (a CI run did, at 1 s).
                .initializationTimeout(requestTimeout.compareTo(STARTUP_TIMEOUT) > 0 ? requestTimeout : STARTUP_TIMEOUT);
    }

    /** The least time initialize is given: the server starts inside it. */
    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(20);

    /** The proxy's journal. */
    dev.mcpchaos.rules.journal.Journal journal() {
        return proxy.journal();
    }

    /** Every line the proxy wrote to its client so far, without the newline. */
    List<String> linesToClient() {
        return List.copyOf(linesToClient);
    }

    /** What the server wrote on its stderr so far. */
    String serverStderr() {
        synchronized (serverStderr) {
            return serverStderr.toString(StandardCharsets.UTF_8);
        }
    }

    /**
     * Ends the client side (the proxy reads end of input, closes the server's stdin and waits for
     * it to exit), then closes the proxy.
     */
    @Override
    public void close() {
        try {
            socket.completeExceptionally(new IOException("the proxy is closing")); // if no client came
            if (!socket.isCompletedExceptionally()) {
                closeQuietly(socket.join());
            }
            closeQuietly(listener);
        } finally {
            proxy.close();
        }
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // closing anyway
        }
    }

    /** The relay's socket, once it connected; the proxy's reader and writer threads wait here. */
    private Socket connected() throws IOException {
        try {
            return socket.get(CONNECT_TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for the client");
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("no client connected", e);
        }
    }

    /** The proxy's client input: the socket's, once a client connected; end of input if none did. */
    private final class ClientInput extends InputStream {
        private InputStream in;

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (in == null) {
                try {
                    in = connected().getInputStream();
                } catch (IOException e) {
                    return -1; // no client: the proxy sees its input end and shuts down
                }
            }
            try {
                return in.read(b, off, len);
            } catch (IOException e) {
                return -1; // the socket was closed by close(): the client is gone
            }
        }
    }

    /** The proxy's client output: to the socket, and split into lines for the test. */
    private final class ClientOutput extends OutputStream {
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();
        private OutputStream out;

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            for (int i = off; i < off + len; i++) {
                if (b[i] == '\n') {
                    linesToClient.add(line.toString(StandardCharsets.UTF_8));
                    line.reset();
                } else {
                    line.write(b[i]);
                }
            }
            if (out == null) {
                out = connected().getOutputStream();
            }
            out.write(b, off, len);
        }

        @Override
        public void flush() throws IOException {
            if (out != null) {
                out.flush();
            }
        }

        @Override
        public void close() throws IOException {
            if (out != null) {
                out.close();
            }
        }
    }

    /** Lets the proxy's stderr copier and the test share one buffer. */
    private static final class SynchronizedOutput extends OutputStream {
        private final ByteArrayOutputStream buffer;

        SynchronizedOutput(ByteArrayOutputStream buffer) {
            this.buffer = buffer;
        }

        @Override
        public void write(int b) {
            synchronized (buffer) {
                buffer.write(b);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) {
            synchronized (buffer) {
                buffer.write(b, off, len);
            }
        }
    }
}
