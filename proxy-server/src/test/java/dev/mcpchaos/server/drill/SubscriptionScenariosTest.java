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

/** listen-cut's grader on journals written by hand, as the drill's sessionless journal has them. */
class SubscriptionScenariosTest {

    private final List<JournalEntry> entries = new ArrayList<>();

    private JournalEntry listen(Object id) {
        return add(Direction.CLIENT_TO_SERVER, MessageKind.REQUEST, id, "subscriptions/listen", null, true);
    }

    private JournalEntry ack(boolean cut) {
        return add(Direction.SERVER_TO_CLIENT, MessageKind.NOTIFICATION, null, SubscriptionScenarios.ACKNOWLEDGED,
                cut ? "disconnect" : null, !cut);
    }

    private JournalEntry add(Direction direction, MessageKind kind, Object id, String method, String fault,
                             boolean delivered) {
        List<JournalEntry.FaultAction> faults = fault == null ? List.of()
                : List.of(new JournalEntry.FaultAction("listen-cut", fault, "side=client"));
        long n = entries.size() + 1;
        JournalEntry e = new JournalEntry(n, Duration.ofMillis(n * 10), Instant.EPOCH.plusMillis(n * 10), "http-" + n,
                "http", direction, kind, id, method, null, null, null, Map.of(), faults, delivered, null, null, null);
        entries.add(e);
        return e;
    }

    private Grader.Finding grade(Integer exit) {
        return SubscriptionScenarios.relistens().grade(new Grader.Run(
                new JournalSnapshot(entries, 1000, 0, entries.size() + 1), List.of("listen-cut"), exit));
    }

    @Test
    void theScenarioIsBuiltForTheStatelessEraOverHttpInItsPlace() {
        Scenario s = Catalogue.find("listen-cut").orElseThrow();
        assertThat(s.built()).isTrue();
        assertThat(s.appliesTo(dev.mcpchaos.core.transport.TransportKind.HTTP, Era.STATELESS)).isTrue();
        assertThat(s.appliesTo(dev.mcpchaos.core.transport.TransportKind.HTTP, Era.SESSIONS)).isFalse();
        assertThat(s.ruleNames()).containsExactly("listen-cut");
        assertThat(s.toolsNeeded()).isEmpty();
    }

    @Test
    void aCutThatNeverHappenedIsNotExercised() {
        listen("listen:0");
        ack(false);
        Grader.Finding f = grade(0);
        assertThat(f.outcome()).isEqualTo(Outcome.NOT_EXERCISED);
    }

    @Test
    void listeningAgainUnderANewIdPasses() {
        listen("listen:0");
        JournalEntry cut = ack(true);
        listen("listen:1");
        ack(false);
        Grader.Finding f = grade(0);
        assertThat(f.outcome()).as(f.reason()).isEqualTo(Outcome.PASS);
        assertThat(f.reason()).contains("cut at #" + cut.sequence()).contains("listened again as #3");
        assertThat(f.evidence()).anySatisfy(line -> assertThat(line).contains("listen-cut"));
    }

    @Test
    void neverListeningAgainFails() {
        listen("listen:0");
        ack(true);
        Grader.Finding f = grade(0);
        assertThat(f.outcome()).isEqualTo(Outcome.FAIL);
        assertThat(f.reason()).contains("never sent subscriptions/listen again").contains("exited 0");
        assertThat(grade(null).reason()).contains("stopped at the timeout");
    }

    @Test
    void listeningAgainUnderTheSameIdFailsAtMust() {
        listen(7L);
        ack(true);
        listen(7L);
        Grader.Finding f = grade(0);
        assertThat(f.outcome()).isEqualTo(Outcome.FAIL);
        assertThat(f.level()).isEqualTo(Level.MUST);
    }

    @Test
    void aCutWithNoListenBeforeItIsNotExercised() {
        ack(true);
        assertThat(grade(0).outcome()).isEqualTo(Outcome.NOT_EXERCISED);
    }
}
