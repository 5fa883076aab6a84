package dev.mcpchaos.server.check;

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
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The client.* checks live: the HTTP proxy with its referee and journal in front of the demo
 * HTTP server, a rule losing or refusing one call, and a client written here (java.net.http) that
 * behaves or does not. Every answer the client should get is asserted as it comes; the report is
 * read once the proxy closed.
 */
@Timeout(60)
class ClientChecksLiveTest {

    private static final String S = "{\"jsonrpc\":\"2.0\",";
    private static final String ADD = "\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}}";
    private static final String LIST = "\"method\":\"tools/list\"}";

    private final McpPosts posts = new McpPosts();

    /** The report of a proxy with {@code rules} after {@code client} talked to it. */
    private Referee.Report run(String rules, Client client) throws Exception {
        Referee referee = new Referee();
        try (McpHttpHost upstream = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0))) {
            HttpProxyBuilder builder = McpChaosProxy.http(upstream.endpoint()).seed(7);
            if (rules != null) {
                builder.rules(RuleSet.parse(rules, "client-checks.yaml"));
            }
            builder.check(referee);
            try (HttpProxyBuilder.RunningHttp proxy = builder.start()) {
                client.talk(URI.create("http://127.0.0.1:" + proxy.address().getPort() + McpHttpHost.PATH));
            }
        }
        return referee.report();
    }

    private interface Client {
        void talk(URI mcp) throws Exception;
    }

    @Test
    void aClientThatRetriesALostCallWithTheSameArgumentsIsWarnedOfAPossibleDuplicateWrite() throws Exception {
        String dropFirstAnswer = """
                rules:
                  - name: lose-answer
                    match: {kind: response, method: tools/call, tool: add}
                    times: 1
                    fault: {type: drop}
                """;
        Referee.Report retried = run(dropFirstAnswer, mcp -> {
            String session = initialize(mcp);
            assertThatThrownBy(() -> post(mcp, session, S + "\"id\":2," + ADD, Duration.ofMillis(1500)))
                    .isInstanceOf(HttpTimeoutException.class); // the answer was dropped
            HttpResponse<String> again = post(mcp, session, S + "\"id\":3," + ADD, Duration.ofSeconds(20));
            assertThat(again.body()).contains("\"id\":3", "\"result\"", "3");
        });
        assertThat(retried.firedIds()).containsExactly("client.duplicate-call");
        Violation v = retried.violations().get(Check.DUPLICATE_CALL).get(0);
        assertThat(v.id()).isEqualTo(3L);
        assertThat(v.detail()).contains("tools/call of 'add' sent again with the same arguments",
                "which reached the server and had no answer delivered");

        // Twin: nothing lost, the same call twice, each answered: a new request, not a retry.
        Referee.Report twice = run(null, mcp -> {
            String session = initialize(mcp);
            for (int id = 2; id <= 3; id++) {
                assertThat(post(mcp, session, S + "\"id\":" + id + "," + ADD, Duration.ofSeconds(20)).body())
                        .contains("\"id\":" + id, "\"result\"");
            }
        });
        assertThat(twice.firedIds()).isEmpty();
        assertThat(twice.messages()).as("initialize, initialized, two calls, three answers").isEqualTo(7);
    }

    /** A call of add under this idempotency key. */
    private static String keyedAdd(int id, String key) {
        return S + "\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":"
                + "{\"a\":1,\"b\":2,\"request_id\":\"" + key + "\"}}}";
    }

    @Test
    void aClientThatResendsALostWriteUnderAFreshIdempotencyKeyIsWarnedAndASafeRetryIsNot() throws Exception {
        String dropFirstAnswer = """
                rules:
                  - name: lose-answer
                    match: {kind: response, method: tools/call, tool: add}
                    times: 1
                    fault: {type: drop}
                """;
        Referee.Report resent = run(dropFirstAnswer, mcp -> {
            String session = initialize(mcp);
            assertThatThrownBy(() -> post(mcp, session, keyedAdd(2, "key-1"), Duration.ofMillis(1500)))
                    .isInstanceOf(HttpTimeoutException.class); // the server ran it; its answer was dropped
            assertThat(post(mcp, session, keyedAdd(3, "key-2"), Duration.ofSeconds(20)).body())
                    .contains("\"id\":3", "\"result\"");
        });
        assertThat(resent.firedIds()).containsExactly("client.duplicate-call");
        assertThat(resent.violations().get(Check.DUPLICATE_CALL).get(0).detail())
                .contains("tools/call of 'add' sent again with the same arguments under a new idempotency key");

        // Twin: the first copy was dropped before the server: sending it again, under any key, is safe.
        String dropFirstRequest = """
                rules:
                  - name: lose-request
                    match: {kind: request, method: tools/call, tool: add}
                    times: 1
                    fault: {type: drop}
                """;
        Referee.Report safe = run(dropFirstRequest, mcp -> {
            String session = initialize(mcp);
            assertThatThrownBy(() -> post(mcp, session, keyedAdd(2, "key-1"), Duration.ofMillis(1500)))
                    .isInstanceOf(HttpTimeoutException.class);
            assertThat(post(mcp, session, keyedAdd(3, "key-2"), Duration.ofSeconds(20)).body())
                    .contains("\"id\":3", "\"result\"");
        });
        // The dropped request never reached the server: it owes it nothing, and the resend is no duplicate.
        assertThat(safe.firedIds()).isEmpty();
        assertThat(safe.keptFromReceiver()).isEqualTo(1);
        assertThat(safe.count(Check.DUPLICATE_CALL)).isZero();
    }

    @Test
    void aClientThatGoesOnWithAnExpiredSessionIsAnErrorAndOneThatReinitializesIsClean() throws Exception {
        String expire = """
                rules:
                  - name: expire
                    match: {kind: request, method: tools/call, tool: add}
                    times: 1
                    fault: {type: session_expire}
                """;
        Referee.Report stubborn = run(expire, mcp -> {
            String session = initialize(mcp);
            assertThat(post(mcp, session, S + "\"id\":2," + ADD, Duration.ofSeconds(20)).statusCode()).isEqualTo(404);
            post(mcp, session, S + "\"id\":3," + LIST, Duration.ofSeconds(20)); // the old session again
        });
        assertThat(stubborn.firedIds()).contains("client.no-reinitialize");
        assertThat(stubborn.failsAt(Severity.ERROR)).isTrue();
        assertThat(stubborn.violations().get(Check.NO_REINITIALIZE).get(0).detail())
                .contains("was answered HTTP 404 for session", "then the client sent tools/list");

        Referee.Report renewed = run(expire, mcp -> {
            String session = initialize(mcp);
            assertThat(post(mcp, session, S + "\"id\":2," + ADD, Duration.ofSeconds(20)).statusCode()).isEqualTo(404);
            String fresh = initialize(mcp);
            assertThat(fresh).isNotEqualTo(session);
            assertThat(post(mcp, fresh, S + "\"id\":3," + LIST, Duration.ofSeconds(20)).body()).contains("\"tools\"");
        });
        assertThat(renewed.firedIds()).doesNotContain("client.no-reinitialize");
        assertThat(renewed.failsAt(Severity.ERROR)).as(renewed.all().toString()).isFalse();
    }

    @Test
    void aClientThatRetriesBeforeRetryAfterIsWarnedAndOneThatWaitsIsNot() throws Exception {
        String busy = """
                rules:
                  - name: busy
                    match: {kind: request, method: tools/call, tool: add}
                    times: 1
                    fault: {type: http_status, status: 503, headers: {Retry-After: "1"}}
                """;
        Referee.Report impatient = run(busy, mcp -> {
            String session = initialize(mcp);
            assertThat(post(mcp, session, S + "\"id\":2," + ADD, Duration.ofSeconds(20)).statusCode()).isEqualTo(503);
            assertThat(post(mcp, session, S + "\"id\":3," + ADD, Duration.ofSeconds(20)).body()).contains("\"result\"");
        });
        assertThat(impatient.firedIds()).containsExactly("client.retry-after-ignored");

        Referee.Report patient = run(busy, mcp -> {
            String session = initialize(mcp);
            assertThat(post(mcp, session, S + "\"id\":2," + ADD, Duration.ofSeconds(20)).statusCode()).isEqualTo(503);
            Thread.sleep(1100); // as Retry-After asks
            assertThat(post(mcp, session, S + "\"id\":3," + ADD, Duration.ofSeconds(20)).body()).contains("\"result\"");
        });
        assertThat(patient.firedIds()).isEmpty();
    }

    private String initialize(URI mcp) throws IOException, InterruptedException {
        HttpResponse<String> init = post(mcp, null, S + "\"id\":1,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"client-checks\",\"version\":\"1\"}}}", Duration.ofSeconds(20));
        assertThat(init.statusCode()).isEqualTo(200);
        String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
        HttpResponse<String> initialized = post(mcp, session, S + "\"method\":\"notifications/initialized\"}",
                Duration.ofSeconds(20));
        assertThat(initialized.statusCode()).isEqualTo(202);
        return session;
    }

    private HttpResponse<String> post(URI uri, String session, String body, Duration timeout)
            throws IOException, InterruptedException {
        return posts.post(uri, session, body, timeout);
    }
}
