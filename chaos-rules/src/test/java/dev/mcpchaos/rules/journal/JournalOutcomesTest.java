package dev.mcpchaos.rules.journal;

import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.mcpchaos.rules.journal.Messages.delivered;
import static dev.mcpchaos.rules.journal.Messages.dropped;
import static dev.mcpchaos.rules.journal.Messages.notDelivered;
import static dev.mcpchaos.rules.journal.Messages.notReachedClient;
import static dev.mcpchaos.rules.journal.Messages.notReachedServer;
import static dev.mcpchaos.rules.journal.Messages.reachedClient;
import static dev.mcpchaos.rules.journal.Messages.reachedServer;
import static dev.mcpchaos.rules.journal.Messages.sameArgumentsAs;
import static dev.mcpchaos.rules.journal.Messages.toolCall;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The journal's outcome patterns and assertions, on journals written here entry by entry: each
 * duplicate write beside its twin, the safe retry, that is not one.
 */
class JournalOutcomesTest {

    private static final String ROW_7 = "{\"row\":7,\"v\":\"x\"}";

    /** The client wrote, the server's answer was dropped, the client wrote the same again. */
    private static Entries lostAnswerThenResent(String firstArguments, String againArguments) {
        Entries journal = new Entries();
        journal.at(0).passed(journal.toolCall("s1", 1, "write", firstArguments));
        journal.at(50).fault(journal.response("s1", 1, "tools/call", "write"), "lose-answer", "drop", "dropped");
        journal.at(3000).passed(journal.toolCall("s1", 2, "write", againArguments));
        journal.at(3050).passed(journal.response("s1", 2, "tools/call", "write"));
        return journal;
    }

    /** A rule dropped the write before the server; the client sent it again. */
    private static Entries droppedRequestThenResent() {
        Entries journal = new Entries();
        long lost = journal.at(0).toolCall("s1", 1, "write", ROW_7);
        journal.fault(lost, "lose-request", "drop", "dropped");
        journal.at(3000).passed(journal.toolCall("s1", 2, "write", ROW_7));
        journal.at(3050).passed(journal.response("s1", 2, "tools/call", "write"));
        return journal;
    }

    @Test
    void aResendOfAWriteWhoseAnswerWasLostIsADuplicateWrite() {
        JournalVerification verify = lostAnswerThenResent(ROW_7, ROW_7).ring().verify();

        assertThat(verify.client().duplicateWrites(toolCall("write")).once()).extracting(JournalEntry::sequence)
                .containsExactly(3L);
        verify.client().retriedAfter(notReachedClient(toolCall("write"))).withSameArguments();
        assertThatThrownBy(() -> verify.client().duplicateWrites(toolCall("write")).never())
                .hasMessageStartingWith("Expected the client to duplicate a write of tools/call of write never,\n"
                        + "but it did once.\nThe copies that reached the server, their answers, and the duplicates "
                        + "(3):\n  #1 +0.000s s1 c->s request id=1 tools/call write params=")
                .hasMessageContaining("\n  #2 +0.050s s1 s->c response id=1 tools/call write drop(rule "
                        + "'lose-answer'): dropped; not delivered\n  #3 +3.000s s1 c->s request id=2 tools/call write")
                .hasMessageEndingWith("The journal holds 4 entries (#1..#4), none dropped for capacity.");
    }

    @Test
    void aRetryOfAWriteThatNeverReachedTheServerIsASafeRetryNotADuplicate() {
        JournalVerification verify = droppedRequestThenResent().ring().verify();

        verify.client().duplicateWrites(toolCall("write")).never();
        verify.client().retriedAfter(notReachedServer(toolCall("write"))).withSameArguments();
        assertThatThrownBy(() -> verify.client().duplicateWrites(toolCall("write")).atLeast(1))
                .hasMessageStartingWith("Expected the client to duplicate a write of tools/call of write at least "
                        + "once,\nbut it never did.\nThe copies that reached the server, their answers, and the "
                        + "duplicates: none\n");
        // What docs/journal.md used to call "a duplicate write" passes here too: it says nothing of outcomes.
        verify.client().retriedAfter(dropped(toolCall("write"))).withSameArguments();
        assertThatThrownBy(() -> verify.client().retriedAfter(notReachedClient(toolCall("write"))))
                .hasMessageStartingWith("Expected the client to retry after tools/call of write that never reached "
                        + "the client,\nbut the journal holds no tools/call of write that never reached the client.");
    }

    @Test
    void aResendUnderAFreshIdempotencyKeyIsTheSameWriteAndOtherArgumentsAreAnother() {
        Entries freshKey = lostAnswerThenResent("{\"row\":7,\"request_id\":\"a-1\"}",
                "{\"requestId\":\"a-2\",\"row\":7}");
        freshKey.ring().verify().client().duplicateWrites(toolCall("write")).once();

        Entries otherRow = lostAnswerThenResent("{\"row\":7,\"request_id\":\"a-1\"}",
                "{\"row\":8,\"request_id\":\"a-2\"}");
        otherRow.ring().verify().client().duplicateWrites(toolCall("write")).never();
    }

    @Test
    void aWriteTheServerReceivedTwiceIsADuplicateEvenAfterItsAnswerCame() {
        Entries twice = new Entries();
        twice.passed(twice.toolCall("s1", 1, "write", ROW_7));
        twice.passed(twice.response("s1", 1, "tools/call", "write"));
        twice.passed(twice.toolCall("s1", 2, "write", ROW_7));
        twice.ring().verify().client().duplicateWrites(toolCall("write")).once();

        // Twin: the answer came, and the repeat never reached the server: it received the write once.
        Entries once = new Entries();
        once.passed(once.toolCall("s1", 1, "write", ROW_7));
        once.passed(once.response("s1", 1, "tools/call", "write"));
        once.fault(once.toolCall("s1", 2, "write", ROW_7), "lose-request", "drop", "dropped");
        once.ring().verify().client().duplicateWrites(toolCall("write")).never();
    }

    @Test
    void aResendThatARuleDroppedIsStillADuplicateWhenItsFirstCopyReachedTheServerUnanswered() {
        Entries journal = new Entries();
        journal.passed(journal.toolCall("s1", 1, "write", ROW_7));
        journal.fault(journal.response("s1", 1, "tools/call", "write"), "lose-answer", "drop", "dropped");
        long resend = journal.toolCall("s1", 2, "write", ROW_7);
        journal.fault(resend, "lose-request", "drop", "dropped");
        // The client did write again blind; that the proxy lost it is the rule's luck, not the client's care.
        assertThat(journal.ring().verify().client().duplicateWrites(toolCall("write")).once())
                .extracting(JournalEntry::sequence).containsExactly(resend);
    }

    @Test
    void aResendInANewSessionCountsAndOnlyTheWritesAskedAboutAreCounted() {
        Entries journal = new Entries();
        journal.passed(journal.toolCall("old", 1, "write", ROW_7));
        journal.fault(journal.response("old", 1, "tools/call", "write"), "lose-answer", "drop", "dropped");
        journal.passed(journal.toolCall("new", 1, "write", ROW_7));
        journal.passed(journal.response("new", 1, "tools/call", "write"));
        journal.passed(journal.toolCall("new", 2, "read", ROW_7));
        journal.passed(journal.toolCall("new", 3, "read", ROW_7));

        journal.ring().verify().client().duplicateWrites(toolCall("write")).once();
        journal.ring().verify().client().duplicateWrites(toolCall("read")).once();
        journal.ring().verify().client().duplicateWrites(toolCall("write*")).once();
        journal.ring().verify().client().duplicateWrites(toolCall("*")).times(2);
    }

    @Test
    void notRetriedAfterALostAnswerPassesForAClientThatReadsBack() {
        Entries careful = new Entries();
        careful.passed(careful.toolCall("s1", 1, "write", ROW_7));
        careful.fault(careful.response("s1", 1, "tools/call", "write"), "lose-answer", "drop", "dropped");
        careful.passed(careful.toolCall("s1", 2, "read", "{\"row\":7}"));

        assertThat(careful.ring().verify().client().notRetriedAfter(notReachedClient(toolCall("write"))))
                .extracting(JournalEntry::sequence).containsExactly(2L);
        careful.ring().verify().client().duplicateWrites(toolCall("write")).never();
    }

    @Test
    void notRetriedAfterFailsForEachRetryAndWhenNothingWasLost() {
        Entries careless = lostAnswerThenResent(ROW_7, "{\"row\":7,\"v\":\"y\"}"); // other arguments: still a retry
        assertThatThrownBy(() -> careless.ring().verify().client()
                .notRetriedAfter(notReachedClient(toolCall("write"))))
                .hasMessageStartingWith("Expected the client not to send tools/call of write again after tools/call"
                        + " of write that never reached the client,\nbut it did: #3 after #2.\nThe lost messages and "
                        + "the retries (2):\n  #2 +0.050s s1 s->c response id=1 tools/call write drop(rule "
                        + "'lose-answer'): dropped; not delivered\n  #3 +3.000s s1 c->s request id=2 tools/call write");

        Entries quiet = new Entries();
        quiet.passed(quiet.toolCall("s1", 1, "write", ROW_7));
        quiet.passed(quiet.response("s1", 1, "tools/call", "write"));
        assertThatThrownBy(() -> quiet.ring().verify().client().notRetriedAfter(notReachedClient(toolCall("write"))))
                .hasMessageStartingWith("Expected the client not to retry after tools/call of write that never "
                        + "reached the client,\nbut the journal holds no tools/call of write that never reached the "
                        + "client, so nothing was put to the test.\nEntries a rule acted on: none\n");
    }

    @Test
    void outcomePatternsSayWhereEachMessageWent() {
        Entries journal = droppedRequestThenResent();
        long lostAnswer = journal.at(4000).response("s1", 9, "tools/call", "write"); // an answer a fault dropped
        journal.fault(lostAnswer, "lose-answer", "drop", "dropped");
        JournalRing ring = journal.ring();

        assertThat(seqs(ring, reachedServer(toolCall("write")))).containsExactly(2L);
        assertThat(seqs(ring, notReachedServer(toolCall("write")))).containsExactly(1L);
        assertThat(seqs(ring, reachedClient(toolCall("write")))).containsExactly(3L);
        assertThat(seqs(ring, notReachedClient(toolCall("write")))).containsExactly(lostAnswer);
        assertThat(seqs(ring, delivered(toolCall("write")))).containsExactly(2L, 3L);
        assertThat(seqs(ring, notDelivered(toolCall("write")))).containsExactly(1L, lostAnswer);
        assertThat(seqs(ring, notDelivered(toolCall("write")).negate())).containsExactly(2L, 3L);
        assertThat(seqs(ring, reachedServer(toolCall("write")).or(notReachedClient(toolCall("*")))))
                .containsExactly(2L, lostAnswer);
        assertThat(notReachedServer(toolCall("write")).negate().description())
                .isEqualTo("not (tools/call of write that never reached the server)");
        // sent() keeps the side asked about; the server never "reached the server".
        ring.verify().server().sent(reachedServer(toolCall("write"))).never();
        ring.verify().client().sent(notReachedServer(toolCall("write"))).once();
    }

    @Test
    void sameArgumentsAsComparesWhatWasAskedKeysAside() {
        Entries journal = new Entries();
        journal.passed(journal.toolCall("s1", 1, "write", "{\"row\":7,\"Idempotency-Key\":\"k1\"}"));
        journal.passed(journal.toolCall("s1", 2, "write", "{\"row\":7.0,\"Idempotency-Key\":\"k2\"}"));
        journal.passed(journal.toolCall("s1", 3, "write", "{\"row\":8}"));
        journal.passed(journal.toolCall("s1", 4, "erase", "{\"row\":7}"));
        journal.passed(journal.response("s1", 1, "tools/call", "write"));
        JournalRing ring = journal.ring();
        JournalEntry first = ring.entries().get(0);

        assertThat(seqs(ring, sameArgumentsAs(first))).containsExactly(1L, 2L);
        assertThat(sameArgumentsAs(first).description()).isEqualTo("tools/call of write with the arguments of #1");
        ring.verify().client().sent(toolCall("write").and(sameArgumentsAs(first))).times(2);
        assertThatThrownBy(() -> sameArgumentsAs(ring.entries().get(4)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("request: #5 +0.000s s1 s->c response id=1 tools/call write")
                .hasMessageEndingWith(" (expected: a request with params)");

        assertThat(seqs(ring, toolCall("write", "{\"row\":7}"))).containsExactly(1L, 2L);
        assertThat(seqs(ring, toolCall("*", "{\"row\":7}"))).containsExactly(1L, 2L, 4L);
        assertThat(seqs(ring, toolCall("write", "{\"row\":8}"))).containsExactly(3L);
        assertThat(seqs(ring, toolCall("write", "{}"))).isEmpty();
        assertThat(toolCall("write", "{\"row\":7}").description())
                .isEqualTo("tools/call of write with arguments {\"row\":7}");
        assertThatThrownBy(() -> toolCall("write", "{\"row\":7}, \"x\":1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("arguments: {\"row\":7}, \"x\":1 (expected: one JSON value)");
    }

    private static List<Long> seqs(JournalRing ring, MessagePattern pattern) {
        return ring.filter(pattern).stream().map(JournalEntry::sequence).toList();
    }
}
