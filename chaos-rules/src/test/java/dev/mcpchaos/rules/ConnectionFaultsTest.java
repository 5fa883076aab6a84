package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.fault.HttpFaultActions;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/** Faults that act on the connection or the HTTP exchange rather than the message. */
class ConnectionFaultsTest {

    private static ChainHarness harness(String fault) {
        return ChainHarness.of("rules:\n  - name: r\n    match: {method: ping}\n    fault: " + fault + "\n", 1);
    }

    @Test
    void disconnectClosesTheChosenSideAtThisMessage() {
        try (ChainHarness h = harness("{type: disconnect, side: client}")) {
            h.fromClient(Msg.request(1, "ping"));
            assertThat(h.connectionActions).containsExactly("closeClientSide");
            assertThat(h.toServer()).isEmpty();
            assertThat(h.events.get(0).detail()).isEqualTo("closed the client's side");
        }
        try (ChainHarness h = harness("{type: disconnect}")) {
            h.fromClient(Msg.request(1, "ping"));
            assertThat(h.connectionActions).containsExactly("closeServerSide");
        }
    }

    @Test
    void crashKillsOrTerminatesTheServer() {
        try (ChainHarness h = harness("{type: crash}")) {
            h.fromClient(Msg.request(1, "ping"));
            assertThat(h.connectionActions).containsExactly("killServer");
            assertThat(h.toServer()).isEmpty();
            assertThat(h.events.get(0).detail()).isEqualTo("sent SIGKILL to the server");
        }
        try (ChainHarness h = harness("{type: crash, signal: TERM}")) {
            h.fromClient(Msg.request(1, "ping"));
            assertThat(h.connectionActions).containsExactly("terminateServer");
        }
    }

    @Test
    void httpFaultsUseTheTransportsActions() {
        List<String> actions = new ArrayList<>();
        HttpFaultActions http = new HttpFaultActions() {
            @Override
            public boolean respond(InterceptorContext ctx, Frame frame, int status, Map<String, String> headers,
                                   String body) {
                actions.add("respond " + status + " " + new TreeMap<>(headers) + " " + body + " to "
                        + frame.envelope().id());
                return true;
            }

            @Override
            public boolean overrideContentType(InterceptorContext ctx, Frame frame, String contentType) {
                actions.add("content-type " + contentType);
                return true;
            }

            @Override
            public boolean expireSession(InterceptorContext ctx, Frame frame) {
                actions.add("expire " + ctx.session().id());
                return true;
            }
        };
        String yaml = "rules:\n"
                + "  - {name: busy, match: {id: 1}, fault: {type: http_status, status: 503, headers: {Retry-After: '5'},"
                + " body: busy}}\n"
                + "  - {name: html, match: {id: 2, kind: response}, fault: {type: invalid_content_type}}\n"
                + "  - {name: gone, match: {id: 3}, fault: {type: session_expire}}\n";
        try (ChainHarness h = new ChainHarness(RuleSet.parse(yaml, "http.yaml"), 1, TransportKind.HTTP,
                b -> b.httpActions(http))) {
            h.fromClient(Msg.request(1, "ping"));
            h.fromServer(Msg.result(2, "{}"));
            h.fromClient(Msg.request(3, "ping"));
            assertThat(actions).containsExactly(
                    "respond 503 {Content-Type=text/plain; charset=utf-8, Retry-After=5} busy to 1", "content-type text/html",
                    "expire test"); // the transport answers the request itself (HttpRulesEndToEndTest)
            assertThat(h.toServer()).isEmpty();
            assertThat(h.toClient()).containsExactly(Msg.result(2, "{}"));
        }
    }

    @Test
    void httpStatusLabelsItsBodyJsonOnlyWhenItIsJson() {
        List<String> responses = new ArrayList<>();
        HttpFaultActions http = new HttpFaultActions() {
            @Override
            public boolean respond(InterceptorContext ctx, Frame frame, int status, Map<String, String> headers,
                                   String body) {
                responses.add(frame.envelope().id() + " " + new TreeMap<>(headers));
                return true;
            }

            @Override
            public boolean overrideContentType(InterceptorContext ctx, Frame frame, String contentType) {
                throw new AssertionError("not an invalid_content_type rule");
            }

            @Override
            public boolean expireSession(InterceptorContext ctx, Frame frame) {
                throw new AssertionError("not a session_expire rule");
            }
        };
        String yaml = "rules:\n"
                + "  - {name: text, match: {id: 1}, fault: {type: http_status, status: 503, body: 'busy, retry later'}}\n"
                + "  - {name: json, match: {id: 2}, fault: {type: http_status, status: 400, body: '{\"error\": \"bad\"}'}}\n"
                + "  - {name: not-quite, match: {id: 3}, fault: {type: http_status, status: 400, body: '{\"a\":1} tail'}}\n"
                + "  - {name: own, match: {id: 4}, fault: {type: http_status, status: 503, body: '<p>busy</p>',"
                + " headers: {content-type: text/html}}}\n"
                + "  - {name: empty, match: {id: 5}, fault: {type: http_status, status: 503}}\n";
        try (ChainHarness h = new ChainHarness(RuleSet.parse(yaml, "http.yaml"), 1, TransportKind.HTTP,
                b -> b.httpActions(http))) {
            for (int id = 1; id <= 5; id++) {
                h.fromClient(Msg.request(id, "ping"));
            }
            assertThat(responses).containsExactly("1 {Content-Type=text/plain; charset=utf-8}",
                    "2 {Content-Type=application/json}", "3 {Content-Type=text/plain; charset=utf-8}",
                    "4 {content-type=text/html}", "5 {}");
            assertThat(h.toServer()).isEmpty();
            assertThat(h.events).hasSize(5);
        }
    }

    @Test
    void anHttpFaultWithoutActionsLeavesTheMessageAlone() {
        String yaml = "rules:\n  - {name: busy, fault: {type: http_status, status: 503}}\n";
        try (ChainHarness h = new ChainHarness(RuleSet.parse(yaml, "http.yaml"), 1, TransportKind.HTTP, b -> { })) {
            h.fromClient(Msg.request(1, "ping"));
            assertThat(h.toServer()).containsExactly(Msg.request(1, "ping"));
            assertThat(h.events).singleElement().satisfies(e -> assertThat(e.detail()).startsWith("failed ("));
        }
    }
}
