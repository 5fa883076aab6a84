package dev.mcpchaos.server.rules;

import dev.mcpchaos.server.ProxyStartException;
import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.demo.DemoServer;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
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
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The official MCP Java SDK client, with its own stdio transport ({@link StdioClientTransport}),
 * talking through an mcp-chaos proxy with rules to the built-in demo server (a child process of
 * the proxy).
 *
 * <p>The proxy runs in this JVM (so the test sees its {@link FaultEvent}s), the demo server is a
 * real child process, and the SDK's stdio transport starts a real process too: a
 * {@code bash} that relays its stdin and stdout over a loopback socket to the proxy's client
 * side. Child JVMs start slowly on a busy machine, longer than the short request timeouts these
 * tests need; so before the SDK client starts, a {@code ping} warms the demo server up through the
 * proxy, and only then is the client's side connected to the SDK.
 */
final class ChaosSession implements AutoCloseable {

    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(30);
    private static final String WARM_UP = "{\"jsonrpc\":\"2.0\",\"id\":\"mcp-chaos-warm-up\",\"method\":\"ping\"}\n";

    final McpSyncClient client;
    final List<FaultEvent> events = new CopyOnWriteArrayList<>();
    private final List<String> clientStderr = new CopyOnWriteArrayList<>();
    private final McpChaosProxy.Running proxy;
    private final ServerSocket listener;
    private final CompletableFuture<Socket> socket = new CompletableFuture<>();

    ChaosSession(String rulesYaml, long seed, Duration requestTimeout) {
        try {
            listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
            listener.setSoTimeout((int) STARTUP_TIMEOUT.toMillis());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ClientInput in = new ClientInput();
        ClientOutput out = new ClientOutput();
        proxy = startProxy(rulesYaml, seed, in, out);
        try {
            client = connectClient(out, requestTimeout);
        } catch (RuntimeException | Error e) {
            closeProxySide();
            throw e;
        }
    }

    private McpChaosProxy.Running startProxy(String rulesYaml, long seed, ClientInput in, ClientOutput out) {
        try {
            return McpChaosProxy.stdio(List.of(javaBinary(), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp",
                            classPath(), DemoServer.class.getName()))
                    .clientInput(in)
                    .clientOutput(out)
                    .serverErrorOutput(OutputStream.nullOutputStream())
                    .exitTimeout(Duration.ofSeconds(2))
                    .terminateTimeout(Duration.ofSeconds(2))
                    .rules(RuleSet.parse(rulesYaml, "rules.yaml"))
                    .seed(seed)
                    .faultListener(events::add)
                    .start();
        } catch (ProxyStartException e) {
            throw new AssertionError("the demo server did not start", e);
        }
    }

    private McpSyncClient connectClient(ClientOutput out, Duration requestTimeout) {
        await(out.warmUpAnswered, "the demo server's answer to the warm-up ping");

        CompletableFuture.runAsync(() -> {
            try {
                socket.complete(listener.accept());
            } catch (IOException e) {
                socket.completeExceptionally(e);
            }
        });
        String relay = "exec 3<>/dev/tcp/127.0.0.1/" + listener.getLocalPort() + "; cat <&3 & exec cat >&3";
        StdioClientTransport transport = new StdioClientTransport(
                ServerParameters.builder("bash").args("-c", relay).build(), McpJsonDefaults.getMapper());
        transport.setStdErrorHandler(clientStderr::add);
        McpSyncClient sdk = McpClient.sync(transport)
                .requestTimeout(requestTimeout)
                .initializationTimeout(requestTimeout)
                .clientInfo(McpSchema.Implementation.builder("chaos-rules-e2e", "1.0").build())
                .build();
        try {
            sdk.initialize();
        } catch (RuntimeException | Error e) {
            sdk.close();
            throw e;
        }
        return sdk;
    }

    /** Calls a demo tool. */
    McpSchema.CallToolResult call(String tool, Map<String, Object> arguments) {
        return client.callTool(McpSchema.CallToolRequest.builder(tool).arguments(arguments).build());
    }

    static String text(McpSchema.CallToolResult result) {
        return ((McpSchema.TextContent) result.content().get(0)).text();
    }

    /** Closes the client, then the proxy's client side (which shuts the proxy and the server down). */
    @Override
    public void close() {
        try {
            client.closeGracefully();
        } finally {
            closeProxySide();
        }
    }

    private void closeProxySide() {
        try {
            socket.completeExceptionally(new IOException("the session is closing")); // if no client ever came
            if (!socket.isCompletedExceptionally()) {
                socket.join().close();
            }
            listener.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            proxy.close();
        }
    }

    /** What the SDK's transport process wrote on stderr. */
    List<String> clientStderr() {
        return List.copyOf(clientStderr);
    }

    private static <T> T await(CompletableFuture<T> future, String what) {
        try {
            return future.get(STARTUP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for " + what, e);
        } catch (ExecutionException | TimeoutException e) {
            throw new AssertionError("no " + what + " within " + STARTUP_TIMEOUT, e);
        }
    }

    /** The proxy's client input: the warm-up ping, then whatever the SDK writes on the socket. */
    private final class ClientInput extends InputStream {
        private final InputStream warmUp = new java.io.ByteArrayInputStream(WARM_UP.getBytes(StandardCharsets.UTF_8));
        private InputStream client;

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = warmUp.read(b, off, len);
            if (n > 0) {
                return n;
            }
            return client().read(b, off, len);
        }

        private InputStream client() throws IOException {
            if (client == null) {
                try {
                    client = socket.get().getInputStream(); // the proxy's reader thread waits here
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException();
                } catch (ExecutionException e) {
                    return InputStream.nullInputStream(); // no client came: the input ends
                }
            }
            return client;
        }
    }

    /** The proxy's client output: the answer to the warm-up, then everything to the socket. */
    private final class ClientOutput extends OutputStream {
        final CompletableFuture<String> warmUpAnswered = new CompletableFuture<>();
        private final ByteArrayOutputStream firstLine = new ByteArrayOutputStream();
        private OutputStream client;

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            int end = off + len;
            while (off < end && !warmUpAnswered.isDone()) {
                byte next = b[off++];
                if (next == '\n') {
                    warmUpAnswered.complete(firstLine.toString(StandardCharsets.UTF_8));
                } else {
                    firstLine.write(next);
                }
            }
            if (off < end) {
                client().write(b, off, end - off);
            }
        }

        @Override
        public void flush() throws IOException {
            if (warmUpAnswered.isDone() && socket.isDone()) {
                client().flush();
            }
        }

        @Override
        public void close() throws IOException {
            if (socket.isDone() && !socket.isCompletedExceptionally()) {
                client().close();
            }
        }

        private OutputStream client() throws IOException {
            if (client == null) {
                try {
                    client = socket.get().getOutputStream(); // the proxy's writer thread waits here
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException();
                } catch (ExecutionException e) {
                    throw new IOException("no client connected", e);
                }
            }
            return client;
        }
    }

    private static String javaBinary() {
        return ProcessHandle.current().info().command().orElse("java");
    }

    /** Under Surefire, {@code java.class.path} may be a manifest-only jar; this lists the real entries. */
    private static String classPath() {
        String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }
}
