package dev.mcpchaos.server.rules;

import dev.mcpchaos.rules.FaultEvent;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The rest of the fault catalogue on stdio, end to end: what the official MCP Java SDK client
 * (2.1.0, its own {@code StdioClientTransport}) experiences when mcp-chaos duplicates, reorders,
 * truncates, patches, mis-addresses, swallows or throttles the traffic to the demo server.
 * Together with {@link RuleEndToEndTest} every fault that applies to stdio is shown through a real
 * client. One rule file per test; see {@link ChaosSession} for the wiring.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FaultCatalogueEndToEndTest {

    private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(2);
    /** Bound on every wait of the test itself (beyond the client's own timeout). */
    private static final long WAIT_SECONDS = 15;

    @Test
    void aDuplicatedResponseIsIgnoredAndTheSessionGoesOn() {
        // The SDK completes the call with the first copy; the second is for an id it no longer
        // waits for, which it logs ("Unexpected response for unknown id") and drops.
        String rules = "rules:\n  - name: twice\n    match: {kind: response, tool: echo}\n"
                + "    times: 1\n    fault: {type: duplicate, copies: 2}\n";
        try (ChaosSession session = new ChaosSession(rules, 1, CLIENT_TIMEOUT)) {
            McpSchema.CallToolResult result = session.call("echo", Map.of("text", "once"));

            assertThat(result.isError()).isFalse();
            assertThat(ChaosSession.text(result)).isEqualTo("once");
            assertThat(ChaosSession.text(session.call("echo", Map.of("text", "again")))).isEqualTo("again");
            assertThat(ChaosSession.text(session.call("add", Map.of("a", 2, "b", 3)))).isEqualTo("5");
            assertThat(session.events).singleElement().satisfies(e -> {
                assertThat(e.fault()).isEqualTo("duplicate");
                assertThat(e.detail()).isEqualTo("sent 3 times");
            });
        }
    }

    @Test
    void reorderedResponsesStillReachTheirCallsById() throws Exception {
        // Two calls in flight at once; the proxy holds both answers and releases them swapped.
        // The SDK matches answers by JSON-RPC id, so each call gets its own result.
        String rules = "rules:\n  - name: swap\n    match: {kind: response, method: tools/call}\n"
                + "    times: 2\n    fault: {type: reorder, window: 2, hold: 5s}\n";
        try (ChaosSession session = new ChaosSession(rules, 1, Duration.ofSeconds(10))) {
            CompletableFuture<McpSchema.CallToolResult> first =
                    CompletableFuture.supplyAsync(() -> session.call("echo", Map.of("text", "first")));
            CompletableFuture<McpSchema.CallToolResult> second =
                    CompletableFuture.supplyAsync(() -> session.call("add", Map.of("a", 20, "b", 22)));

            assertThat(ChaosSession.text(first.get(WAIT_SECONDS, TimeUnit.SECONDS))).isEqualTo("first");
            assertThat(ChaosSession.text(second.get(WAIT_SECONDS, TimeUnit.SECONDS))).isEqualTo("42");
            assertThat(session.events).hasSize(2);
            FaultEvent held = session.events.stream().filter(e -> e.detail().startsWith("held")).findFirst()
                    .orElseThrow();
            FaultEvent full = session.events.stream().filter(e -> e.detail().startsWith("window")).findFirst()
                    .orElseThrow();
            assertThat(held.detail()).isEqualTo("held in a window (1 of 2)");
            // Released out of order, the later answer first, named by the ids the SDK gave its calls.
            assertThat(full.detail()).isEqualTo("window of 2 full; released ids " + jsonId(full.id()) + ", "
                    + jsonId(held.id()));
            assertThat(ChaosSession.text(session.call("echo", Map.of("text", "after")))).isEqualTo("after");
        }
    }

    /** An id as the fault log writes it: a string quoted, a number as it is. */
    private static String jsonId(Object id) {
        return id instanceof String ? "\"" + id + "\"" : String.valueOf(id);
    }

    @Test
    void aTruncatedResponseTimesOutAndEndsTheSdkClientsSession() {
        // Like corrupt: the SDK's stdio transport cannot parse the cut line, logs it and stops
        // reading, so that call times out and so does every later one.
        String rules = "rules:\n  - name: half\n    match: {kind: response, tool: echo}\n"
                + "    times: 1\n    fault: {type: truncate, fraction: 0.5}\n";
        try (ChaosSession session = new ChaosSession(rules, 1, CLIENT_TIMEOUT)) {
            Throwable failure = catchThrowable(() -> session.call("echo", Map.of("text", "hello")));
            assertThat(McpError.findRootCause(failure)).isInstanceOf(TimeoutException.class);

            Throwable after = catchThrowable(() -> session.call("add", Map.of("a", 1, "b", 1)));
            assertThat(McpError.findRootCause(after)).as("a call after the cut line").isInstanceOf(TimeoutException.class);
            assertThat(session.events).singleElement()
                    .satisfies(e -> assertThat(e.detail()).matches("cut at \\d+ of \\d+ B"));
        }
    }

    @Test
    void aPatchedToolListHidesATool() {
        String rules = "rules:\n  - name: add-disappears\n    match: {kind: response, method: tools/list}\n"
                + "    fault:\n      type: mutate\n      patch:\n"
                + "        - {op: test, path: /result/tools/1/name, value: add}\n"
                + "        - {op: remove, path: /result/tools/1}\n";
        try (ChaosSession session = new ChaosSession(rules, 1, CLIENT_TIMEOUT)) {
            assertThat(session.client.listTools().tools()).extracting(McpSchema.Tool::name)
                    .containsExactly("echo", "slow", "large");
            // Only the listing drifted: the server still has the tool.
            assertThat(ChaosSession.text(session.call("add", Map.of("a", 1, "b", 2)))).isEqualTo("3");
            assertThat(session.events).singleElement()
                    .satisfies(e -> assertThat(e.detail()).isEqualTo("patched (2 operations)"));
        }
    }

    @Test
    void aResponseWithTheWrongIdLeavesTheCallToTimeOut() {
        // The SDK logs the answer for an id it never sent and drops it; the session goes on.
        String rules = "rules:\n  - name: wrong-id\n    match: {kind: response, tool: echo}\n"
                + "    times: 1\n    fault: {type: id_mismatch}\n";
        try (ChaosSession session = new ChaosSession(rules, 1, CLIENT_TIMEOUT)) {
            long start = System.nanoTime();
            Throwable failure = catchThrowable(() -> session.call("echo", Map.of("text", "lost")));
            Duration waited = Duration.ofNanos(System.nanoTime() - start);

            assertThat(McpError.findRootCause(failure)).isInstanceOf(TimeoutException.class);
            assertThat(waited).isGreaterThanOrEqualTo(CLIENT_TIMEOUT);
            assertThat(ChaosSession.text(session.call("echo", Map.of("text", "found")))).isEqualTo("found");
            assertThat(session.events).singleElement()
                    .satisfies(e -> assertThat(e.detail()).matches("id \\S+ -> \\S+"));
        }
    }

    @Test
    void aBlackholedRequestTimesOutWhileTheSessionStaysOpen() {
        String rules = "rules:\n  - name: void\n    match: {kind: request, tool: add}\n"
                + "    times: 1\n    fault: {type: blackhole}\n";
        try (ChaosSession session = new ChaosSession(rules, 1, CLIENT_TIMEOUT)) {
            long start = System.nanoTime();
            Throwable failure = catchThrowable(() -> session.call("add", Map.of("a", 1, "b", 2)));
            Duration waited = Duration.ofNanos(System.nanoTime() - start);

            assertThat(McpError.findRootCause(failure)).isInstanceOf(TimeoutException.class);
            assertThat(waited).isBetween(CLIENT_TIMEOUT, CLIENT_TIMEOUT.plusSeconds(1));
            assertThat(ChaosSession.text(session.call("add", Map.of("a", 2, "b", 3)))).isEqualTo("5");
            assertThat(session.events).singleElement().satisfies(e -> {
                assertThat(e.fault()).isEqualTo("blackhole");
                assertThat(e.detail()).isEqualTo("swallowed; the connection stays open");
            });
        }
    }

    @Test
    void aThrottledLargeResultArrivesIntactButSlowly() {
        int bytes = 384 * 1024;
        String rules = "rules:\n  - name: slow-large\n    match: {kind: response, tool: large}\n"
                + "    fault: {type: throttle, rate: 256KiB/s}\n";
        try (ChaosSession session = new ChaosSession(rules, 1, Duration.ofSeconds(10))) {
            long start = System.nanoTime();
            McpSchema.CallToolResult result = session.call("large", Map.of("bytes", bytes));
            Duration took = Duration.ofNanos(System.nanoTime() - start);

            assertThat(result.isError()).isFalse();
            assertThat(ChaosSession.text(result)).hasSize(bytes).matches("[\\x20-\\x7e]+");
            FaultEvent event = session.events.get(0);
            assertThat(session.events).hasSize(1);
            Matcher m = Pattern.compile("written in (\\d+) pieces of up to 26214 B, one every ([0-9.]+)ms")
                    .matcher(event.detail());
            assertThat(m.matches()).as(event.detail()).isTrue();
            long pieces = Long.parseLong(m.group(1));
            assertThat(pieces).isGreaterThanOrEqualTo(bytes / 26214);
            // The first piece leaves at once, then one every interval (~100 ms): at least ~1.5 s.
            Duration interval = Duration.ofNanos((long) (Double.parseDouble(m.group(2)) * 1e6));
            assertThat(interval).isBetween(Duration.ofMillis(99), Duration.ofMillis(101));
            Duration expected = interval.multipliedBy(pieces - 1);
            assertThat(took).isGreaterThanOrEqualTo(expected);
        }
    }
}
