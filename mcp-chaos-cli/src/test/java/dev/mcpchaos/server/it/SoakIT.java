package dev.mcpchaos.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.mcpchaos.rules.RuleSet;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The soak: many tool calls through an in-process proxy with {@code drop}, {@code duplicate} and
 * {@code latency} on the answers (the rules and seed of {@link AnswerAccountingSoakIT}), in
 * front of the built-in demo server in a process of its own, over stdio and over HTTP. It
 * asserts what that test asserts (per request id, the answers received are 0 for a logged drop,
 * 2 for a logged duplicate, 1 otherwise; Netty's paranoid leak detection finds nothing) and that
 * the heap after a full GC does not grow with the calls: at the end it is within
 * {@link #HEAP_GROWTH} of what it was a tenth of the way in (once the JIT, the pools and the
 * caches have warmed up). The client's accounting is preallocated ({@link AnswerSoak}), so the
 * growth measured is the proxy's.
 *
 * <p>Bounded in count and time: {@code soak.stdio.calls} (default 30,000) and
 * {@code soak.http.calls} (default 8,000) calls, each transport sending for at most
 * {@code soak.cap.seconds} (default 20 s; {@code soak.stdio.cap.seconds}, {@code soak.http.cap.seconds}
 * for one). {@code bench/soak.sh} runs it with half a million calls (a million messages) over
 * stdio and 200,000 calls over HTTP, bounded in time, and prints the figures.
 */
class SoakIT {

    static final int STDIO_CALLS = Integer.getInteger("soak.stdio.calls", 30_000);
    static final int HTTP_CALLS = Integer.getInteger("soak.http.calls", 8_000);
    static final Duration SEND_CAP = Duration.ofSeconds(Long.getLong("soak.cap.seconds", 20));
    static final Duration STDIO_SEND_CAP = Duration.ofSeconds(Long.getLong("soak.stdio.cap.seconds", SEND_CAP.toSeconds()));
    static final Duration HTTP_SEND_CAP = Duration.ofSeconds(Long.getLong("soak.http.cap.seconds", SEND_CAP.toSeconds()));
    /** Calls in flight at most: enough that the machine's thread wake-ups, not the window, bound the rate. */
    static final int STDIO_IN_FLIGHT = Integer.getInteger("soak.stdio.in.flight", 128);
    /** One connection each: the JDK client opens one per call in flight. */
    static final int HTTP_IN_FLIGHT = Integer.getInteger("soak.http.in.flight", 32);
    /** A dropped answer never comes on stdio; the client gives up on it after this. */
    static final Duration STDIO_GIVE_UP = Duration.ofSeconds(2);
    static final Duration HTTP_TIMEOUT = Duration.ofSeconds(10);
    /** Heap after GC at the end may exceed the warm sample by at most this. */
    static final long HEAP_GROWTH = Long.getLong("soak.heap.growth.mb", 16) * 1024 * 1024;
    /**
     * Below this many calls within the cap, the soak proves too little. Measured here (2 shared
     * cores at a load average of 15, paranoid leak detection): stdio about 1,400 calls a second,
     * HTTP 50 to 75.
     */
    static final int STDIO_MIN_CALLS = 5_000;
    static final int HTTP_MIN_CALLS = 500;
    private static final Set<String> FAULTS = Set.of("drop", "duplicate", "latency");

    @TempDir
    Path tempDir;

    @Test
    void stdioCallsAddUpAndTheHeapStaysFlat() {
        AnswerSoak soak = new AnswerSoak(new AnswerSoak.Plan(STDIO_CALLS, STDIO_SEND_CAP, STDIO_IN_FLIGHT, STDIO_GIVE_UP,
                Math.min(STDIO_MIN_CALLS, STDIO_CALLS)), AnswerSoak.Calls.DEMO);
        bounded(soak, () -> {
            try (RawJsonRpc rpc = new RawJsonRpc.Stdio(demoServer(List.of()), rules(), AnswerAccountingSoakIT.SEED,
                    soak, soak)) {
                soak.run(rpc);
                soak.assertAccounting("stdio", FAULTS);
                assertThat(soak.droppedNotGivenUp()).as("dropped requests not given up").isEmpty();
                assertThat(rpc.unreadable).isEmpty();
            }
        });
        assertHeapFlat(soak);
        AnswerAccountingSoakIT.assertNoLeaks();
    }

    @Test
    void httpCallsAddUpAndTheHeapStaysFlat() throws Exception {
        AnswerSoak soak = new AnswerSoak(new AnswerSoak.Plan(HTTP_CALLS, HTTP_SEND_CAP, HTTP_IN_FLIGHT, HTTP_TIMEOUT,
                Math.min(HTTP_MIN_CALLS, HTTP_CALLS)), AnswerSoak.Calls.DEMO_HTTP);
        Path log = tempDir.resolve("demo-http.log");
        Process upstream = new ProcessBuilder(demoServer(List.of("--http", "127.0.0.1:0")))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            URI endpoint = endpointOf(upstream, log);
            bounded(soak, () -> {
                try (RawJsonRpc rpc = new RawJsonRpc.Http(endpoint, rules(), AnswerAccountingSoakIT.SEED, soak,
                        HTTP_TIMEOUT, soak)) {
                    soak.run(rpc);
                    soak.assertAccounting("http", FAULTS);
                    AnswerAccountingSoakIT.assertHttpEndings(soak);
                    assertThat(rpc.unreadable).isEmpty();
                }
            });
        } finally {
            upstream.destroy();
            if (!upstream.waitFor(10, TimeUnit.SECONDS)) {
                upstream.destroyForcibly();
            }
        }
        assertHeapFlat(soak);
        AnswerAccountingSoakIT.assertNoLeaks();
    }

    private static RuleSet rules() {
        return RuleSet.parse(AnswerAccountingSoakIT.DROP_AND_DUPLICATE + AnswerAccountingSoakIT.AND_LATENCY, "soak.yaml");
    }

    /** The soak's own bounds, and a minute for the handshake and the close, as a hard limit. */
    private static void bounded(AnswerSoak soak, org.junit.jupiter.api.function.Executable run) {
        Assertions.assertTimeoutPreemptively(soak.plan.sendCap().plus(soak.plan.giveUpAfter()).plusSeconds(60), run);
    }

    private static void assertHeapFlat(AnswerSoak soak) {
        long warm = soak.heapAt("warm").heapUsed();
        long end = soak.heapAt("end").heapUsed();
        assertThat(end - warm).as("heap after GC, end over warm: %s", soak.heap()).isLessThan(HEAP_GROWTH);
    }

    /** The demo server of the packaged jar, in a JVM of its own sized like a small server. */
    private static List<String> demoServer(List<String> arguments) {
        List<String> command = new java.util.ArrayList<>(List.of(TestPeers.java().toString(), "-XX:+UseSerialGC",
                "-Xmx256m", "-jar", TestPeers.mcpChaosJar().toString(), "demo-server"));
        command.addAll(arguments);
        return command;
    }

    private static URI endpointOf(Process upstream, Path log) {
        Pattern announced = Pattern.compile("Streamable HTTP at (http://127\\.0\\.0\\.1:\\d+/mcp)");
        String[] endpoint = new String[1];
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> {
            Matcher matcher = announced.matcher(read(log));
            if (matcher.find()) {
                endpoint[0] = matcher.group(1);
                return true;
            }
            return !upstream.isAlive();
        });
        assertThat(endpoint[0]).as("the demo server's endpoint; its log:\n%s", read(log)).isNotNull();
        return URI.create(endpoint[0]);
    }

    private static String read(Path log) {
        try {
            return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
