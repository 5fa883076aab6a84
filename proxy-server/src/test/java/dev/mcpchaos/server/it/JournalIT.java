package dev.mcpchaos.server.it;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.rules.journal.Journal;
import dev.mcpchaos.rules.journal.JournalEntry;
import dev.mcpchaos.server.HttpProxyBuilder.RunningHttp;
import dev.mcpchaos.server.McpChaosProxy;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.mcpchaos.rules.journal.Messages.dropped;
import static dev.mcpchaos.rules.journal.Messages.notification;
import static dev.mcpchaos.rules.journal.Messages.request;
import static dev.mcpchaos.rules.journal.Messages.toolCall;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The journal of the embedded proxy, with the MCP Java SDK's client through it to
 * server-everything, over Streamable HTTP and stdio, under a drop, an {@code http_status} 503 with
 * {@code Retry-After}, a {@code session_expire} and a latency: the journal counts exactly the
 * calls the test made and the answers that came back, says which rule did what, and each
 * {@code verify} passes on a client that behaves and fails, with the journal's entries, on one
 * that does not.
 */
class JournalIT {

    private static final long SEED = 15;
    /** Long enough for a healthy call on a loaded machine; a dropped answer costs this much. */
    private static final Duration LOST_ANSWER_TIMEOUT = Duration.ofSeconds(4);

    @TempDir
    static Path tempDir;

    private static HttpPeers.ServerEverything everything;

    @BeforeAll
    static void startServer() {
        everything = HttpPeers.ServerEverything.start(tempDir);
    }

    @AfterAll
    static void stopServer() {
        if (everything != null) {
            everything.close();
        }
    }

    private static RunningHttp httpProxy(String rulesYaml) throws Exception {
        return McpChaosProxy.http(everything.endpoint())
                .rules(RuleSet.parse(rulesYaml, "journal-it.yaml"))
                .seed(SEED)
                .start();
    }

    private static McpSyncClient httpClient(RunningHttp proxy, Duration requestTimeout) {
        McpSyncClient client = HttpPeers.sdkClient(HttpPeers.endpoint(proxy.address()))
                .requestTimeout(requestTimeout)
                .initializationTimeout(HttpPeers.TIMEOUT)
                .build();
        client.initialize();
        return client;
    }

    private static final HttpClient RAW = HttpClient.newBuilder().connectTimeout(HttpPeers.TIMEOUT).build();

    /** A POST as a Streamable HTTP client sends it, in {@code session} when not null. */
    private static HttpResponse<String> post(URI mcp, String session, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(mcp).timeout(HttpPeers.TIMEOUT)
                .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2025-06-18")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null) {
            request.header("Mcp-Session-Id", session);
        }
        return RAW.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String rawEcho(int id, String text) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                + "\"arguments\":{\"message\":\"" + text + "\"}}}";
    }

    private static McpSchema.CallToolResult echo(McpSyncClient client, String text) {
        return client.callTool(McpSchema.CallToolRequest.builder("echo").arguments(Map.of("message", text)).build());
    }

    private static List<JournalEntry> clientToolCalls(Journal journal, String tool) {
        return journal.filter(e -> e.direction() == Direction.CLIENT_TO_SERVER && e.kind() == MessageKind.REQUEST
                && "tools/call".equals(e.method()) && tool.equals(e.tool()));
    }

    @Test
    void httpADroppedAnswerIsJournaledAndTheRetryWithTheSameArgumentsIsSeen() throws Exception {
        String rules = """
                rules:
                  - name: lose-first-echo-answer
                    match: {kind: response, method: tools/call, tool: echo}
                    times: 1
                    fault: {type: drop}
                """;
        try (RunningHttp proxy = httpProxy(rules); McpSyncClient client = httpClient(proxy, LOST_ANSWER_TIMEOUT)) {
            int calls = 0;
            int answered = 0;
            Throwable lost = catchThrowable(() -> echo(client, "write row 7"));
            calls++;
            assertThat(lost).as("the first answer is dropped: the call times out").isNotNull();
            assertThat(echo(client, "write row 7").content()).isNotEmpty(); // the retry, same arguments
            calls++;
            answered++;
            for (int i = 0; i < 3; i++) {
                assertThat(HttpPeers.text(echo(client, "other " + i))).contains("other " + i);
                calls++;
                answered++;
            }

            Journal journal = proxy.journal();
            int sent = calls;
            // Exactly what the test sent and what came back.
            journal.verify().client().sent(toolCall("echo")).times(calls);
            assertThat(clientToolCalls(journal, "echo")).hasSize(calls).allMatch(JournalEntry::delivered);
            List<JournalEntry> answers = journal.filter(e -> e.direction() == Direction.SERVER_TO_CLIENT
                    && toolCall("echo").test(e) && e.kind() == MessageKind.RESPONSE);
            assertThat(answers).hasSize(calls);
            assertThat(answers.stream().filter(JournalEntry::delivered)).hasSize(answered);
            JournalEntry dropped = answers.stream().filter(e -> !e.delivered()).findFirst().orElseThrow();
            assertThat(dropped.faults()).containsExactly(new JournalEntry.FaultAction("lose-first-echo-answer", "drop",
                    "dropped"));
            assertThat(journal.verify().client().sent(request("initialize")).once().get(0).delivered()).isTrue();
            assertThat(journal.entries()).allMatch(e -> e.message() == null); // no content unless asked

            var retry = journal.verify().client().retriedAfter(dropped(toolCall("echo"))).withSameArguments();
            assertThat(retry.original().id()).isEqualTo(dropped.id());
            assertThat(retry.retry().paramsFingerprint()).isEqualTo(retry.original().paramsFingerprint());

            // The failing twins, on the same journal.
            assertThatThrownBy(() -> journal.verify().client().sent(toolCall("echo")).times(sent + 1))
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("Expected the client to send tools/call of echo exactly " + (sent + 1)
                            + " times,\nbut the client sent it " + sent + " times.")
                    .hasMessageContaining("c->s request id=");
            assertThatThrownBy(() -> journal.verify().client().retriedAfter(dropped(toolCall("add"))))
                    .hasMessageContaining("but the journal holds no dropped tools/call of add.")
                    .hasMessageContaining("drop(rule 'lose-first-echo-answer'): dropped; not delivered");
        }
    }

    @Test
    void httpARetryWithOtherArgumentsFailsWithSameArguments() throws Exception {
        String rules = """
                rules:
                  - name: lose-first-echo-answer
                    match: {kind: response, method: tools/call, tool: echo}
                    times: 1
                    fault: {type: drop}
                """;
        try (RunningHttp proxy = httpProxy(rules); McpSyncClient client = httpClient(proxy, LOST_ANSWER_TIMEOUT)) {
            assertThat(catchThrowable(() -> echo(client, "first"))).isNotNull();
            assertThat(HttpPeers.text(echo(client, "second"))).contains("second");

            Journal journal = proxy.journal();
            journal.verify().client().retriedAfter(dropped(toolCall("echo")));
            assertThatThrownBy(() -> journal.verify().client().retriedAfter(dropped(toolCall("echo")))
                    .withSameArguments())
                    .hasMessageContaining("to have the same arguments as the first request,\nbut the params differ")
                    .hasMessageContaining("The first request, the lost message and the retry (3):");
        }
    }

    @Test
    void httpRetryAfterIsJournaledAndAnImpatientClientFailsHonoredRetryAfter() throws Exception {
        String rules = """
                rules:
                  - name: busy
                    match: {kind: request, method: tools/call, tool: echo}
                    times: 1
                    fault: {type: http_status, status: 503, headers: {Retry-After: "30"}}
                """;
        try (RunningHttp proxy = httpProxy(rules); McpSyncClient client = httpClient(proxy, HttpPeers.TIMEOUT)) {
            assertThat(catchThrowable(() -> echo(client, "now"))).as("answered 503").isNotNull();
            assertThat(HttpPeers.text(echo(client, "at once"))).contains("at once"); // did not wait

            Journal journal = proxy.journal();
            JournalEntry refused = clientToolCalls(journal, "echo").get(0);
            assertThat(refused.httpStatus()).isEqualTo(503);
            assertThat(refused.httpHeader("Retry-After")).isEqualTo("30");
            assertThat(refused.delivered()).isFalse();
            assertThat(refused.faults()).extracting(JournalEntry.FaultAction::fault).containsExactly("http_status");
            journal.verify().client().sent(toolCall("echo")).times(2);
            assertThatThrownBy(() -> journal.verify().client().honoredRetryAfter())
                    .hasMessageContaining("Expected the client to wait as Retry-After asked after each of 1 answers")
                    .hasMessageContaining("(HTTP 503, Retry-After: 30; expected: >= 30.000s)")
                    .hasMessageContaining("HTTP 503 Retry-After: 30 http_status(rule 'busy'): answered HTTP 503;");
        }
    }

    @Test
    void httpAClientThatWaitsHonorsRetryAfter() throws Exception {
        String rules = """
                rules:
                  - name: busy
                    match: {kind: request, method: tools/call, tool: echo}
                    times: 1
                    fault: {type: http_status, status: 429, headers: {Retry-After: "1"}}
                """;
        try (RunningHttp proxy = httpProxy(rules); McpSyncClient client = httpClient(proxy, HttpPeers.TIMEOUT)) {
            assertThat(catchThrowable(() -> echo(client, "now"))).as("answered 429").isNotNull();
            Thread.sleep(1200); // as Retry-After asks
            assertThat(HttpPeers.text(echo(client, "later"))).contains("later");

            Journal journal = proxy.journal();
            journal.verify().client().honoredRetryAfter();
            journal.verify().client().sent(toolCall("echo")).times(2);
            assertThat(clientToolCalls(journal, "echo")).extracting(JournalEntry::delivered)
                    .containsExactly(false, true);
        }
    }

    @Test
    void httpSessionExpireThenANewInitializeIsSeen() throws Exception {
        String rules = """
                rules:
                  - name: expire
                    match: {kind: request, method: tools/call, tool: echo}
                    after: 1
                    times: 1
                    fault: {type: session_expire}
                """;
        try (RunningHttp proxy = httpProxy(rules)) {
            // The first client is raw HTTP: the SDK starts a new session by itself after a 404, at a
            // moment of its own, so with it "nobody re-initialized yet" held only when it was late.
            URI mcp = HttpPeers.endpoint(proxy.address());
            HttpResponse<String> init = post(mcp, null, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                    + "\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":"
                    + "{\"name\":\"raw\",\"version\":\"1\"}}}");
            assertThat(init.statusCode()).as(init.body()).isEqualTo(200);
            String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
            assertThat(post(mcp, session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}")
                    .statusCode()).isEqualTo(202);
            HttpResponse<String> one = post(mcp, session, rawEcho(2, "one"));
            assertThat(one.statusCode()).isEqualTo(200);
            assertThat(one.body()).contains("one");
            assertThat(post(mcp, session, rawEcho(3, "two")).statusCode()).as("answered 404").isEqualTo(404);
            Journal journal = proxy.journal();
            // The fault's event is out before its 404 leaves: no waiting for the journal.
            assertThat(clientToolCalls(journal, "echo")).hasSize(2);
            JournalEntry expired = clientToolCalls(journal, "echo").get(1);
            assertThat(expired.httpStatus()).isEqualTo(404);
            assertThat(expired.hadFault("session_expire")).isTrue();
            // Nobody started a new session yet: the verify fails and shows what came after.
            assertThatThrownBy(() -> journal.verify().client().reinitializedAfter("session_expire"))
                    .hasMessageContaining("Expected the client to send initialize again after #" + expired.sequence()
                            + " (hit by session_expire),\nbut it did not.");

            // A request still sent on the dead session is answered 404 by the proxy, not by the server:
            // journaled with its status, no fault (the transport answered it) and never delivered.
            assertThat(post(mcp, session, rawEcho(4, "four")).statusCode()).as("answered 404").isEqualTo(404);
            // Shown to the journal after its 404 was written: it may come a moment later.
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20))
                    .until(() -> clientToolCalls(journal, "echo").size() == 3);
            JournalEntry onDeadSession = clientToolCalls(journal, "echo").get(2);
            assertThat(onDeadSession.httpStatus()).isEqualTo(404);
            assertThat(onDeadSession.faults()).isEmpty();
            assertThat(onDeadSession.delivered()).as(onDeadSession.toString()).isFalse();
            assertThat(onDeadSession.reachedServer()).isFalse();

            try (McpSyncClient again = httpClient(proxy, HttpPeers.TIMEOUT)) {
                assertThat(HttpPeers.text(echo(again, "three"))).contains("three");
            }
            JournalEntry reinit = journal.verify().client().reinitializedAfter("session_expire");
            assertThat(reinit.sequence()).isGreaterThan(expired.sequence());
            journal.verify().client().sent(request("initialize")).times(2);
            journal.verify().client().sent(toolCall("echo")).times(4);
        }
    }

    @Test
    void httpJournalCanBeSwitchedOffAndCleared() throws Exception {
        try (RunningHttp off = McpChaosProxy.http(everything.endpoint()).journal(0).start()) {
            assertThatThrownBy(off::journal).isInstanceOf(IllegalStateException.class)
                    .hasMessage("journal: off (expected: a proxy built without journal(0))");
        }
        try (RunningHttp proxy = McpChaosProxy.http(everything.endpoint()).journal(5).journalContent(true).start();
             McpSyncClient client = httpClient(proxy, HttpPeers.TIMEOUT)) {
            for (int i = 0; i < 4; i++) {
                echo(client, "n" + i);
            }
            var snapshot = proxy.journal().snapshot();
            assertThat(snapshot.entries()).hasSize(5);
            assertThat(snapshot.evicted()).isPositive();
            assertThat(snapshot.entries()).allMatch(e -> e.message() != null && e.message().startsWith("{"));
            assertThatThrownBy(() -> proxy.journal().verify().client().sent(request("initialize")).once())
                    .hasMessageContaining("older entries dropped for capacity 5: counts may be short.");
            proxy.journal().clear();
            assertThat(proxy.journal().entries()).isEmpty();
            echo(client, "after clear");
            proxy.journal().verify().client().sent(toolCall("echo")).once();
        }
    }

    @Test
    void stdioCountsEveryCallAndAnswerAndSeesWhatALatencyHeld() throws Exception {
        String rules = """
                rules:
                  - name: slow-first-echo
                    match: {kind: response, method: tools/call, tool: echo}
                    times: 1
                    fault: {type: latency, latency: 3s}
                """;
        List<String> stderr = new ArrayList<>();
        try (InProcessStdioProxy proxy = InProcessStdioProxy.start(TestPeers.serverEverythingStdioCommand(),
                RuleSet.parse(rules, "journal-it.yaml"), SEED)) {
            try (McpSyncClient client = proxy.sdkClient(Duration.ofSeconds(1), stderr).build()) {
                client.initialize();
                int calls = 0;
                assertThat(catchThrowable(() -> echo(client, "slow"))).as("gave up after 1 s").isNotNull();
                calls++;
                // Answers leave in order: the ones behind the held answer wait for it. The journal says when it left.
                Journal journal = proxy.journal();
                org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() ->
                        journal.filter(e -> e.hadFault("slow-first-echo")).stream().anyMatch(JournalEntry::delivered));
                for (int i = 0; i < 3; i++) {
                    assertThat(HttpPeers.text(echo(client, "fast " + i))).contains("fast " + i);
                    calls++;
                }
                int sent = calls;
                journal.verify().client().sent(toolCall("echo")).times(sent);
                // The held answer left the proxy 3 s after it came (awaited above), and the client has
                // the others: every answer is journaled, delivered, with no waiting for the journal.
                assertThat(journal.filter(e -> e.kind() == MessageKind.RESPONSE && toolCall("echo").test(e)))
                        .hasSize(sent).allMatch(JournalEntry::delivered);
                JournalEntry held = journal.filter(e -> e.hadFault("slow-first-echo")).get(0);
                assertThat(held.faults().get(0).fault()).isEqualTo("latency");
                assertThat(held.session()).isEqualTo("stdio");
                assertThat(held.transport()).isEqualTo("stdio");

                // The SDK gives up on a call without telling the server: no notifications/cancelled.
                journal.verify().client().sent(notification("notifications/cancelled")).never();
                assertThatThrownBy(() -> journal.verify().client().cancelled(toolCall("echo")))
                        .hasMessageContaining("but it sent no notifications/cancelled.")
                        .hasMessageContaining("The requests and the cancellations (" + sent + "):");
            }
        }
    }

    @Test
    void stdioAClientThatCancelsWhatItGaveUpOnPassesCancelled() throws Exception {
        String rules = """
                rules:
                  - name: slow-echo
                    match: {kind: response, method: tools/call, tool: echo}
                    fault: {type: latency, latency: 2s}
                """;
        List<com.fasterxml.jackson.databind.JsonNode> answers = new java.util.concurrent.CopyOnWriteArrayList<>();
        RawJsonRpc.Listener listener = new RawJsonRpc.Listener() {
            @Override
            public void answer(com.fasterxml.jackson.databind.JsonNode message) {
                answers.add(message);
            }

            @Override
            public void ended(long id, boolean answered, String problem) {
            }
        };
        try (RawJsonRpc.Stdio client = new RawJsonRpc.Stdio(TestPeers.serverEverythingStdioCommand(),
                RuleSet.parse(rules, "journal-it.yaml"), SEED, event -> { }, listener)) {
            client.initialize();
            client.send(7, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                    + "\"arguments\":{\"message\":\"never mind\"}}}");
            Journal journal = client.journal();
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() ->
                    !journal.filter(e -> e.hadFault("slow-echo")).isEmpty()); // the server answered; it is held
            client.send(-1, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
                    + "{\"requestId\":7,\"reason\":\"gave up\"}}");
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> answers.size() == 1);

            List<JournalEntry> cancels = journal.verify().client().cancelled(toolCall("echo"));
            assertThat(cancels).singleElement().satisfies(c -> {
                assertThat(c.requestId()).isEqualTo(7L);
                assertThat(c.session()).isEqualTo("stdio");
                assertThat(c.delivered()).isTrue();
            });
            journal.verify().client().sent(toolCall("echo")).once();
            journal.verify().server().sent(toolCall("echo")).once(); // the held answer, delivered in the end
            assertThat(journal.filter(e -> e.hadFault("slow-echo"))).singleElement()
                    .satisfies(e -> assertThat(e.delivered()).isTrue());
            assertThatThrownBy(() -> journal.verify().client().cancelled(toolCall("add")))
                    .hasMessageContaining("but it sent no tools/call of add.");
        }
    }
}
