package dev.mcpchaos.server.control;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.ProxyStartException;
import dev.mcpchaos.server.testing.CatProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Every endpoint of the control API, against a running stdio proxy whose server is {@code cat}. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ControlApiTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String DROP_X = """
            rules:
              - name: drop-x
                match: {direction: client_to_server, tool: x}
                fault: {type: drop}
            """;

    private CatProxy cat;

    @AfterEach
    void close() {
        if (cat != null) {
            cat.close();
        }
    }

    private CatProxy start(String rules, String token) throws Exception {
        cat = CatProxy.withControl(rules, token);
        return cat;
    }

    private static JsonNode json(HttpResponse<String> response) throws Exception {
        return JSON.readTree(response.body());
    }

    @Test
    void healthStatusAndMetricsDescribeTheRun() throws Exception {
        start(DROP_X, null);
        cat.send(CatProxy.call(1, "x"));
        cat.send(CatProxy.call(2, "y"));
        await().until(() -> cat.received.size() == 1);

        assertThat(cat.get("/health").body()).isEqualTo("ok");
        HttpResponse<String> status = cat.get("/status");
        assertThat(status.statusCode()).isEqualTo(200);
        assertThat(status.headers().firstValue("Content-Type")).hasValue("application/json");
        JsonNode s = json(status);
        assertThat(s.path("transport").asText()).isEqualTo("stdio");
        assertThat(s.path("seed").asLong()).isEqualTo(7);
        assertThat(s.path("uptime_seconds").asDouble()).isPositive();
        assertThat(s.path("faults_enabled").asBoolean()).isTrue();
        assertThat(s.path("sessions_active").asLong()).isEqualTo(1);
        assertThat(s.path("messages").path("client_to_server").asLong()).isEqualTo(2);
        assertThat(s.path("messages").path("server_to_client").asLong()).isEqualTo(1);
        assertThat(s.path("faults_injected").asLong()).isEqualTo(1);
        assertThat(s.path("rules").toString()).isEqualTo(
                "[{\"name\":\"drop-x\",\"enabled\":true,\"fault\":\"drop\",\"matched\":1,\"injected\":1}]");
        assertThat(cat.get("/metrics").body()).contains("mcp_chaos_faults_injected_total{fault=\"drop\",rule=\"drop-x\"} 1.0");
    }

    @Test
    void rulesCanBeListedAddedChangedAndRemoved() throws Exception {
        start(null, null);
        assertThat(cat.get("/rules").body()).isEqualTo("{\"rules\":[]}");

        HttpResponse<String> added = cat.request("POST", "/rules",
                "name: drop-x\nmatch: {direction: client_to_server, tool: x}\nfault: {type: drop}\n");
        assertThat(added.statusCode()).isEqualTo(201);
        assertThat(json(added).path("name").asText()).isEqualTo("drop-x");
        cat.send(CatProxy.call(1, "x"));
        // A change applies from the next message the proxy reads: wait until this one was read.
        await().until(() -> json(cat.get("/status")).path("faults_injected").asLong() == 1);

        HttpResponse<String> again = cat.request("POST", "/rules", "{\"name\":\"drop-x\",\"fault\":{\"type\":\"drop\"}}");
        assertThat(again.statusCode()).isEqualTo(409);
        assertThat(json(again).path("error").asText()).contains("rule 'drop-x': a rule with this name exists");

        HttpResponse<String> disabled = cat.request("PATCH", "/rules/drop-x", "{\"enabled\": false}");
        assertThat(disabled.statusCode()).isEqualTo(200);
        assertThat(json(disabled).path("enabled").asBoolean(true)).isFalse();
        assertThat(json(cat.get("/rules/drop-x")).path("enabled").asBoolean(true)).isFalse();
        cat.send(CatProxy.call(2, "x"));
        await().until(() -> cat.received.size() == 1);

        assertThat(cat.request("PATCH", "/rules/drop-x", "enabled: true").statusCode()).isEqualTo(200);
        cat.send(CatProxy.call(3, "x"));
        await().until(() -> json(cat.get("/status")).path("faults_injected").asLong() == 1);

        HttpResponse<String> replaced = cat.request("PUT", "/rules", """
                rules:
                  - name: drop-y
                    match: {direction: client_to_server, tool: y}
                    fault: {type: drop}
                """);
        assertThat(replaced.statusCode()).isEqualTo(200);
        assertThat(json(replaced).path("rules").findValuesAsText("name")).containsExactly("drop-y");
        cat.send(CatProxy.call(4, "x"));
        cat.send(CatProxy.call(5, "y"));
        await().until(() -> json(cat.get("/status")).path("faults_injected").asLong() == 1);

        assertThat(cat.request("DELETE", "/rules/drop-y", null).statusCode()).isEqualTo(204);
        assertThat(cat.get("/rules").body()).isEqualTo("{\"rules\":[]}");
        cat.send(CatProxy.call(6, "y"));
        cat.finish();
        assertThat(cat.received).containsExactly(CatProxy.call(2, "x"), CatProxy.call(4, "x"), CatProxy.call(6, "y"));
    }

    @Test
    void badRequestsAreRefusedWithAReasonAndTheRulesStay() throws Exception {
        start(DROP_X, null);
        String before = cat.get("/rules").body();

        HttpResponse<String> badPatch = cat.request("PATCH", "/rules/drop-x", "{\"probability\": 1.5}");
        assertThat(badPatch.statusCode()).isEqualTo(400);
        assertThat(json(badPatch).path("error").asText())
                .isEqualTo("PATCH /rules/drop-x: rule 'drop-x': probability: 1.5 (expected: a number from 0 to 1, "
                        + "such as 0.3)");
        HttpResponse<String> badPut = cat.request("PUT", "/rules",
                "rules:\n  - name: slow\n    fault: {type: latency, latency: -5ms}\n");
        assertThat(badPut.statusCode()).isEqualTo(400);
        assertThat(json(badPut).path("error").asText()).startsWith("PUT /rules: rule 'slow': fault.latency:");
        HttpResponse<String> httpOnly = cat.request("POST", "/rules",
                "{name: teapot, fault: {type: http_status, status: 418}}");
        assertThat(httpOnly.statusCode()).isEqualTo(400);
        assertThat(json(httpOnly).path("error").asText()).contains("http_status: only applies to the http transport");
        HttpResponse<String> notYaml = cat.request("POST", "/rules", "{name: [");
        assertThat(notYaml.statusCode()).isEqualTo(400);
        assertThat(json(notYaml).path("error").asText()).startsWith("POST /rules: ").contains("not valid YAML/JSON");
        assertThat(cat.request("POST", "/rules", "").statusCode()).isEqualTo(400);

        assertThat(cat.request("PATCH", "/rules/nope", "{enabled: false}").statusCode()).isEqualTo(404);
        HttpResponse<String> deleteUnknown = cat.request("DELETE", "/rules/nope", null);
        assertThat(deleteUnknown.statusCode()).isEqualTo(404);
        assertThat(json(deleteUnknown).path("error").asText()).isEqualTo("rule 'nope': no rule has this name");
        assertThat(cat.get("/rules/nope").statusCode()).isEqualTo(404);
        assertThat(cat.get("/nothing").statusCode()).isEqualTo(404);
        HttpResponse<String> wrongMethod = cat.request("DELETE", "/rules", null);
        assertThat(wrongMethod.statusCode()).isEqualTo(405);
        assertThat(wrongMethod.headers().firstValue("Allow")).hasValue("GET, PUT, POST");
        assertThat(cat.request("GET", "/faults/disable", null).statusCode()).isEqualTo(405);
        assertThat(cat.request("POST", "/status", "").statusCode()).isEqualTo(405);
        assertThat(cat.request("PUT", "/rules", "x".repeat(ControlServer.MAX_BODY_BYTES + 1)).statusCode())
                .isEqualTo(413);
        assertThat(cat.get("/events?since=-1").statusCode()).isEqualTo(400);

        assertThat(cat.get("/rules").body()).isEqualTo(before);
        cat.send(CatProxy.call(1, "x"));
        cat.send(CatProxy.call(2, "y"));
        await().until(() -> cat.received.size() == 1);
        assertThat(cat.received).containsExactly(CatProxy.call(2, "y"));
    }

    @Test
    void thePanicSwitchTurnsEveryFaultOffAndOn() throws Exception {
        start(DROP_X, null);
        HttpResponse<String> off = cat.request("POST", "/faults/disable", "");
        assertThat(off.statusCode()).isEqualTo(200);
        assertThat(off.body()).isEqualTo("{\"faults_enabled\":false,\"changed\":true}");
        assertThat(json(cat.get("/status")).path("faults_enabled").asBoolean(true)).isFalse();
        cat.send(CatProxy.call(1, "x"));
        await().until(() -> cat.received.size() == 1);

        assertThat(cat.request("POST", "/faults/enable", "").body()).isEqualTo("{\"faults_enabled\":true,\"changed\":true}");
        assertThat(cat.request("POST", "/faults/enable", "").body()).isEqualTo("{\"faults_enabled\":true,\"changed\":false}");
        cat.send(CatProxy.call(2, "x"));
        cat.send(CatProxy.call(3, "y"));
        await().until(() -> cat.received.size() == 2);
        assertThat(cat.received).containsExactly(CatProxy.call(1, "x"), CatProxy.call(3, "y"));
    }

    @Test
    void eventsArePagedBySequenceNumber() throws Exception {
        start(DROP_X, null);
        cat.send(CatProxy.call(1, "x"));
        cat.send(CatProxy.call(2, "x"));
        await().until(() -> json(cat.get("/status")).path("faults_injected").asLong() == 2);
        cat.request("POST", "/faults/disable", "");

        JsonNode all = json(cat.get("/events"));
        assertThat(all.path("missed").asLong()).isZero();
        assertThat(all.path("events").findValuesAsText("event"))
                .containsExactly("session_started", "fault", "fault", "rules_changed");
        assertThat(all.path("events").get(3).path("cause").asText()).isEqualTo("POST /faults/disable");
        assertThat(all.path("events").get(3).path("faults_enabled").asBoolean(true)).isFalse();
        assertThat(all.path("last").asLong()).isEqualTo(4);

        JsonNode page = json(cat.get("/events?since=1&limit=2"));
        assertThat(page.path("events").findValuesAsText("seq")).containsExactly("2", "3");
        assertThat(page.path("last").asLong()).isEqualTo(3);
        JsonNode none = json(cat.get("/events?since=4"));
        assertThat(none.path("events").size()).isZero();
        assertThat(none.path("last").asLong()).isEqualTo(4);
    }

    @Test
    void theJournalIsServedAfterASequenceNumberAndCleared() throws Exception {
        start(DROP_X, "t0ken-sEcret");
        cat.send(CatProxy.call(1, "x"));
        cat.send(CatProxy.call(2, "y"));
        await().until(() -> cat.received.size() == 1); // cat echoes y; x was dropped
        String auth = "Bearer t0ken-sEcret";
        assertThat(cat.request("GET", "/journal", null).statusCode()).isEqualTo(401);

        HttpResponse<String> all = cat.request("GET", "/journal", null, "Authorization", auth);
        assertThat(all.statusCode()).isEqualTo(200);
        assertThat(all.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t)
                .startsWith("application/json"));
        dev.mcpchaos.rules.journal.JournalSnapshot snapshot = dev.mcpchaos.rules.journal.JournalJson.read(all.body());
        assertThat(snapshot.capacity()).isEqualTo(dev.mcpchaos.rules.journal.JournalRing.DEFAULT_CAPACITY);
        // x (dropped), y, and cat's echo of y, which the journal sees as the server's request
        assertThat(snapshot.entries()).extracting(e -> e.direction().arrow() + " " + e.tool() + " " + e.delivered())
                .containsExactly("c->s x false", "c->s y true", "s->c y true");
        assertThat(snapshot.entries().get(0).faults()).extracting(f -> f.rule() + "/" + f.fault())
                .containsExactly("drop-x/drop");
        snapshot.verify().client().sent(dev.mcpchaos.rules.journal.Messages.toolCall("*")).times(2);
        assertThat(json(cat.request("GET", "/journal?since=2", null, "Authorization", auth)).path("entries")
                .findValuesAsText("seq")).containsExactly("3");
        assertThat(cat.request("GET", "/journal?since=-1", null, "Authorization", auth).statusCode()).isEqualTo(400);
        assertThat(cat.request("POST", "/journal", "", "Authorization", auth).statusCode()).isEqualTo(405);

        assertThat(cat.request("DELETE", "/journal", null, "Authorization", auth).statusCode()).isEqualTo(204);
        JsonNode cleared = json(cat.request("GET", "/journal", null, "Authorization", auth));
        assertThat(cleared.path("entries").size()).isZero();
        assertThat(cleared.path("next").asLong()).isEqualTo(4);
    }

    @Test
    void aProxyWithoutAJournalAnswers404() throws Exception {
        cat = new CatProxy(b -> b.control(new InetSocketAddress("127.0.0.1", 0)).journal(0));
        HttpResponse<String> none = cat.get("/journal");
        assertThat(none.statusCode()).isEqualTo(404);
        assertThat(json(none).path("error").asText()).isEqualTo("/journal: this proxy keeps no journal (it was turned off)");
    }

    @Test
    void aTokenIsAskedOfEveryRequestButHealthAndRefusalsAreLogged() throws Exception {
        Logger controlLog = (Logger) LoggerFactory.getLogger(ControlServer.class);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        controlLog.addAppender(logged);
        try {
            start(DROP_X, "t0ken-sEcret");
            assertThat(cat.get("/health").statusCode()).isEqualTo(200);
            HttpResponse<String> none = cat.get("/rules");
            assertThat(none.statusCode()).isEqualTo(401);
            assertThat(none.headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"mcp-chaos\"");
            HttpResponse<String> wrong = cat.request("DELETE", "/rules/drop-x", null,
                    "Authorization", "Bearer guess-w0rk");
            assertThat(wrong.statusCode()).isEqualTo(401);
            assertThat(cat.request("GET", "/metrics", null, "Authorization", "Basic dXNlcjpwYXNz").statusCode())
                    .isEqualTo(401);
            assertThat(cat.get("/rules/drop-x").statusCode()).isEqualTo(401);
            HttpResponse<String> right = cat.request("GET", "/rules", null, "Authorization", "Bearer t0ken-sEcret");
            assertThat(right.statusCode()).isEqualTo(200);
            assertThat(right.body()).contains("drop-x");

            List<String> lines = logged.list.stream().map(ILoggingEvent::getFormattedMessage)
                    .filter(m -> m.startsWith("control request refused")).toList();
            assertThat(lines).hasSize(4);
            assertThat(lines.get(1)).isEqualTo("control request refused: DELETE /rules/drop-x from 127.0.0.1: "
                    + "a wrong bearer token");
            assertThat(String.join("\n", lines)).doesNotContain("guess-w0rk").doesNotContain("t0ken-sEcret")
                    .doesNotContain("dXNlcjpwYXNz");
        } finally {
            controlLog.detachAppender(logged);
        }
    }

    @Test
    void headHealthNeedsNoTokenAsGetHealthDoes() throws Exception {
        start(DROP_X, "t0ken-sEcret");
        HttpResponse<String> head = cat.request("HEAD", "/health", null);
        assertThat(head.statusCode()).isEqualTo(200);
        assertThat(head.body()).isEmpty();
        assertThat(head.headers().firstValue("Content-Length")).hasValue("2"); // as long as GET's "ok"
        assertThat(cat.get("/health").body()).isEqualTo("ok");
        // Only /health: HEAD of anything else still needs the token.
        assertThat(cat.request("HEAD", "/status", null).statusCode()).isEqualTo(401);
        assertThat(cat.request("HEAD", "/status", null, "Authorization", "Bearer t0ken-sEcret").statusCode())
                .isEqualTo(200);
    }

    @Test
    void aBodyThatIsNotUtf8IsRefusedAndTheRulesStay() throws Exception {
        start(DROP_X, null);
        String before = cat.get("/rules").body();
        byte[] latin1 = "rules:\n  - name: caf\u00e9\n    fault: {type: drop}\n".getBytes(StandardCharsets.ISO_8859_1);
        HttpResponse<String> refused = cat.requestBytes("PUT", "/rules", latin1);
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(json(refused).path("error").asText())
                .isEqualTo("PUT /rules: the body is not valid UTF-8 (at byte 20 of 46: 0xe9; expected: UTF-8 text, "
                        + "YAML or JSON)");
        byte[] latin1Rule = "{name: caf\u00e9, fault: {type: drop}}".getBytes(StandardCharsets.ISO_8859_1);
        assertThat(cat.requestBytes("POST", "/rules", latin1Rule).statusCode()).isEqualTo(400);
        byte[] truncated = Arrays.copyOf("{enabled: false, x: \"\u00e9\"}".getBytes(StandardCharsets.UTF_8), 22);
        assertThat(cat.requestBytes("PATCH", "/rules/drop-x", truncated).statusCode()).isEqualTo(400);
        assertThat(cat.get("/rules").body()).isEqualTo(before);

        // The twin: the same file in UTF-8, with names beyond ASCII, is taken as written.
        byte[] utf8 = "rules:\n  - name: caf\u00e9-\u6f22\u5b57-\ud83d\udca5\n    fault: {type: drop}\n"
                .getBytes(StandardCharsets.UTF_8);
        HttpResponse<String> taken = cat.requestBytes("PUT", "/rules", utf8);
        assertThat(taken.statusCode()).isEqualTo(200);
        assertThat(json(taken).path("rules").findValuesAsText("name")).containsExactly("caf\u00e9-\u6f22\u5b57-\ud83d\udca5");
        assertThat(json(cat.get("/status")).path("rules").get(0).path("name").asText())
                .isEqualTo("caf\u00e9-\u6f22\u5b57-\ud83d\udca5");
    }

    @Test
    void yamlAliasesInABodyAreRefusedWithTheirPlace() throws Exception {
        start(DROP_X, null);
        String before = cat.get("/rules").body();
        String aliased = """
                rules:
                  - name: slow-a
                    fault: {type: latency, latency: &slow 2s}
                  - name: slow-b
                    fault: {type: latency, latency: *slow}
                """;
        HttpResponse<String> refused = cat.request("PUT", "/rules", aliased);
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(json(refused).path("error").asText()).isEqualTo("PUT /rules: line 3, column 37: YAML anchor "
                + "'&slow' (expected: no anchors or aliases; write the value out where it is used)");
        HttpResponse<String> alias = cat.request("POST", "/rules", "name: b\nfault: {type: latency, latency: *slow}\n");
        assertThat(alias.statusCode()).isEqualTo(400);
        assertThat(json(alias).path("error").asText()).startsWith("POST /rules: line 2, column 33: YAML alias '*slow'");
        assertThat(cat.get("/rules").body()).isEqualTo(before);

        // The twin: written out, the same rules are taken.
        HttpResponse<String> taken = cat.request("PUT", "/rules", aliased.replace("&slow ", "").replace("*slow", "2s"));
        assertThat(taken.statusCode()).isEqualTo(200);
        assertThat(json(taken).path("rules").findValuesAsText("latency")).containsExactly("2s", "2s");
    }

    @Test
    void beyondLoopbackTheControlApiNeedsAToken() {
        assertThatThrownBy(() -> McpChaosProxy.stdio(List.of("cat"))
                .control(new InetSocketAddress("0.0.0.0", 0)).start())
                .isInstanceOf(ProxyStartException.class)
                .hasCauseInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is not loopback, so the control API needs a token");
    }

    @Test
    void concurrentChangesUnderTrafficLoseAndDoubleNothingTheRulesDidNot() throws Exception {
        start(null, null);
        String drop = "{name: drop-victim, match: {direction: client_to_server, tool: victim}, fault: {type: drop}}";
        String dup = "{name: dup-victim, match: {direction: client_to_server, tool: victim}, fault: {type: duplicate}}";
        List<Thread> changers = List.of(
                changer(() -> {
                    cat.request("POST", "/rules", drop);
                    cat.request("DELETE", "/rules/drop-victim", null);
                }),
                changer(() -> {
                    cat.request("POST", "/rules", dup);
                    cat.request("PATCH", "/rules/dup-victim", "{enabled: false}");
                    cat.request("DELETE", "/rules/dup-victim", null);
                }),
                changer(() -> {
                    cat.request("POST", "/faults/disable", "");
                    cat.request("POST", "/faults/enable", "");
                }));
        changers.forEach(Thread::start);
        int messages = 0;
        while (changers.stream().anyMatch(Thread::isAlive) && messages < 40_000) {
            cat.send(CatProxy.call(messages, messages % 2 == 0 ? "keep" : "victim"));
            if (++messages % 50 == 0) {
                Thread.sleep(2); // traffic in bursts, while the changes go on
            }
        }
        if (messages % 2 == 1) {
            cat.send(CatProxy.call(messages++, "victim"));
        }
        for (Thread changer : changers) {
            changer.join();
        }
        cat.finish();

        List<String> keep = cat.received.stream().filter(l -> l.contains("\"keep\"")).toList();
        assertThat(keep).hasSize(messages / 2);
        for (int i = 0; i < keep.size(); i++) {
            assertThat(keep.get(i)).isEqualTo(CatProxy.call(2L * i, "keep"));
        }
        long victims = cat.received.stream().filter(l -> l.contains("\"victim\"")).count();
        long dropped = cat.faultsByType.getOrDefault("drop", new java.util.concurrent.atomic.AtomicLong()).get();
        long doubled = cat.faultsByType.getOrDefault("duplicate", new java.util.concurrent.atomic.AtomicLong()).get();
        assertThat(victims).isEqualTo(messages / 2 - dropped + doubled);
        assertThat(dropped).isPositive();
        assertThat(doubled).isPositive();
    }

    /** A thread that makes a change 30 times over. */
    private static Thread changer(Runnable change) {
        return new Thread(() -> {
            for (int i = 0; i < 30; i++) {
                change.run();
            }
        });
    }
}
