package dev.mcpchaos.server.drill;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.journal.JournalEntry;
import dev.mcpchaos.rules.journal.JournalSnapshot;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The graders on journals written by hand: what decides pass, fail and not exercised. */
class GradersTest {

    private final List<JournalEntry> entries = new ArrayList<>();

    private JournalEntry add(long millis, Direction direction, MessageKind kind, Object id, String method, String tool,
                             String rule, boolean delivered, String fingerprint) {
        return add(millis, "s1", direction, kind, id, method, tool, rule, delivered, fingerprint, null, Map.of());
    }

    private JournalEntry add(long millis, String session, Direction direction, MessageKind kind, Object id,
                             String method, String tool, String rule, boolean delivered, String fingerprint,
                             Integer status, Map<String, String> headers) {
        List<JournalEntry.FaultAction> faults = rule == null ? List.of()
                : List.of(new JournalEntry.FaultAction(rule, "drop", "dropped"));
        JournalEntry e = new JournalEntry(entries.size() + 1, Duration.ofMillis(millis), Instant.EPOCH.plusMillis(millis),
                session, "http", direction, kind, id, method, tool, null, status, headers, faults, delivered,
                fingerprint, null, null);
        entries.add(e);
        return e;
    }

    private Grader.Finding grade(Grader grader, String rule, Integer exit) {
        return grader.grade(new Grader.Run(new JournalSnapshot(entries, 1000, 0, entries.size() + 1), List.of(rule), exit));
    }

    private static final Direction C2S = Direction.CLIENT_TO_SERVER;
    private static final Direction S2C = Direction.SERVER_TO_CLIENT;

    @Test
    void aFaultThatNeverFiredIsNotExercisedWhateverTheClientDid() {
        add(0, C2S, MessageKind.REQUEST, 1L, "tools/list", null, null, true, "a");
        add(5, S2C, MessageKind.RESPONSE, 1L, "tools/list", null, null, true, null);
        for (Grader g : List.of(Graders.goesOn(false), Graders.goesOn(true),
                Graders.ignoresLateAnswer(Duration.ofSeconds(3)), Graders.noResendAfterLostAnswer(),
                Graders.resendsDroppedRequest(), Graders.honorsRetryAfter(), Graders.reinitializes())) {
            assertThat(grade(g, "lose", 0).outcome()).isEqualTo(Outcome.NOT_EXERCISED);
        }
    }

    @Test
    void theSessionGoesOnOnlyWithAnAnsweredRequestAfterTheFault() {
        add(0, C2S, MessageKind.REQUEST, 1L, "tools/list", null, null, true, "a");
        add(5, S2C, MessageKind.RESPONSE, 1L, "tools/list", null, "lose", false, null);
        add(1500, C2S, MessageKind.REQUEST, 2L, "tools/list", null, null, true, "a");
        assertThat(grade(Graders.goesOn(false), "lose", null).outcome()).isEqualTo(Outcome.FAIL);
        add(1510, S2C, MessageKind.RESPONSE, 2L, "tools/list", null, null, true, null);
        Grader.Finding pass = grade(Graders.goesOn(false), "lose", 0);
        assertThat(pass.outcome()).isEqualTo(Outcome.PASS);
        assertThat(pass.evidence()).hasSize(3).allMatch(line -> line.startsWith("#"));
        assertThat(grade(Graders.goesOn(true), "lose", 1).outcome()).as("a crash after a late answer")
                .isEqualTo(Outcome.FAIL);
    }

    @Test
    void resendingAWriteWhoseAnswerWasLostFails() {
        add(0, C2S, MessageKind.REQUEST, 2L, "tools/call", "write", null, true, "w");
        add(10, S2C, MessageKind.RESPONSE, 2L, "tools/call", "write", "lose", false, null);
        assertThat(grade(Graders.noResendAfterLostAnswer(), "lose", 0).outcome()).isEqualTo(Outcome.PASS);
        add(4000, C2S, MessageKind.REQUEST, 3L, "tools/call", "write", null, true, "w");
        Grader.Finding fail = grade(Graders.noResendAfterLostAnswer(), "lose", 0);
        assertThat(fail.outcome()).isEqualTo(Outcome.FAIL);
        assertThat(fail.reason()).contains("not to send tools/call of write again");
    }

    @Test
    void aDroppedRequestMustBeResentUnderANewId() {
        add(0, C2S, MessageKind.REQUEST, 1L, "tools/list", null, "drop-it", false, "a");
        assertThat(grade(Graders.resendsDroppedRequest(), "drop-it", null).outcome()).as("no resend").isEqualTo(Outcome.FAIL);
        add(1500, C2S, MessageKind.REQUEST, 1L, "tools/list", null, null, true, "a");
        Grader.Finding sameId = grade(Graders.resendsDroppedRequest(), "drop-it", 0);
        assertThat(sameId.outcome()).isEqualTo(Outcome.FAIL);
        assertThat(sameId.reason()).contains("under the same id 1");
        assertThat(sameId.level()).as("reusing an id breaks basic#requests' MUST, whatever the scenario's level")
                .isEqualTo(Level.MUST);
        entries.remove(1);
        add(1500, C2S, MessageKind.REQUEST, 2L, "tools/list", null, null, true, "a");
        assertThat(grade(Graders.resendsDroppedRequest(), "drop-it", 0).outcome()).isEqualTo(Outcome.PASS);
    }

    @Test
    void notResendingADroppedRequestFailsAtTheScenariosLevel() {
        add(0, C2S, MessageKind.REQUEST, 1L, "tools/list", null, "drop-it", false, "a");
        Grader.Finding none = grade(Graders.resendsDroppedRequest(), "drop-it", 0);
        assertThat(none.outcome()).isEqualTo(Outcome.FAIL);
        assertThat(none.level()).isNull();
        assertThat(Catalogue.find("request-dropped").orElseThrow().level()).as("resending is no MUST of the spec")
                .isEqualTo(Level.SHOULD);
    }

    private Grader.Finding gradeLate(Integer exit, Instant ended) {
        return Graders.ignoresLateAnswer(Duration.ofSeconds(3)).grade(new Grader.Run(
                new JournalSnapshot(entries, 1000, 0, entries.size() + 1), List.of("late"), exit, ended));
    }

    @Test
    void aLateAnswerToAClientThatWaitedItOutIsNotExercised() {
        add(0, C2S, MessageKind.REQUEST, 1L, "tools/list", null, null, true, "a");
        add(5, S2C, MessageKind.RESPONSE, 1L, "tools/list", null, "late", true, null);
        add(3010, C2S, MessageKind.REQUEST, 2L, "tools/call", "echo", null, true, "e");
        add(3020, S2C, MessageKind.RESPONSE, 2L, "tools/call", "echo", null, true, null);
        Grader.Finding waited = gradeLate(0, Instant.EPOCH.plusMillis(3100));
        assertThat(waited.outcome()).isEqualTo(Outcome.NOT_EXERCISED);
        assertThat(waited.reason()).contains("waited the 3000 ms delay out");
        assertThat(waited.evidence()).hasSize(2).allMatch(line -> line.startsWith("#"));
        // The same client with no request after the answer, and ended after it left: still not exercised.
        entries.subList(2, 4).clear();
        assertThat(gradeLate(0, Instant.EPOCH.plusMillis(3100)).outcome()).isEqualTo(Outcome.NOT_EXERCISED);
    }

    @Test
    void aLateAnswerToAClientThatGaveUpIsGradedOnWhatItDidNext() {
        add(0, C2S, MessageKind.REQUEST, 1L, "tools/list", null, null, true, "a");
        add(5, S2C, MessageKind.RESPONSE, 1L, "tools/list", null, "late", true, null);
        // Gave up at 1.5 s and ended at once with exit 1: before the answer left, so exercised, and failed.
        assertThat(gradeLate(1, Instant.EPOCH.plusMillis(1600)).outcome()).isEqualTo(Outcome.FAIL);
        // Gave up at 1.5 s, sent a new request (answered), exited 0: pass.
        add(1500, C2S, MessageKind.REQUEST, 2L, "tools/list", null, null, true, "a");
        add(1510, S2C, MessageKind.RESPONSE, 2L, "tools/list", null, null, true, null);
        assertThat(gradeLate(0, Instant.EPOCH.plusMillis(3500)).outcome()).isEqualTo(Outcome.PASS);
        assertThat(gradeLate(1, Instant.EPOCH.plusMillis(3500)).outcome()).as("it crashed on the late answer")
                .isEqualTo(Outcome.FAIL);
    }

    @Test
    void retryAfterIsHonouredOrNot() {
        add(0, "s1", C2S, MessageKind.REQUEST, 2L, "tools/call", "slow", "busy", false, "s", 503,
                Map.of("Retry-After", "2"));
        add(500, C2S, MessageKind.REQUEST, 2L, "tools/call", "slow", null, true, "s");
        assertThat(grade(Graders.honorsRetryAfter(), "busy", 0).outcome()).isEqualTo(Outcome.FAIL);
        entries.remove(1);
        add(2100, C2S, MessageKind.REQUEST, 2L, "tools/call", "slow", null, true, "s");
        Grader.Finding pass = grade(Graders.honorsRetryAfter(), "busy", 0);
        assertThat(pass.outcome()).isEqualTo(Outcome.PASS);
        assertThat(pass.reason()).contains("came 2.100s later");
    }

    @Test
    void aScorecardFailsTheDrillOnlyForAFailedMust() {
        Verdict should = new Verdict("a", Level.SHOULD, Outcome.FAIL, "r", List.of(), 0, Duration.ZERO);
        Verdict must = new Verdict("b", Level.MUST, Outcome.NOT_EXERCISED, "r", List.of(), 0, Duration.ZERO);
        assertThat(new Scorecard(1, List.of(should, must)).exitCode()).isZero();
        Verdict failed = new Verdict("c", Level.MUST, Outcome.FAIL, "r <&>", List.of("#1 x"), null, Duration.ZERO);
        Scorecard card = new Scorecard(1, List.of(should, must, failed));
        assertThat(card.exitCode()).isEqualTo(1);
        assertThat(card.outcomes()).isEqualTo("a=fail, b=not exercised, c=fail");
        assertThat(card.toJunitXml()).contains("tests=\"3\" failures=\"2\" errors=\"0\" skipped=\"1\"")
                .contains("<failure message=\"MUST: r &lt;&amp;&gt;\">#1 x</failure>");
        assertThat(card.toJson()).contains("\"exit_code\" : 1").contains("\"outcome\" : \"not_exercised\"");
    }

    @Test
    void theScorecardsJsonSaysWhatItIsAndCarriesEachScenariosJournal() throws Exception {
        Verdict ran = new Verdict("a", Level.MUST, Outcome.PASS, "r", List.of(), 0, Duration.ZERO);
        Verdict notRun = new Verdict("b", Level.MUST, Outcome.NOT_BUILT, "r", List.of(), null, Duration.ZERO);
        String journal = "{\"capacity\":10,\"evicted\":0,\"next\":1,\"entries\":[]}";
        com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(new Scorecard(3, List.of(ran, notRun), java.util.Map.of("a", journal)).toJson());
        assertThat(json.path("format").asText()).isEqualTo(Scorecard.FORMAT);
        assertThat(json.path("scenarios").get(0).path("journal").path("capacity").asInt()).isEqualTo(10);
        assertThat(json.path("scenarios").get(1).has("journal")).isFalse();
        assertThat(new Scorecard(3, List.of(ran)).journals()).isEmpty();
    }
}
