package dev.mcpchaos.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.FaultEvent;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Timing and copying faults on the <em>answers</em> ({@code kind: response} of {@code tools/call}),
 * each shorter than the client's request timeout, between the MCP Java SDK client and the real
 * {@code @modelcontextprotocol/server-everything}, through an in-process mcp-chaos proxy. One
 * subclass per transport says how the client reaches the server directly and through the proxy.
 *
 * <p>Before any fault, every call of the tests is made once directly against server-everything;
 * through the proxy each call must then get exactly that result, no sooner than the delay the
 * fault reports for it (the lower bound is strict; the upper bound leaves {@link #SLACK}), and the
 * proxy's fault listener must have seen exactly one injection per answer.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class AnswerFaultsContract {

    static final long SEED = 14;
    /** The SDK's bound for every request: well above every fault's delay here. */
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);
    /** How long a test waits for server-everything's tools/list_changed before it closes. */
    private static final Duration TOOLS_REFETCH_SETTLE = Duration.ofSeconds(3);
    /** What a call may take beyond its fault's delay (a busy 2-core machine, a node server). */
    static final Duration SLACK = Duration.ofSeconds(5);
    /** Picks exactly the answers to the tool calls: not initialize, nor the SDK's own tools/list. */
    static final String ANSWERS = "{direction: server_to_client, kind: response, method: tools/call}";

    private static final ObjectMapper JSON = new ObjectMapper();

    /** One tool call of server-everything, with its arguments. */
    record Call(String tool, Map<String, Object> arguments) {
        McpSchema.CallToolRequest request() {
            return McpSchema.CallToolRequest.builder(tool).arguments(arguments).build();
        }
    }

    /** Made one after the other. */
    static final List<Call> IN_TURN = List.of(
            new Call("echo", Map.of("message", "chaos one")),
            new Call("get-sum", Map.of("a", 2, "b", 40)),
            new Call("echo", Map.of("message", "b\u00fftes \u4e2d \ud83d\ude00 \"quoted\"\n")),
            new Call("get-sum", Map.of("a", 1.5, "b", 2.25)));

    /** Made all at once, from as many threads. */
    static final List<Call> AT_ONCE = IntStream.range(0, 8)
            .mapToObj(i -> new Call("echo", Map.of("message", "in flight together #" + i)))
            .collect(Collectors.toUnmodifiableList());

    /** Sends {@link #STEPS} progress notifications over half a second, then answers. */
    static final Call LONG_RUN = new Call("trigger-long-running-operation", Map.of("duration", 0.5, "steps", 5));
    static final int STEPS = 5;
    static final Duration LONG_RUN_DURATION = Duration.ofMillis(500);

    /** A client through the proxy, not yet built, and what the proxy reports. */
    interface Proxied extends AutoCloseable {
        McpClient.SyncSpec client();

        /** Every fault the proxy injected, in order. */
        List<FaultEvent> events();

        /** The lines the proxy wrote to the client, where the test can see them (stdio), else null. */
        List<String> linesToClient();

        @Override
        void close();
    }

    /** Starts what the whole class shares, before the direct calls; default: nothing. */
    void startPeers() {
    }

    /** Stops what {@link #startPeers} started. */
    void stopPeers() {
    }

    /** A client spec straight to server-everything, not yet built. */
    abstract McpClient.SyncSpec directClient();

    /** Starts the proxy with these rules in front of server-everything; returns a client spec through it. */
    abstract Proxied throughProxy(String rulesYaml);

    private final Map<Call, McpSchema.CallToolResult> direct = new LinkedHashMap<>();
    private final Map<Call, Duration> directElapsed = new LinkedHashMap<>();
    private final List<McpSchema.ProgressNotification> progress = new CopyOnWriteArrayList<>();
    private final List<List<McpSchema.Tool>> toolsChanged = new CopyOnWriteArrayList<>();
    private Proxied proxied;
    private McpSyncClient client;

    /** The calls of every test, made directly, for the results to compare with. */
    @BeforeAll
    void callDirectly() {
        startPeers();
        List<McpSchema.ProgressNotification> directProgress = new CopyOnWriteArrayList<>();
        List<List<McpSchema.Tool>> directToolsChanged = new CopyOnWriteArrayList<>();
        McpSyncClient sdk = directClient().progressConsumer(directProgress::add)
                .toolsChangeConsumer(directToolsChanged::add).build();
        try {
            sdk.initialize();
            List<Call> all = new ArrayList<>(IN_TURN);
            all.addAll(AT_ONCE);
            for (Call call : all) {
                long start = System.nanoTime();
                direct.put(call, sdk.callTool(call.request()));
                directElapsed.put(call, Duration.ofNanos(System.nanoTime() - start));
            }
            long start = System.nanoTime();
            direct.put(LONG_RUN, sdk.callTool(withProgressToken(LONG_RUN, "direct-progress")));
            directElapsed.put(LONG_RUN, Duration.ofNanos(System.nanoTime() - start));
            await("the direct call's progress").atMost(REQUEST_TIMEOUT).until(() -> directProgress.size() >= STEPS);
            assertThat(directProgress).extracting(McpSchema.ProgressNotification::progress)
                    .containsExactly(1.0, 2.0, 3.0, 4.0, 5.0);
            awaitToolsRefetched(directToolsChanged);
        } finally {
            sdk.closeGracefully();
        }
        // The results are real ones, not errors: otherwise "the same as directly" proves little.
        assertThat(direct.values()).allSatisfy(result -> assertThat(result.isError()).isNotEqualTo(Boolean.TRUE));
        assertThat(text(direct.get(IN_TURN.get(1)))).isEqualTo("The sum of 2 and 40 is 42.");
        System.out.printf("%s: direct calls took %s%n", getClass().getSimpleName(), directElapsed.values().stream()
                .map(d -> d.toMillis() + "ms").collect(Collectors.joining(" ")));
    }

    @AfterAll
    void stopAll() {
        stopPeers();
    }

    @AfterEach
    void disconnect() {
        try {
            if (client != null) {
                if (client.isInitialized()) {
                    awaitToolsRefetched(toolsChanged);
                }
                client.closeGracefully();
            }
        } finally {
            client = null;
            if (proxied != null) {
                proxied.close();
                proxied = null;
            }
        }
    }

    // ================================================================ the faults

    @Test
    void latencyOnTheAnswersDelaysEveryCallAndChangesNoResult() {
        McpSyncClient c = connect(rule("slow-answers", "{type: latency, latency: 300ms}"));

        List<Timed> calls = inTurn(c, IN_TURN);

        List<FaultEvent> events = injections("latency", IN_TURN, true);
        assertThat(events).extracting(FaultEvent::detail).containsOnly("held 300ms");
        assertEachSameAsDirectAndLateBy(calls, events);
    }

    @Test
    void throttleOnTheAnswersDelaysEveryCallByItsPiecesAndChangesNoResult() {
        McpSyncClient c = connect(rule("slow-link", "{type: throttle, chunk: 16B, interval: 25ms}"));

        List<Timed> calls = inTurn(c, IN_TURN);

        List<FaultEvent> events = injections("throttle", IN_TURN, true);
        // Each answer is some 90 bytes and up: at 16 bytes a piece, several pieces, so a real delay.
        assertThat(events).allSatisfy(e -> assertThat(heldFor(e)).isGreaterThanOrEqualTo(Duration.ofMillis(75)));
        List<String> wire = proxied.linesToClient();
        if (wire != null) {
            // The piece count the fault reports is the one the answer's bytes (and newline) make.
            for (FaultEvent event : events) {
                String line = answerLines(wire, event.id()).get(0);
                int bytes = line.getBytes(java.nio.charset.StandardCharsets.UTF_8).length + 1;
                assertThat(event.detail()).startsWith("written in " + ((bytes + 15) / 16) + " pieces of up to 16 B");
            }
        }
        assertEachSameAsDirectAndLateBy(calls, events);
    }

    @Test
    void reorderHoldsALoneAnswerUntilItsWindowTimesOutAndChangesNoResult() {
        McpSyncClient c = connect(rule("shuffle-answers", "{type: reorder, window: 2, hold: 300ms}"));

        // One call at a time: each answer waits alone for a second one that never comes, and
        // leaves when the window's hold runs out.
        List<Timed> calls = inTurn(c, IN_TURN);

        List<FaultEvent> events = injections("reorder", IN_TURN, true);
        assertThat(events).extracting(FaultEvent::detail).containsOnly("held in a window (1 of 2)");
        for (int i = 0; i < calls.size(); i++) {
            Timed call = calls.get(i);
            assertThat(call.result).as("%s", call.call).isEqualTo(direct.get(call.call));
            assertThat(call.elapsed).as("%s", call.call).isGreaterThanOrEqualTo(Duration.ofMillis(300))
                    .isLessThan(Duration.ofMillis(300).plus(SLACK));
        }
    }

    @Test
    void reorderSwapsTheAnswersOfConcurrentCallsAndEachCallStillGetsItsOwn() throws Exception {
        McpSyncClient c = connect(rule("shuffle-answers", "{type: reorder, window: 2, hold: 2s}"));

        List<Timed> calls = atOnce(c, AT_ONCE);

        for (Timed call : calls) {
            assertThat(call.result).as("%s", call.call).isEqualTo(direct.get(call.call));
            assertThat(call.elapsed).as("%s", call.call).isLessThan(Duration.ofSeconds(2).plus(SLACK));
        }
        List<FaultEvent> events = injections("reorder", AT_ONCE, false);
        // Eight answers that come within moments of each other fill four windows of two.
        for (int pair = 0; pair < AT_ONCE.size() / 2; pair++) {
            FaultEvent first = events.get(2 * pair);
            FaultEvent second = events.get(2 * pair + 1);
            assertThat(first.detail()).as("window %d", pair).isEqualTo("held in a window (1 of 2)");
            // The event names the released answers by JSON-RPC id, in the order they left.
            assertThat(second.detail()).as("window %d", pair)
                    .isEqualTo("window of 2 full; released ids \"" + second.id() + "\", \"" + first.id() + "\"");
            List<String> wire = proxied.linesToClient();
            if (wire != null) {
                // A window of two is never released in its own order: the second answer leaves first.
                assertThat(indexOfAnswer(wire, second.id())).as("window %d", pair)
                        .isLessThan(indexOfAnswer(wire, first.id()));
            }
        }
    }

    @Test
    void duplicatedAnswersChangeNoResultAndTheSessionGoesOn() {
        McpSyncClient c = connect(rule("twice", "{type: duplicate}"));

        List<Timed> calls = inTurn(c, IN_TURN);

        for (Timed call : calls) {
            assertThat(call.result).as("%s", call.call).isEqualTo(direct.get(call.call));
        }
        List<FaultEvent> events = injections("duplicate", IN_TURN, true);
        assertThat(events).extracting(FaultEvent::detail).containsOnly("sent 2 times");
        List<String> wire = proxied.linesToClient();
        if (wire != null) {
            for (FaultEvent event : events) {
                List<String> answers = answerLines(wire, event.id());
                assertThat(answers).as("the answer to %s on the wire", event.id()).hasSize(2);
                assertThat(answers.get(1)).isEqualTo(answers.get(0));
            }
        }
        // The second copy of each answer did the session no harm.
        assertThat(c.ping()).isInstanceOf(Map.class);
        assertThat(c.callTool(IN_TURN.get(0).request())).isEqualTo(direct.get(IN_TURN.get(0)));
    }

    @Test
    void concurrentCallsEachWaitTheirOwnLatencyAndGetTheirOwnResult() throws Exception {
        McpSyncClient c = connect(rule("slow-answers", "{type: latency, latency: 300ms}"));

        List<Timed> calls = atOnce(c, AT_ONCE);

        List<FaultEvent> events = injections("latency", AT_ONCE, false);
        assertThat(events).extracting(FaultEvent::detail).containsOnly("held 300ms");
        for (Timed call : calls) {
            assertThat(call.result).as("%s", call.call).isEqualTo(direct.get(call.call));
            assertThat(call.elapsed).as("%s", call.call).isGreaterThanOrEqualTo(Duration.ofMillis(300))
                    .isLessThan(Duration.ofMillis(300).plus(SLACK));
        }
    }

    @Test
    void progressNotificationsPassAndTheDelayedResultIsTheDirectOne() {
        McpSyncClient c = connect(rule("slow-answers", "{type: latency, latency: 300ms}"));

        long start = System.nanoTime();
        McpSchema.CallToolResult result = c.callTool(withProgressToken(LONG_RUN, "proxied-progress"));
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

        assertThat(result).isEqualTo(direct.get(LONG_RUN));
        // The server works half a second, then the proxy holds its answer 300 ms.
        assertThat(elapsed).isGreaterThanOrEqualTo(LONG_RUN_DURATION.plusMillis(300))
                .isLessThan(LONG_RUN_DURATION.plusMillis(300).plus(SLACK));
        await("the progress notifications").atMost(REQUEST_TIMEOUT).until(() -> progress.size() >= STEPS);
        assertThat(progress).extracting(McpSchema.ProgressNotification::progressToken).containsOnly("proxied-progress");
        assertThat(progress).extracting(McpSchema.ProgressNotification::progress)
                .containsExactly(1.0, 2.0, 3.0, 4.0, 5.0);
        List<FaultEvent> events = injections("latency", List.of(LONG_RUN), true);
        assertThat(events).extracting(FaultEvent::detail).containsOnly("held 300ms");
        List<String> wire = proxied.linesToClient();
        if (wire != null) {
            // Only the answer was held: every progress notification left before it.
            int answer = indexOfAnswer(wire, events.get(0).id());
            List<Integer> notifications = IntStream.range(0, wire.size())
                    .filter(i -> wire.get(i).contains("\"notifications/progress\"")).boxed().toList();
            assertThat(notifications).hasSize(STEPS).allSatisfy(i -> assertThat(i).isLessThan(answer));
        }
    }

    // ================================================================ helpers

    /**
     * After notifications/initialized server-everything registers more tools and sends
     * tools/list_changed, and the SDK fetches the list again; closing before that finished cuts
     * the fetch off, and the SDK logs an error that would hide real ones. A settle, not a check:
     * over streamableHttp the server sends that notification on the GET stream, and when the
     * SDK's GET is not open yet the server drops it (its event store replays only to a
     * Last-Event-ID). That race is between the two peers, and it happens without the proxy too
     * (it failed CI once in the direct calls), so a missing refetch is reported and waited no longer.
     */
    private static void awaitToolsRefetched(List<List<McpSchema.Tool>> toolsChanged) {
        long deadline = System.nanoTime() + TOOLS_REFETCH_SETTLE.toNanos();
        while (toolsChanged.isEmpty() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        if (toolsChanged.isEmpty()) {
            System.out.println("tools/list_changed did not arrive within " + TOOLS_REFETCH_SETTLE
                    + " (the server sent it before the client's GET stream was open); closing anyway");
        }
    }

    static String rule(String name, String fault) {
        return "rules:\n  - name: " + name + "\n    match: " + ANSWERS + "\n    fault: " + fault + "\n";
    }

    private McpSyncClient connect(String rulesYaml) {
        proxied = throughProxy(rulesYaml);
        client = proxied.client().progressConsumer(progress::add).toolsChangeConsumer(toolsChanged::add).build();
        client.initialize();
        return client;
    }

    /** A call, its result and how long the client waited for it. */
    record Timed(Call call, McpSchema.CallToolResult result, Duration elapsed) {
    }

    private static List<Timed> inTurn(McpSyncClient c, List<Call> calls) {
        List<Timed> timed = new ArrayList<>();
        for (Call call : calls) {
            long start = System.nanoTime();
            McpSchema.CallToolResult result = c.callTool(call.request());
            timed.add(new Timed(call, result, Duration.ofNanos(System.nanoTime() - start)));
        }
        return timed;
    }

    /** Starts every call on its own thread at the same moment; returns them in the order given. */
    private static List<Timed> atOnce(McpSyncClient c, List<Call> calls) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(calls.size());
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Timed>> futures = new ArrayList<>();
            for (Call call : calls) {
                futures.add(threads.submit(() -> {
                    go.await();
                    long start = System.nanoTime();
                    McpSchema.CallToolResult result = c.callTool(call.request());
                    return new Timed(call, result, Duration.ofNanos(System.nanoTime() - start));
                }));
            }
            go.countDown();
            List<Timed> timed = new ArrayList<>();
            for (Future<Timed> future : futures) {
                try {
                    timed.add(future.get(REQUEST_TIMEOUT.plus(SLACK).toMillis(), TimeUnit.MILLISECONDS));
                } catch (ExecutionException | TimeoutException e) {
                    throw new AssertionError("a concurrent call failed", e);
                }
            }
            return timed;
        } finally {
            threads.shutdownNow();
        }
    }

    /**
     * The proxy's events, checked to be exactly one injection of {@code fault} per call, each on
     * the answer to a {@code tools/call} of the call's tool, each for another request id.
     *
     * @param inOrder whether the calls were made one after the other (so the events are in their order)
     */
    private List<FaultEvent> injections(String fault, List<Call> calls, boolean inOrder) {
        List<FaultEvent> events = List.copyOf(proxied.events());
        assertThat(events).as("fault events").hasSize(calls.size());
        assertThat(events).allSatisfy(e -> {
            assertThat(e.fault()).isEqualTo(fault);
            assertThat(e.direction()).isEqualTo(Direction.SERVER_TO_CLIENT);
            assertThat(e.kind()).isEqualTo(MessageKind.RESPONSE);
            assertThat(e.method()).isEqualTo("tools/call");
        });
        List<String> tools = calls.stream().map(Call::tool).toList();
        if (inOrder) {
            assertThat(events).extracting(FaultEvent::tool).containsExactlyElementsOf(tools);
        } else {
            assertThat(events).extracting(FaultEvent::tool).containsExactlyInAnyOrderElementsOf(tools);
        }
        assertThat(events).extracting(FaultEvent::id).doesNotContainNull().doesNotHaveDuplicates();
        return events;
    }

    /** Call i got the direct result, no sooner than event i says its answer was held. */
    private void assertEachSameAsDirectAndLateBy(List<Timed> calls, List<FaultEvent> events) {
        for (int i = 0; i < calls.size(); i++) {
            Timed call = calls.get(i);
            Duration held = heldFor(events.get(i));
            assertThat(call.result).as("%s", call.call).isEqualTo(direct.get(call.call));
            assertThat(call.elapsed).as("%s, held %s", call.call, held)
                    .isGreaterThanOrEqualTo(held).isLessThan(held.plus(SLACK));
        }
    }

    private static final Pattern HELD = Pattern.compile("^held (\\d+)(ms|s)\\b");
    private static final Pattern PIECES = Pattern.compile("^written in (\\d+) pieces of up to \\d+ B, one every (\\d+)ms$");

    /**
     * How long the fault says it kept the answer from the client: {@code held 300ms} (latency,
     * throttle on HTTP), or the time between the first and the last of the pieces (throttle on stdio).
     */
    static Duration heldFor(FaultEvent event) {
        Matcher held = HELD.matcher(event.detail());
        if (held.find()) {
            long amount = Long.parseLong(held.group(1));
            return held.group(2).equals("s") ? Duration.ofSeconds(amount) : Duration.ofMillis(amount);
        }
        Matcher pieces = PIECES.matcher(event.detail());
        if (pieces.matches()) {
            return Duration.ofMillis(Long.parseLong(pieces.group(2)) * (Long.parseLong(pieces.group(1)) - 1));
        }
        throw new AssertionError("no delay in the event's detail: " + event);
    }

    /** The lines on the wire that answer {@code id} (a result or an error with that id). */
    private static List<String> answerLines(List<String> wire, Object id) {
        List<String> answers = new ArrayList<>();
        for (String line : wire) {
            JsonNode message = parse(line);
            if ((message.has("result") || message.has("error")) && idMatches(message.path("id"), id)) {
                answers.add(line);
            }
        }
        return answers;
    }

    private static int indexOfAnswer(List<String> wire, Object id) {
        for (int i = 0; i < wire.size(); i++) {
            JsonNode message = parse(wire.get(i));
            if ((message.has("result") || message.has("error")) && idMatches(message.path("id"), id)) {
                return i;
            }
        }
        throw new AssertionError("no answer to " + id + " on the wire: " + wire);
    }

    private static boolean idMatches(JsonNode node, Object id) {
        return node.isTextual() ? node.textValue().equals(id) : node.isNumber() && id instanceof Number n
                && node.decimalValue().compareTo(new java.math.BigDecimal(n.toString())) == 0;
    }

    private static JsonNode parse(String line) {
        try {
            return JSON.readTree(line);
        } catch (IOException e) {
            throw new UncheckedIOException("not JSON on the client's side: " + line, e);
        }
    }

    static McpSchema.CallToolRequest withProgressToken(Call call, String token) {
        return McpSchema.CallToolRequest.builder(call.tool()).arguments(call.arguments()).progressToken(token).build();
    }

    static String text(McpSchema.CallToolResult result) {
        return HttpPeers.text(result);
    }
}
