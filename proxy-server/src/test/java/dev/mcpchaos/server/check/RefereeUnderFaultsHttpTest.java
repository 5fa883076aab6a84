package dev.mcpchaos.server.check;

import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.demo.DemoHttpServer;
import dev.mcpchaos.server.host.McpHttpHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The referee under faults, live over Streamable HTTP (issue #33): the HTTP proxy with its referee
 * in front of the demo HTTP server, and a client written here (java.net.http) that asserts what it
 * gets. Each case has its twin, where a peer really misbehaves under the same fault and is caught.
 */
@Timeout(90)
class RefereeUnderFaultsHttpTest {

    private static final String S = "{\"jsonrpc\":\"2.0\",";
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private record Run(Referee.Report report, List<FaultEvent> events) {
    }

    private interface Conversation {
        void talk(URI mcp) throws Exception;
    }

    private Run run(String rules, Conversation conversation) throws Exception {
        Referee referee = new Referee();
        List<FaultEvent> events = new CopyOnWriteArrayList<>();
        try (McpHttpHost upstream = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0))) {
            HttpProxyBuilder builder = McpChaosProxy.http(upstream.endpoint()).seed(11).faultListener(events::add)
                    .check(referee);
            if (rules != null) {
                builder.rules(RuleSet.parse(rules, "faults.yaml"));
            }
            try (HttpProxyBuilder.RunningHttp proxy = builder.start()) {
                conversation.talk(URI.create("http://127.0.0.1:" + proxy.address().getPort() + McpHttpHost.PATH));
            }
        }
        return new Run(referee.report(), events);
    }

    private HttpResponse<String> post(URI mcp, Map<String, String> headers, String body, Duration timeout)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(mcp).timeout(timeout)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        headers.forEach(request::header);
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Initializes a session asking for 2025-06-18; returns the session id and the version the client got. */
    private String[] initialize(URI mcp) throws IOException, InterruptedException {
        HttpResponse<String> init = post(mcp, Map.of(), S + "\"id\":1,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"faults\",\"version\":\"1\"}}}", Duration.ofSeconds(20));
        assertThat(init.statusCode()).isEqualTo(200);
        String version = init.body().replaceAll("(?s).*\"protocolVersion\":\"([^\"]*)\".*", "$1");
        return new String[] {init.headers().firstValue("Mcp-Session-Id").orElseThrow(), version};
    }

    /** A session initialized on 2025-06-18 and told so: the headers its next messages carry. */
    private Map<String, String> open(URI mcp) throws IOException, InterruptedException {
        String session = initialize(mcp)[0];
        Map<String, String> h = Map.of("Mcp-Session-Id", session, "MCP-Protocol-Version", "2025-06-18");
        assertThat(post(mcp, h, S + "\"method\":\"notifications/initialized\"}", Duration.ofSeconds(20))
                .statusCode()).isEqualTo(202);
        return h;
    }

    private static String echo(int id, String text) {
        return S + "\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{"
                + "\"text\":\"" + text + "\"}}}";
    }

    private static String slow(int id, int ms, boolean progress) {
        return S + "\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{"
                + (progress ? "\"_meta\":{\"progressToken\":\"p" + id + "\"}," : "")
                + "\"name\":\"slow\",\"arguments\":{\"ms\":" + ms + "}}}";
    }

    private static String cancel(int id) {
        return S + "\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":" + id + "}}";
    }

    @Test
    void injectedErrorsAreNoUnansweredRequestsOverHttp() throws Exception {
        String rules = """
                rules:
                  - name: flaky
                    match: {kind: request, method: tools/call, tool: echo}
                    probability: 0.5
                    fault: {type: error}
                """;
        int[] answered = new int[1];
        Run run = run(rules, mcp -> {
            Map<String, String> h = open(mcp);
            for (int id = 2; id < 22; id++) {
                String body = post(mcp, h, echo(id, "m" + id), Duration.ofSeconds(20)).body();
                assertThat(body).contains("\"id\":" + id);
                answered[0]++;
            }
        });
        assertThat(answered[0]).isEqualTo(20);
        assertThat(run.events().size()).isBetween(3, 17);
        assertThat(run.report().firedIds()).as(run.report().all().toString()).isEmpty();
        assertThat(run.report().keptFromReceiver()).isEqualTo(run.events().size());
    }

    @Test
    void aCancelThatQueuedBehindAHeldRequestIsTheFaultsAndOneSentAfterItReachedTheServerIsNot() throws Exception {
        String hold = """
                rules:
                  - name: hold
                    match: {kind: request, method: tools/call}
                    fault: {type: latency, latency: 700ms}
                """;
        // The client gives up at 250 ms and cancels while the rule still holds the call: the cancel
        // queues behind it, and the server (which answers echo at once) gets both together.
        Run queued = run(hold, mcp -> {
            Map<String, String> h = open(mcp);
            CompletableFuture<HttpResponse<String>> call = CompletableFuture.supplyAsync(() -> {
                try {
                    return post(mcp, h, echo(2, "late"), Duration.ofSeconds(20));
                } catch (IOException | InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(250);
            assertThat(post(mcp, h, cancel(2), Duration.ofSeconds(20)).statusCode()).isEqualTo(202);
            assertThat(call.get(20, TimeUnit.SECONDS).body()).contains("\"id\":2", "late");
        });
        assertThat(queued.report().firedIds()).as(queued.report().all().toString()).isEmpty();
        assertThat(queued.report().byFaults()).hasSize(1);
        assertThat(queued.report().byFaults().get(0).violation().check()).isEqualTo(Check.CANCELLED_ANSWERED);
        assertThat(queued.report().byFaults().get(0).rule()).isEqualTo("'hold' (latency)");

        // Twin, the same fault: the cancel goes once the call reached the server, which goes on with
        // its 1.2 s of work and answers anyway (the demo server ignores cancels): the server's warning.
        Run ignored = run(hold, mcp -> {
            Map<String, String> h = open(mcp);
            CompletableFuture<HttpResponse<String>> call = CompletableFuture.supplyAsync(() -> {
                try {
                    return post(mcp, h, slow(2, 1200, false), Duration.ofSeconds(20));
                } catch (IOException | InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(1100); // past the 700 ms hold: the call is with the server
            assertThat(post(mcp, h, cancel(2), Duration.ofSeconds(20)).statusCode()).isEqualTo(202);
            assertThat(call.get(20, TimeUnit.SECONDS).body()).contains("\"id\":2");
        });
        assertThat(ignored.report().firedIds()).containsExactly("jsonrpc.cancelled-answered");
        assertThat(ignored.report().byFaults()).isEmpty();
    }

    @Test
    void anAnswerReplayedOnAResumedStreamIsNoSecondAnswer() throws Exception {
        String lose = """
                rules:
                  - name: lose
                    match: {kind: response, method: tools/call, tool: slow}
                    times: 1
                    fault: {type: drop}
                """;
        Run run = run(lose, mcp -> {
            Map<String, String> h = open(mcp);
            HttpResponse<String> streamed = post(mcp, h, slow(2, 200, true), Duration.ofSeconds(20));
            assertThat(streamed.headers().firstValue("Content-Type")).hasValueSatisfying(t ->
                    assertThat(t).startsWith("text/event-stream"));
            assertThat(streamed.body()).as("the answer was dropped").doesNotContain("\"result\"")
                    .contains("notifications/progress");
            String lastEventId = null;
            for (String line : streamed.body().split("\n")) {
                if (line.startsWith("id:")) {
                    lastEventId = line.substring(3).trim();
                }
            }
            assertThat(lastEventId).as("the progress events carry ids").isNotNull();
            // Resume: the server replays what came after the last event the client saw, the answer.
            HttpRequest get = HttpRequest.newBuilder(mcp).timeout(Duration.ofSeconds(20)).GET()
                    .header("Accept", "text/event-stream").header("Mcp-Session-Id", h.get("Mcp-Session-Id"))
                    .header("MCP-Protocol-Version", "2025-06-18").header("Last-Event-ID", lastEventId).build();
            HttpResponse<Stream<String>> resumed = http.send(get, HttpResponse.BodyHandlers.ofLines());
            assertThat(resumed.statusCode()).isEqualTo(200);
            List<String> seen = new ArrayList<>();
            try (Stream<String> lines = resumed.body()) {
                Iterator<String> it = lines.iterator();
                while (it.hasNext()) {
                    String line = it.next();
                    seen.add(line);
                    if (line.contains("\"id\":2") && line.contains("\"result\"")) {
                        break;
                    }
                }
            }
            assertThat(seen).anyMatch(line -> line.contains("\"id\":2") && line.contains("\"result\""));
        });
        assertThat(run.events()).hasSize(1);
        assertThat(run.report().firedIds()).as(run.report().all().toString()).isEmpty();
        assertThat(run.report().replayed()).isEqualTo(1);
    }

    @Test
    void aMadeUpVersionThatReachedTheClientJudgesTheClientNotTheServer() throws Exception {
        String madeUp = """
                rules:
                  - name: drift
                    match: {kind: response, method: initialize}
                    fault: {type: mutate, patch: [{op: replace, path: /result/protocolVersion, value: "2024-13-45"}]}
                """;
        // The client refuses it: it asks nothing more. Nobody is charged.
        Run refused = run(madeUp, mcp -> assertThat(initialize(mcp)[1]).isEqualTo("2024-13-45"));
        assertThat(refused.events()).hasSize(1);
        assertThat(refused.report().firedIds()).as(refused.report().all().toString()).isEmpty();

        // Twin: the client goes on as if nothing happened: its warning, still not the server's error.
        Run accepted = run(madeUp, mcp -> {
            String[] init = initialize(mcp);
            Map<String, String> h = Map.of("Mcp-Session-Id", init[0], "MCP-Protocol-Version", init[1]);
            post(mcp, h, S + "\"method\":\"notifications/initialized\"}", Duration.ofSeconds(20));
        });
        assertThat(accepted.report().firedIds()).containsExactly("lifecycle.unsupported-version-accepted");
    }

    @Test
    void aClientThatIgnoresTheVersionItGotIsCaughtAndOneThatSpeaksItIsNot() throws Exception {
        String older = """
                rules:
                  - name: older
                    match: {kind: response, method: initialize}
                    fault: {type: mutate, patch: [{op: replace, path: /result/protocolVersion, value: "2025-03-26"}]}
                """;
        Run speaks = run(older, mcp -> {
            String[] init = initialize(mcp);
            assertThat(init[1]).isEqualTo("2025-03-26");
            Map<String, String> h = Map.of("Mcp-Session-Id", init[0], "MCP-Protocol-Version", init[1]);
            post(mcp, h, S + "\"method\":\"notifications/initialized\"}", Duration.ofSeconds(20));
            assertThat(post(mcp, h, echo(2, "hi"), Duration.ofSeconds(20)).body()).contains("hi");
        });
        assertThat(speaks.report().firedIds()).as(speaks.report().all().toString()).isEmpty();

        Run ignores = run(older, mcp -> {
            String[] init = initialize(mcp);
            Map<String, String> h = Map.of("Mcp-Session-Id", init[0], "MCP-Protocol-Version", "2025-06-18");
            post(mcp, h, S + "\"method\":\"notifications/initialized\"}", Duration.ofSeconds(20));
            assertThat(post(mcp, h, echo(2, "hi"), Duration.ofSeconds(20)).body()).contains("hi");
        });
        assertThat(ignores.report().firedIds()).containsExactly("http.negotiated-version-header");
        assertThat(ignores.report().count(Check.NEGOTIATED_VERSION_HEADER)).isEqualTo(2);
    }
}
