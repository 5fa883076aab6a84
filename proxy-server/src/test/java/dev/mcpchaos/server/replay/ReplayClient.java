package dev.mcpchaos.server.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.core.transport.stdio.InProcessServer;
import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.record.Cassette;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.StringReader;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A raw JSON-RPC client of a replayed server behind the in-process stdio proxy
 * ({@code McpChaosProxy.stdio(InProcessServer.launcher(...))}), on two pipes: it writes lines and
 * takes every line the proxy writes to it with the time it arrived, and end of file.
 */
final class ReplayClient implements AutoCloseable {

    static final ObjectMapper JSON = new ObjectMapper();
    /** What {@link #next} returns at the end of the proxy's output. */
    static final Line END = new Line(null, 0);

    /** One line from the proxy and when it came ({@link System#nanoTime()}). */
    record Line(String text, long nanos) {
        JsonNode json() {
            try {
                return JSON.readTree(text);
            } catch (IOException e) {
                throw new AssertionError("not JSON: " + text, e);
            }
        }
    }

    final StdioReplay replay;
    final McpChaosProxy.Running proxy;
    final List<FaultEvent> faults = new CopyOnWriteArrayList<>();
    private final OutputStream toProxy;
    private final BlockingQueue<Line> lines = new LinkedBlockingQueue<>();

    ReplayClient(String cassette, OnExhausted onExhausted, RuleSet rules, long seed) throws IOException {
        this(new StdioReplay(List.of(Cassette.read(new StringReader(cassette), "test.ndjson")), onExhausted), rules, seed);
    }

    /** A client of {@code cassette} replayed with this timing and matching, no rules. */
    ReplayClient(String cassette, Timing timing, Matching matching) throws IOException {
        this(new StdioReplay(List.of(Cassette.read(new StringReader(cassette), "test.ndjson")), OnExhausted.LAST,
                timing, matching), null, 1);
    }

    ReplayClient(StdioReplay replay, RuleSet rules, long seed) throws IOException {
        this.replay = replay;
        Pipe in = Pipe.open();
        Pipe out = Pipe.open();
        toProxy = Channels.newOutputStream(in.sink());
        McpChaosProxy.StdioBuilder builder = McpChaosProxy.stdio(InProcessServer.launcher("replay", replay::serveUntilEnd))
                .clientInput(Channels.newInputStream(in.source()))
                .clientOutput(Channels.newOutputStream(out.sink()))
                .exitTimeout(Duration.ofSeconds(2))
                .terminateTimeout(Duration.ofSeconds(2))
                .seed(seed)
                .faultListener(faults::add);
        if (rules != null) {
            builder.rules(rules);
        }
        proxy = builder.start();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(Channels.newInputStream(out.source()),
                    StandardCharsets.UTF_8))) {
                for (String line = r.readLine(); line != null; line = r.readLine()) {
                    lines.add(new Line(line, System.nanoTime()));
                }
            } catch (IOException e) {
                // the end, as far as the test is concerned
            }
            lines.add(END);
        }, "replay-client-reader");
        reader.setDaemon(true);
        reader.start();
    }

    void send(String line) throws IOException {
        toProxy.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        toProxy.flush();
    }

    /** The next line within {@code timeout}, {@link #END} at the end of output, null when none came in time. */
    Line next(Duration timeout) throws InterruptedException {
        return lines.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The next lines, {@code n} of them, each within 30 s. */
    List<Line> next(int n) throws InterruptedException {
        List<Line> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Line line = next(Duration.ofSeconds(30));
            if (line == null) {
                throw new AssertionError("line " + (i + 1) + " of " + n + " did not come within 30 s; got " + out);
            }
            out.add(line);
        }
        return out;
    }

    /** Ends the client's input: the proxy closes the replay's stdin and exits. */
    void endInput() throws IOException {
        toProxy.close();
    }

    @Override
    public void close() throws IOException {
        try {
            toProxy.close();
        } catch (IOException ignored) {
            // already closed
        }
        proxy.close();
    }
}
