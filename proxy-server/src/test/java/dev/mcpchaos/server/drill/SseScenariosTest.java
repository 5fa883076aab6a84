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

/** The SSE scenarios' graders on journals written by hand: pass, fail and not exercised. */
class SseScenariosTest {

    private static final Direction C2S = Direction.CLIENT_TO_SERVER;
    private static final Direction S2C = Direction.SERVER_TO_CLIENT;

    private final List<JournalEntry> entries = new ArrayList<>();

    /** An entry; {@code resumedAfter} marks a server's message on a resumed stream; {@code fault} is "rule/type/detail". */
    private void add(long millis, Direction direction, MessageKind kind, Object id, String method,
                     String resumedAfter, String fault, boolean delivered) {
        List<JournalEntry.FaultAction> faults = new ArrayList<>();
        if (fault != null) {
            String[] parts = fault.split("/", 3);
            faults.add(new JournalEntry.FaultAction(parts[0], parts[1], parts[2]));
        }
        entries.add(new JournalEntry(entries.size() + 1, Duration.ofMillis(millis), Instant.EPOCH.plusMillis(millis),
                "s1", "http", direction, kind, id, method, null, null, null,
                resumedAfter == null ? Map.of() : Map.of(JournalEntry.LAST_EVENT_ID, resumedAfter), faults, delivered,
                null, null, null));
    }

    private Grader.Finding grade(Grader grader, List<String> rules) {
        return grader.grade(new Grader.Run(new JournalSnapshot(entries, 1000, 0, entries.size() + 1), rules, 0));
    }

    private static Scenario scenario(String name) {
        return Catalogue.find(name).orElseThrow();
    }

    private Grader.Finding grade(String scenario) {
        Scenario s = scenario(scenario);
        return grade(s.grader(), s.ruleNames());
    }

    /** A tools/call of slow whose SSE answer starts; {@code cut} says how its first progress fared. */
    private void callWithProgress(String cutFault) {
        add(0, C2S, MessageKind.REQUEST, 2L, "tools/call", null, null, true);
        add(60, S2C, MessageKind.NOTIFICATION, null, "notifications/progress", null, cutFault, false);
    }

    @Test
    void theScenariosAreNotExercisedWhenTheirFaultNeverFired() {
        add(0, C2S, MessageKind.REQUEST, 1L, "tools/list", null, null, true);
        add(5, S2C, MessageKind.RESPONSE, 1L, "tools/list", null, null, true);
        for (String name : List.of("sse-resume", "priming-missing", "retry-field", "get-stream-dropped")) {
            assertThat(grade(name).outcome()).as(name).isEqualTo(Outcome.NOT_EXERCISED);
        }
    }

    @Test
    void sseResumePassesOnlyWhenTheAnswerCameOnAResumedStream() {
        callWithProgress("sse-resume/disconnect/closed the client's side");
        Grader.Finding fail = grade("sse-resume");
        assertThat(fail.outcome()).isEqualTo(Outcome.FAIL);
        assertThat(fail.reason()).contains("it resumed none");
        // An answer on a stream that was not resumed (a new request's) does not count.
        add(1200, S2C, MessageKind.RESPONSE, 3L, "tools/call", null, null, true);
        assertThat(grade("sse-resume").outcome()).isEqualTo(Outcome.FAIL);
        add(1300, S2C, MessageKind.NOTIFICATION, null, "notifications/progress", "1-1", null, true);
        add(1301, S2C, MessageKind.RESPONSE, 2L, "tools/call", "1-1", null, true);
        Grader.Finding pass = grade("sse-resume");
        assertThat(pass.outcome()).isEqualTo(Outcome.PASS);
        assertThat(pass.reason()).contains("Last-Event-ID: 1-1").contains("the answer #5");
        assertThat(pass.evidence()).hasSize(2);
    }

    @Test
    void retryFieldPassesWhenTheResumptionWaitedAsLongAsRetrySaid() {
        add(0, C2S, MessageKind.REQUEST, 2L, "tools/call", null, null, true);
        add(50, S2C, MessageKind.NOTIFICATION, null, "notifications/progress", null, "retry-field/sse_retry/retry: 1500",
                true);
        add(60, S2C, MessageKind.NOTIFICATION, null, "notifications/progress", null,
                "retry-field-cut/disconnect/closed the client's side", false);
        Grader.Finding none = grade("retry-field");
        assertThat(none.outcome()).as("no reconnection: nothing to wait for").isEqualTo(Outcome.PASS);
        assertThat(none.reason()).contains("did not reconnect");
        add(2570, S2C, MessageKind.NOTIFICATION, null, "notifications/progress", "1-2", null, true);
        Grader.Finding pass = grade("retry-field");
        assertThat(pass.outcome()).isEqualTo(Outcome.PASS);
        assertThat(pass.reason()).contains("said retry: 1500").contains("2.510s later");
    }

    @Test
    void retryFieldFailsWhenTheClientReconnectedSooner() {
        add(0, C2S, MessageKind.REQUEST, 2L, "tools/call", null, null, true);
        add(50, S2C, MessageKind.NOTIFICATION, null, "notifications/progress", null, "retry-field/sse_retry/retry: 1500",
                true);
        add(60, S2C, MessageKind.NOTIFICATION, null, "notifications/progress", null,
                "retry-field-cut/disconnect/closed the client's side", false);
        add(1070, S2C, MessageKind.NOTIFICATION, null, "notifications/progress", "1-2", null, true);
        Grader.Finding fail = grade("retry-field");
        assertThat(fail.outcome()).isEqualTo(Outcome.FAIL);
        assertThat(fail.reason()).contains("1.010s later (sooner than retry: asked)");
    }

    @Test
    void retryFieldIsNotExercisedWithoutTheCut() {
        add(0, C2S, MessageKind.REQUEST, 2L, "tools/call", null, null, true);
        add(50, S2C, MessageKind.NOTIFICATION, null, "notifications/progress", null, "retry-field/sse_retry/retry: 1500",
                true);
        assertThat(grade("retry-field").outcome()).isEqualTo(Outcome.NOT_EXERCISED);
    }

    @Test
    void getStreamDroppedPassesWhenTheLostMessageCameOnAResumedGet() {
        add(0, C2S, MessageKind.REQUEST, 5L, "logging/setLevel", null, null, true);
        add(3, S2C, MessageKind.RESPONSE, 5L, "logging/setLevel", null, null, true);
        add(4, S2C, MessageKind.NOTIFICATION, null, "notifications/message", null,
                "get-stream-dropped/get_stream_drop/dropped the GET stream", false);
        Grader.Finding fail = grade("get-stream-dropped");
        assertThat(fail.outcome()).isEqualTo(Outcome.FAIL);
        assertThat(fail.reason()).contains("did not open the stream again with Last-Event-ID");
        add(1010, S2C, MessageKind.NOTIFICATION, null, "notifications/message", "0-1", null, true);
        Grader.Finding pass = grade("get-stream-dropped");
        assertThat(pass.outcome()).isEqualTo(Outcome.PASS);
        assertThat(pass.reason()).contains("Last-Event-ID: 0-1").contains("as #4");
    }

    /** A tools/call of slow whose first progress lost its priming event (id 3-0) and was cut. */
    private void callWithoutPriming() {
        callWithProgress("priming-missing/priming_drop/removed the priming event before it (id 3-0)");
        int last = entries.size() - 1;
        entries.set(last, entries.get(last).withFault(
                new JournalEntry.FaultAction("priming-missing-cut", "disconnect", "closed the client's side")));
    }

    private Grader.Finding gradeWithExit(String scenario, Integer exit) {
        Scenario s = scenario(scenario);
        return s.grader().grade(new Grader.Run(new JournalSnapshot(entries, 1000, 0, entries.size() + 1),
                s.ruleNames(), exit));
    }

    @Test
    void primingMissingIsBuiltWithBothRulesOnTheFirstProgress() {
        Scenario s = scenario("priming-missing");
        assertThat(s.built()).isTrue();
        assertThat(s.ruleNames()).containsExactly("priming-missing", "priming-missing-cut");
    }

    @Test
    void primingMissingPassesWhenALaterRequestWasAnswered() {
        callWithoutPriming();
        add(4100, C2S, MessageKind.REQUEST, 3L, "tools/call", null, null, true);
        add(4110, S2C, MessageKind.RESPONSE, 3L, "tools/call", null, null, true);
        Grader.Finding pass = grade("priming-missing");
        assertThat(pass.outcome()).isEqualTo(Outcome.PASS);
        assertThat(pass.reason()).contains("cut at #2").contains("sent #3 (tools/call) 4.040s later")
                .contains("answer #4");
    }

    @Test
    void primingMissingFailsWhenTheClientHungToTheTimeout() {
        callWithoutPriming();
        Grader.Finding fail = gradeWithExit("priming-missing", null);
        assertThat(fail.outcome()).isEqualTo(Outcome.FAIL);
        assertThat(fail.reason()).contains("it hung").contains("was stopped at the timeout");
        assertThat(gradeWithExit("priming-missing", 1).outcome()).as("it ended on its own").isEqualTo(Outcome.PASS);
    }

    @Test
    void primingMissingFailsAResumptionWithTheIdItNeverGot() {
        callWithoutPriming();
        add(300, S2C, MessageKind.NOTIFICATION, null, "notifications/progress", "3-0", null, true);
        add(4100, C2S, MessageKind.REQUEST, 3L, "tools/call", null, null, true);
        add(4110, S2C, MessageKind.RESPONSE, 3L, "tools/call", null, null, true);
        Grader.Finding fail = grade("priming-missing");
        assertThat(fail.outcome()).isEqualTo(Outcome.FAIL);
        assertThat(fail.reason()).contains("resumed with Last-Event-ID: 3-0, an id it never received");
    }

    @Test
    void primingMissingIsNotExercisedWithoutTheCutOrThePrimingRemoved() {
        callWithProgress("priming-missing-cut/disconnect/closed the client's side");
        assertThat(grade("priming-missing").outcome()).as("cut, but no priming event removed")
                .isEqualTo(Outcome.NOT_EXERCISED);
        entries.clear();
        add(0, C2S, MessageKind.REQUEST, 2L, "tools/call", null, null, true);
        add(60, S2C, MessageKind.NOTIFICATION, null, "notifications/progress", null,
                "priming-missing/priming_drop/removed the priming event before it (id 3-0)", true);
        assertThat(grade("priming-missing").outcome()).as("removed, but the stream not cut")
                .isEqualTo(Outcome.NOT_EXERCISED);
    }

    @Test
    void aResumedEntryNamesItsLastEventIdInItsLine() {
        add(10, S2C, MessageKind.RESPONSE, 2L, "tools/call", "1-1", null, true);
        assertThat(entries.get(0).resumedAfter()).isEqualTo("1-1");
        assertThat(entries.get(0).toString()).contains("Last-Event-ID: 1-1");
    }
}
