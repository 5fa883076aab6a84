package dev.mcpchaos.core.transport.stdio;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The stdio transport against real child processes ({@code sh}, {@code cat}, {@code awk}): bytes
 * relayed exactly, the shutdown sequence, exit codes, and nothing lost when the child exits.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StdioProxyTest {

    private final Pipe clientPipe = openPipe();
    private final OutputStream client = Channels.newOutputStream(clientPipe.sink());
    private final InputStream clientInput = Channels.newInputStream(clientPipe.source());
    private final ByteArrayOutputStream received = new ByteArrayOutputStream();
    private final ByteArrayOutputStream serverStderr = new ByteArrayOutputStream();
    private StdioProxy proxy;

    @AfterEach
    void tearDown() throws IOException {
        client.close();
        if (proxy != null) {
            proxy.close();
        }
    }

    private StdioProxy.Builder proxyFor(String... command) {
        return StdioProxy.builder(List.of(command))
                .clientInput(clientInput)
                .clientOutput(received)
                .serverErrorOutput(serverStderr);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"in runs (nothing inspects)", "frame by frame (an interceptor inspects)"})
    void relaysEveryByteUnchangedBothWays(String how) throws Exception {
        boolean framed = how.startsWith("frame");
        // CRLF, blank lines, malformed JSON, invalid UTF-8 and an unterminated last line all pass as they came.
        byte[] input = concat(
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n",
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r\n",
                "\n",
                "   \n",
                "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\\n\",\"method\":\"x\"}\n",
                "{not json\n").getBytes(StandardCharsets.UTF_8);
        byte[] invalidUtf8 = {'"', (byte) 0xC3, (byte) 0x28, '"', '\n'};
        byte[] unterminated = "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}".getBytes(StandardCharsets.UTF_8);
        StdioProxy.Builder builder = proxyFor("cat");
        if (framed) {
            builder.interceptor((ctx, frame) -> ctx.forward(frame));
        }
        proxy = builder.start();
        client.write(input);
        client.write(invalidUtf8);
        client.write(unterminated);
        client.close();

        assertThat(proxy.exitCode().get(20, TimeUnit.SECONDS)).isZero();
        byte[] expected = concat(new String(input, StandardCharsets.ISO_8859_1),
                new String(invalidUtf8, StandardCharsets.ISO_8859_1),
                new String(unterminated, StandardCharsets.ISO_8859_1)).getBytes(StandardCharsets.ISO_8859_1);
        assertThat(received.toByteArray()).isEqualTo(expected);
        // Unframed, only the unterminated last line, handed on at the end of the input, is a frame.
        assertThat(proxy.framesRead(Direction.CLIENT_TO_SERVER)).isEqualTo(framed ? 8 : 1);
        assertThat(proxy.framesRead(Direction.SERVER_TO_CLIENT)).isEqualTo(framed ? 8 : 1);
    }

    @Test
    void framingBeginsWhenAnInterceptorStartsToInspectAndNoLineIsSplit() throws Exception {
        AtomicBoolean inspecting = new AtomicBoolean();
        List<String> seen = new CopyOnWriteArrayList<>();
        proxy = proxyFor("cat").interceptor(new FrameInterceptor() {
            @Override
            public void onFrame(InterceptorContext ctx, Frame frame) {
                seen.add(frame.direction().arrow() + " " + frame.content().toString(StandardCharsets.UTF_8));
                ctx.forward(frame);
            }

            @Override
            public boolean inspects(TransportKind transport, Direction direction) {
                return inspecting.get();
            }
        }).start();
        String a = "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}";
        String b = "{\"jsonrpc\":\"2.0\",\"method\":\"b\"}";
        String c = "{\"jsonrpc\":\"2.0\",\"method\":\"c\"}";
        // A relayed unframed, and half of b waiting for its end when framing begins.
        client.write((a + "\n" + b.substring(0, 10)).getBytes(StandardCharsets.UTF_8));
        client.flush();
        awaitReceivedLines(1);
        inspecting.set(true);
        client.write((b.substring(10) + "\n" + c + "\n").getBytes(StandardCharsets.UTF_8));
        client.close();

        assertThat(proxy.exitCode().get(20, TimeUnit.SECONDS)).isZero();
        assertThat(received.toString(StandardCharsets.UTF_8)).isEqualTo(a + "\n" + b + "\n" + c + "\n");
        assertThat(seen).filteredOn(line -> line.startsWith("c->s")).containsExactly("c->s " + b, "c->s " + c);
        assertThat(seen).filteredOn(line -> line.startsWith("s->c")).containsExactly("s->c " + b, "s->c " + c);
    }

    @Test
    void interceptorsSeeSniffedAndCorrelatedFrames() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        // The "server" answers the client's request id 7 with a response, after it asked its own ping.
        String serverScript = "read line; "
                + "echo '{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"ping\"}'; "
                + "echo '{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}'; "
                + "read line";
        proxy = proxyFor("sh", "-c", serverScript)
                .interceptor((ctx, frame) -> {
                    seen.add(describe(frame));
                    ctx.forward(frame);
                })
                .start();
        client.write(("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"search_docs\","
                + "\"arguments\":{\"name\":\"not-this\"}}}\n").getBytes(StandardCharsets.UTF_8));
        client.flush();
        awaitReceivedLines(2);
        client.write("{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{}}\n".getBytes(StandardCharsets.UTF_8));
        client.close();

        assertThat(proxy.exitCode().get(20, TimeUnit.SECONDS)).isZero();
        assertThat(seen).containsExactly(
                "c->s REQUEST tools/call search_docs",
                "s->c REQUEST ping null",
                "s->c RESPONSE tools/call search_docs",
                "c->s RESPONSE ping null");
        assertThat(proxy.session().correlator().pendingCount(Direction.CLIENT_TO_SERVER)).isZero();
        assertThat(proxy.session().correlator().pendingCount(Direction.SERVER_TO_CLIENT)).isZero();
    }

    @Test
    void endOfClientInputEndsTheServerAndReturnsItsExitCode() throws Exception {
        proxy = proxyFor("sh", "-c", "cat > /dev/null; exit 3").start();
        client.close();
        assertThat(proxy.exitCode().get(20, TimeUnit.SECONDS)).isEqualTo(3);
    }

    @Test
    void crashingServerEndsTheProxyWithItsCodeAndNothingItWroteIsLost() throws Exception {
        // The client's input stays open: the proxy must not wait for it.
        proxy = proxyFor("awk", "BEGIN { for (i = 0; i < 20000; i++) "
                + "printf \"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"method\\\":\\\"n\\\",\\\"params\\\":{\\\"i\\\":%d}}\\n\", i; "
                + "exit 7 }").start();
        assertThat(proxy.exitCode().get(20, TimeUnit.SECONDS)).isEqualTo(7);
        String[] lines = received.toString(StandardCharsets.UTF_8).split("\n");
        assertThat(lines).hasSize(20000);
        assertThat(lines[0]).isEqualTo("{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"i\":0}}");
        assertThat(lines[19999]).isEqualTo("{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"i\":19999}}");
    }

    @Test
    void serverThatIgnoresSigtermIsKilled() throws Exception {
        // 'exec' keeps one process: an ignored signal stays ignored across exec.
        proxy = proxyFor("sh", "-c", "trap '' TERM; cat > /dev/null; exec sleep 30")
                .exitTimeout(Duration.ofMillis(100))
                .terminateTimeout(Duration.ofMillis(200))
                .start();
        long started = System.nanoTime();
        client.close();
        assertThat(proxy.exitCode().get(20, TimeUnit.SECONDS)).isEqualTo(128 + 9);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void serverThatExitsOnSigtermGetsIt() throws Exception {
        proxy = proxyFor("sh", "-c", "cat > /dev/null; exec sleep 30")
                .exitTimeout(Duration.ofMillis(100))
                .terminateTimeout(Duration.ofSeconds(10))
                .start();
        client.close();
        assertThat(proxy.exitCode().get(20, TimeUnit.SECONDS)).isEqualTo(128 + 15);
    }

    @Test
    void signalIsPassedToTheServer() throws Exception {
        proxy = proxyFor("sh", "-c", "trap 'exit 42' INT; while :; do sleep 0.05; done")
                .terminateTimeout(Duration.ofSeconds(10))
                .start();
        client.write("{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n".getBytes(StandardCharsets.UTF_8));
        client.flush();
        proxy.signal("INT");
        assertThat(proxy.exitCode().get(20, TimeUnit.SECONDS)).isEqualTo(42);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"in runs (nothing inspects)", "frame by frame (an interceptor inspects)"})
    void lineOverTheLimitIsDiscardedCountedAndRelayingGoesOn(String how) throws Exception {
        StdioProxy.Builder builder = proxyFor("cat").maxLineLength(100);
        if (how.startsWith("frame")) {
            builder.interceptor((ctx, frame) -> ctx.forward(frame));
        }
        proxy = builder.start();
        String small = "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n";
        String big = "{\"jsonrpc\":\"2.0\",\"method\":\"big\",\"params\":{\"x\":\"" + "y".repeat(5000) + "\"}}\n";
        client.write((small + big + small).getBytes(StandardCharsets.UTF_8));
        client.close();
        assertThat(proxy.exitCode().get(20, TimeUnit.SECONDS)).isZero();
        assertThat(received.toString(StandardCharsets.UTF_8)).isEqualTo(small + small);
        assertThat(proxy.oversizedLines(Direction.CLIENT_TO_SERVER)).isEqualTo(1);
    }

    @Test
    void serverStderrIsCopied() throws Exception {
        proxy = proxyFor("sh", "-c", "echo 'server says hi' >&2; cat > /dev/null").start();
        client.close();
        assertThat(proxy.exitCode().get(20, TimeUnit.SECONDS)).isZero();
        assertThat(serverStderr.toString(StandardCharsets.UTF_8)).isEqualTo("server says hi\n");
        assertThat(received.size()).isZero();
    }

    @Test
    void workingDirectoryAndEnvironmentArePassedThrough() throws Exception {
        proxy = proxyFor("sh", "-c", "printf '{\"cwd\":\"%s\",\"v\":\"%s\"}\\n' \"$(pwd)\" \"$MCP_CHAOS_TEST_VAR\"")
                .directory(java.nio.file.Path.of("/tmp"))
                .environment(java.util.Map.of("MCP_CHAOS_TEST_VAR", "blue"))
                .start();
        assertThat(proxy.exitCode().get(20, TimeUnit.SECONDS)).isZero();
        assertThat(received.toString(StandardCharsets.UTF_8)).isEqualTo("{\"cwd\":\"/tmp\",\"v\":\"blue\"}\n");
    }

    @Test
    void commandThatCannotStartSaysWhy() {
        assertThatThrownBy(() -> proxyFor("/nonexistent/mcp-server", "--flag").start())
                .isInstanceOf(ServerStartException.class)
                .hasMessage("cannot start the server command [/nonexistent/mcp-server, --flag]: "
                        + "No such file or directory");
    }

    @Test
    void aWorkingDirectoryThatIsMissingOrNotADirectoryIsNamedNotTheCommand(@TempDir Path dir)
            throws IOException {
        Path missing = dir.resolve("missing");
        assertThatThrownBy(() -> proxyFor("cat").directory(missing).start())
                .isInstanceOf(ServerStartException.class)
                .hasMessage("the server's working directory " + missing + " does not exist (the server command "
                        + "[cat] was not started)");
        Path file = Files.writeString(dir.resolve("file"), "x");
        assertThatThrownBy(() -> proxyFor("cat").directory(file).start())
                .isInstanceOf(ServerStartException.class)
                .hasMessage("the server's working directory " + file + " is not a directory (the server command "
                        + "[cat] was not started)");
    }

    /**
     * Issue #34: the proxy finishes its set-up (the chain, in the proxy-server) while the server
     * starts. The server runs by the time {@code onceStarted} is called, what it writes meanwhile
     * waits in its pipe, and reaches the client whole and in order, through the interceptors
     * {@code onceStarted} added, once the relay starts.
     */
    @Test
    void theServerRunsWhileTheSetUpFinishesAndNothingItWroteMeanwhileIsLostOrReordered(@TempDir Path dir)
            throws Exception {
        Path startedMark = dir.resolve("started");
        List<String> seen = new CopyOnWriteArrayList<>();
        proxy = proxyFor("sh", "-c", "touch '" + startedMark + "'; "
                + "i=0; while [ $i -lt 500 ]; do printf '{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"i\":%d}}\\n' $i; "
                + "i=$((i+1)); done; cat")
                .start(builder -> {
                    // The server is up before the proxy's own set-up is done, and has written its lines.
                    await().atMost(Duration.ofSeconds(20)).until(() -> Files.exists(startedMark));
                    sleep(200);
                    builder.interceptor((ctx, frame) -> {
                        seen.add(frame.method());
                        ctx.forward(frame);
                    });
                });
        client.write("{\"jsonrpc\":\"2.0\",\"method\":\"last\"}\n".getBytes(StandardCharsets.UTF_8));
        client.close();
        assertThat(proxy.exitCode().get(20, TimeUnit.SECONDS)).isZero();
        String[] lines = received.toString(StandardCharsets.UTF_8).split("\n");
        assertThat(lines).hasSize(501);
        for (int i = 0; i < 500; i++) {
            assertThat(lines[i]).isEqualTo("{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"i\":" + i + "}}");
        }
        assertThat(lines[500]).isEqualTo("{\"jsonrpc\":\"2.0\",\"method\":\"last\"}");
        assertThat(seen).as("the interceptor added once the server started saw every message").hasSize(502);
    }

    /** A server that cannot start: the set-up is finished all the same, so that its observer hears of it. */
    @Test
    void aServerThatCannotStartIsReportedToTheObserverTheSetUpGives() {
        List<String> failures = new CopyOnWriteArrayList<>();
        TransportObserver observer = new TransportObserver() {
            @Override
            public void upstreamFailed(TransportKind transport, UpstreamFailure reason, String detail) {
                failures.add(transport + " " + reason + " " + detail);
            }
        };
        assertThatThrownBy(() -> proxyFor("/nonexistent/mcp-server").start(builder -> builder.observer(observer)))
                .isInstanceOf(ServerStartException.class)
                .hasMessage("cannot start the server command [/nonexistent/mcp-server]: No such file or directory");
        assertThat(failures).containsExactly("STDIO START_FAILED No such file or directory");
    }

    /** A set-up that fails once the server was started leaves no server running. */
    @Test
    void aSetUpThatFailsOnceTheServerStartedKillsIt(@TempDir Path dir) throws Exception {
        Path pid = dir.resolve("pid");
        assertThatThrownBy(() -> proxyFor("sh", "-c", "echo $$ > '" + pid + "'; exec sleep 30").start(builder -> {
            await().atMost(Duration.ofSeconds(20)).until(() -> Files.exists(pid) && Files.size(pid) > 0);
            throw new IllegalStateException("set-up failed");
        })).isInstanceOf(IllegalStateException.class).hasMessage("set-up failed");
        long serverPid = Long.parseLong(Files.readString(pid).trim());
        await().atMost(Duration.ofSeconds(20))
                .until(() -> ProcessHandle.of(serverPid).map(h -> !h.isAlive()).orElse(true));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void awaitReceivedLines(int lines) {
        await().atMost(Duration.ofSeconds(20))
                .until(() -> received.toString(StandardCharsets.UTF_8).split("\n", -1).length > lines);
    }

    private static String describe(Frame frame) {
        MessageKind kind = frame.envelope().kind();
        return frame.direction().arrow() + ' ' + kind + ' ' + frame.method() + ' ' + frame.toolName();
    }

    private static String concat(String... parts) {
        return String.join("", parts);
    }

    private static Pipe openPipe() {
        try {
            return Pipe.open();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
