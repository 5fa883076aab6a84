package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Which messages a rule picks, and when: matches, correlation, after/times/probability, time windows. */
class RuleMatchingTest {

    private static String rule(String name, String match, String extra, String fault) {
        return "  - name: " + name + "\n    match: " + match + "\n" + extra + "    fault: " + fault + "\n";
    }

    private static String rules(String... rules) {
        return "rules:\n" + String.join("", rules);
    }

    @Test
    void methodGlobPicksRequestsByMethod() {
        try (ChainHarness h = ChainHarness.of(rules(rule("tools", "{method: 'tools/*'}", "", "{type: drop}")), 1)) {
            h.fromClient(Msg.call(1, "search"));
            h.fromClient(Msg.request(2, "tools/list"));
            h.fromClient(Msg.request(3, "resources/read"));
            h.fromClient(Msg.request(4, "toolsXlist"));

            assertThat(h.toServer()).containsExactly(Msg.request(3, "resources/read"), Msg.request(4, "toolsXlist"));
            assertThat(h.events).extracting(FaultEvent::id).containsExactly(1L, 2L);
        }
    }

    @Test
    void toolGlobPicksCallsByToolName() {
        try (ChainHarness h = ChainHarness.of(rules(rule("search", "{tool: 'search*'}", "", "{type: drop}")), 1)) {
            h.fromClient(Msg.call(1, "search_docs"));
            h.fromClient(Msg.call(2, "fetch"));
            h.fromClient(Msg.call(3, "search"));
            h.fromClient(Msg.call(4, "research"));

            assertThat(h.toServer()).containsExactly(Msg.call(2, "fetch"), Msg.call(4, "research"));
            assertThat(h.events).extracting(FaultEvent::tool).containsExactly("search_docs", "search");
            assertThat(h.events).extracting(FaultEvent::method).containsOnly("tools/call");
        }
    }

    @Test
    void responsesAreMatchedByTheRequestTheyAnswer() {
        String yaml = rules(rule("search-results",
                "{direction: server_to_client, kind: response, method: tools/call, tool: 'search*'}", "",
                "{type: drop}"));
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.fromClient(Msg.call(1, "search_docs"));
            h.fromClient(Msg.call(2, "fetch"));
            h.fromClient(Msg.request(3, "tools/list"));
            // Answered out of order: correlation is by id, not position.
            h.fromServer(Msg.textResult(2, "fetched"));
            h.fromServer(Msg.result(3, "{\"tools\":[]}"));
            h.fromServer(Msg.textResult(1, "found"));

            assertThat(h.toServer()).hasSize(3); // requests are not picked: the rule is for responses
            assertThat(h.toClient()).containsExactly(Msg.textResult(2, "fetched"), Msg.result(3, "{\"tools\":[]}"));
            assertThat(h.events).singleElement().satisfies(e -> {
                assertThat(e.direction()).isEqualTo(Direction.SERVER_TO_CLIENT);
                assertThat(e.kind()).isEqualTo(MessageKind.RESPONSE);
                assertThat(e.id()).isEqualTo(1L);
                assertThat(e.method()).isEqualTo("tools/call");
                assertThat(e.tool()).isEqualTo("search_docs");
            });
        }
    }

    @Test
    void errorResponsesAreTheirOwnKind() {
        String yaml = rules(rule("errors", "{kind: error}", "", "{type: drop}"));
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.fromClient(Msg.request(1, "ping"));
            h.fromClient(Msg.request(2, "ping"));
            h.fromServer(Msg.error(1, -32601, "nope"));
            h.fromServer(Msg.result(2, "{}"));

            assertThat(h.toClient()).containsExactly(Msg.result(2, "{}"));
            assertThat(h.events).singleElement().satisfies(e -> assertThat(e.method()).isEqualTo("ping"));
        }
    }

    @Test
    void notificationsAreMatchedByMethodAndKind() {
        String yaml = rules(rule("progress", "{kind: notification, method: 'notifications/progress'}", "",
                "{type: drop}"));
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.fromServer(Msg.notification("notifications/progress"));
            h.fromServer(Msg.notification("notifications/message"));
            h.fromClient(Msg.request(1, "notifications/progress")); // a request by that name is not a notification

            assertThat(h.toClient()).containsExactly(Msg.notification("notifications/message"));
            assertThat(h.toServer()).containsExactly(Msg.request(1, "notifications/progress"));
        }
    }

    @Test
    void serverToClientRequestsAndTheirResponsesAreMatched() {
        // The server asks the client (sampling); a rule answers it with an error on the client's behalf.
        String yaml = rules(
                rule("no-sampling", "{direction: server_to_client, kind: request, method: 'sampling/*'}", "",
                        "{type: error, code: -32001, message: sampling refused}"),
                rule("roots-answer", "{direction: client_to_server, kind: response, method: roots/list}", "",
                        "{type: drop}"));
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.fromServer(Msg.request("s1", "sampling/createMessage"));
            h.fromServer(Msg.request("s2", "roots/list"));
            h.fromClient(Msg.result("s2", "{\"roots\":[]}"));

            assertThat(h.toClient()).containsExactly(Msg.request("s2", "roots/list"));
            assertThat(h.toServer()).containsExactly(
                    "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"error\":{\"code\":-32001,\"message\":\"sampling refused\"}}");
            assertThat(h.events).extracting(FaultEvent::rule).containsExactly("no-sampling", "roots-answer");
            assertThat(h.events.get(1).method()).isEqualTo("roots/list");
        }
    }

    @Test
    void idMatchesExactlyAndTellsNumbersFromStrings() {
        String yaml = rules(rule("seven", "{id: 7}", "", "{type: drop}"));
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.fromClient(Msg.request(7, "ping"));
            h.fromClient(Msg.request("7", "ping"));
            h.fromClient(Msg.request(8, "ping"));
            h.fromServer(Msg.result(7, "{}"));

            assertThat(h.toServer()).containsExactly(Msg.request("7", "ping"), Msg.request(8, "ping"));
            assertThat(h.toClient()).isEmpty(); // the response with id 7 matches too
        }
    }

    @Test
    void directionAndTransportRestrict() {
        String yaml = rules(
                rule("only-http", "{transport: http}", "", "{type: drop}"),
                rule("to-server", "{direction: client_to_server, transport: stdio}", "", "{type: drop}"));
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.fromClient(Msg.request(1, "ping"));
            h.fromServer(Msg.result(1, "{}"));

            assertThat(h.toServer()).isEmpty();
            assertThat(h.toClient()).containsExactly(Msg.result(1, "{}"));
            assertThat(h.events).extracting(FaultEvent::rule).containsExactly("to-server");
        }
    }

    @Test
    void blankLinesAreNeverPickedButMalformedLinesAre() {
        String yaml = rules(rule("everything", "{}", "", "{type: drop}"));
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.fromServer("");
            h.fromServer("this is not json");

            assertThat(h.toClient()).containsExactly("");
            assertThat(h.events).singleElement().satisfies(e -> assertThat(e.kind()).isEqualTo(MessageKind.MALFORMED));
        }
    }

    @Test
    void afterLetsMatchesPassThenTimesStops() {
        String yaml = rules(rule("third-and-fourth", "{method: ping}", "    after: 2\n    times: 2\n", "{type: drop}"));
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            for (int id = 1; id <= 6; id++) {
                h.fromClient(Msg.request(id, "ping"));
                h.fromClient(Msg.request(100 + id, "other")); // not a match: does not count
            }
            assertThat(h.events).extracting(FaultEvent::id).containsExactly(3L, 4L);
            assertThat(h.toServer()).contains(Msg.request(1, "ping"), Msg.request(2, "ping"), Msg.request(5, "ping"),
                    Msg.request(6, "ping")).doesNotContain(Msg.request(3, "ping"), Msg.request(4, "ping"));
        }
    }

    @Test
    void messagesAFaultCannotActOnDoNotCount() {
        // error needs a request or response: the notifications do not use up "after".
        String yaml = rules(rule("second-call", "{}", "    after: 1\n    times: 1\n", "{type: error}"));
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.fromClient(Msg.notification("notifications/initialized"));
            h.fromClient(Msg.request(1, "ping"));
            h.fromClient(Msg.notification("notifications/cancelled"));
            h.fromClient(Msg.request(2, "ping"));
            assertThat(h.events).extracting(FaultEvent::id).containsExactly(2L);
        }
    }

    @Test
    void probabilityIsDrawnFromTheSeed() {
        String yaml = rules(rule("flaky", "{method: ping}", "    probability: 0.2\n", "{type: drop}"));
        List<Long> first = droppedIds(yaml, 42);
        List<Long> again = droppedIds(yaml, 42);
        List<Long> otherSeed = droppedIds(yaml, 43);

        assertThat(first).hasSizeBetween(150, 250); // 1000 tries at 20%: far outside that would be a bug
        assertThat(again).isEqualTo(first);
        assertThat(otherSeed).isNotEqualTo(first);
    }

    @Test
    void probabilityZeroNeverAndOneAlways() {
        assertThat(droppedIds(rules(rule("never", "{method: ping}", "    probability: 0\n", "{type: drop}")), 1))
                .isEmpty();
        assertThat(droppedIds(rules(rule("always", "{method: ping}", "    probability: 1\n", "{type: drop}")), 1))
                .hasSize(1000);
    }

    private static List<Long> droppedIds(String yaml, long seed) {
        try (ChainHarness h = ChainHarness.of(yaml, seed)) {
            for (int id = 0; id < 1000; id++) {
                h.fromClient(Msg.request(id, "ping"));
            }
            List<Long> ids = new ArrayList<>();
            h.events.forEach(e -> ids.add((Long) e.id()));
            assertThat(h.toServer()).hasSize(1000 - ids.size());
            return ids;
        }
    }

    @Test
    void startAndDurationMakeATimeWindowOnVirtualTime() {
        String yaml = rules(rule("window", "{method: ping}", "    start: 5s\n    duration: 10s\n", "{type: drop}"));
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.fromClient(Msg.request(1, "ping"));           // t = 0: before the window
            h.advance(Duration.ofMillis(4999));
            h.fromClient(Msg.request(2, "ping"));           // t = 4.999 s
            h.advanceMillis(1);
            h.fromClient(Msg.request(3, "ping"));           // t = 5 s: opens
            h.advance(Duration.ofMillis(9999));
            h.fromClient(Msg.request(4, "ping"));           // t = 14.999 s
            h.advanceMillis(1);
            h.fromClient(Msg.request(5, "ping"));           // t = 15 s: closed

            assertThat(h.events).extracting(FaultEvent::id).containsExactly(3L, 4L);
            assertThat(h.events).extracting(FaultEvent::time)
                    .containsExactly(Duration.ofSeconds(5), Duration.ofMillis(14_999));
        }
    }

    @Test
    void disabledRulesNeverApply() {
        String yaml = rules(rule("disabled", "{}", "    enabled: false\n", "{type: drop}"));
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.fromClient(Msg.request(1, "ping"));
            assertThat(h.toServer()).containsExactly(Msg.request(1, "ping"));
            assertThat(h.events).isEmpty();
        }
    }

    @Test
    void everyMatchingRuleAppliesInFileOrder() {
        String yaml = rules(
                rule("noise-first", "{method: ping}", "", "{type: noise, text: stray}"),
                rule("then-twice", "{method: ping}", "", "{type: duplicate}"),
                rule("not-this", "{method: other}", "", "{type: drop}"));
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.fromClient(Msg.request(1, "ping"));
            assertThat(h.toServer()).containsExactly("stray", Msg.request(1, "ping"), Msg.request(1, "ping"));
            assertThat(h.events).extracting(FaultEvent::rule).containsExactly("noise-first", "then-twice");
        }
    }

    @Test
    void aFaultThatEndsTheMessageEndsTheChain() {
        String yaml = rules(
                rule("drop-it", "{method: ping}", "", "{type: drop}"),
                rule("never-seen", "{method: ping}", "", "{type: noise}"));
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.fromClient(Msg.request(1, "ping"));
            assertThat(h.toServer()).isEmpty();
            assertThat(h.events).extracting(FaultEvent::rule).containsExactly("drop-it");
        }
    }

    @Test
    void untouchedMessagesLeaveByteForByte() {
        String yaml = rules(rule("elsewhere", "{method: 'tools/*'}", "", "{type: drop}"));
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            String odd = "{ \"jsonrpc\" : \"2.0\",\"id\":1,\"method\":\"ping\"  }";
            h.fromClient(odd);
            assertThat(h.stream(Direction.CLIENT_TO_SERVER)).isEqualTo(odd + "\n");
        }
    }

    @Test
    void eventsCarryWhoWhatAndWhen() {
        String yaml = rules(rule("slow", "{tool: search}", "", "{type: latency, latency: 250ms}"));
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.advanceMillis(1500);
            h.fromClient(Msg.call(9, "search"));
            assertThat(h.events).singleElement().satisfies(e -> {
                assertThat(e.sequence()).isEqualTo(1);
                assertThat(e.time()).isEqualTo(Duration.ofMillis(1500));
                assertThat(e.session()).isEqualTo("test");
                assertThat(e.direction()).isEqualTo(Direction.CLIENT_TO_SERVER);
                assertThat(e.rule()).isEqualTo("slow");
                assertThat(e.fault()).isEqualTo("latency");
                assertThat(e.kind()).isEqualTo(MessageKind.REQUEST);
                assertThat(e.id()).isEqualTo(9L);
                assertThat(e.method()).isEqualTo("tools/call");
                assertThat(e.tool()).isEqualTo("search");
                assertThat(e.detail()).isEqualTo("held 250ms");
                assertThat(e.toString()).isEqualTo(
                        "#1 +1.500s test c->s rule 'slow' latency: request id=9 tools/call search; held 250ms");
            });
        }
    }

    @Test
    void theStateOfAFinishedChainIsLetGo() {
        // A latency rule makes the engine keep per-chain state; once the chain is garbage, so is the state.
        RuleEngine engine = engineWithStateFor("rules:\n  - name: slow\n    match: {method: ping}\n"
                + "    fault: {type: latency, latency: 10ms}\n");
        Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    System.gc();
                    return engine.sessionCount() == 0;
                });
    }

    private static RuleEngine engineWithStateFor(String yaml) {
        try (ChainHarness h = ChainHarness.of(yaml, 1)) {
            h.fromClient(Msg.request(1, "ping"));
            h.advanceMillis(10);
            assertThat(h.toServer()).hasSize(1);
            assertThat(h.engine.sessionCount()).isEqualTo(1);
            return h.engine;
        }
    }
}
