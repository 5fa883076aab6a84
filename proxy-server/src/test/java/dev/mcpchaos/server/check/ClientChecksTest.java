package dev.mcpchaos.server.check;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.journal.JournalEntry;
import dev.mcpchaos.rules.journal.JournalRing;
import dev.mcpchaos.rules.journal.ParamsFingerprint;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The client.* checks on journals written here entry by entry, each with the twin that passes. */
class ClientChecksTest {

    private static final Instant START = Instant.parse("2026-12-02T10:00:00Z");

    /** A journal being written; times in milliseconds from the start. */
    private static final class Journal {
        final JournalRing ring = new JournalRing(100);

        long call(long ms, String session, long id, String tool, String fingerprint, boolean delivered) {
            return add(ms, session, Direction.CLIENT_TO_SERVER, MessageKind.REQUEST, id, "tools/call", tool,
                    fingerprint, delivered);
        }

        /** A tools/call with these arguments (JSON), fingerprinted as the recorder does it. */
        long write(long ms, String session, long id, String tool, String arguments, boolean delivered) {
            ParamsFingerprint.Fingerprints fingerprints = ParamsFingerprint.ofRequest("{\"jsonrpc\":\"2.0\",\"id\":"
                    + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool + "\",\"arguments\":"
                    + arguments + "}}");
            return ring.add(new JournalEntry(0, Duration.ofMillis(ms), START.plusMillis(ms), session, "http",
                    Direction.CLIENT_TO_SERVER, MessageKind.REQUEST, id, "tools/call", tool, null, null, null,
                    List.of(), delivered, fingerprints.params(), fingerprints.write(), null));
        }

        long request(long ms, String session, long id, String method) {
            return add(ms, session, Direction.CLIENT_TO_SERVER, MessageKind.REQUEST, id, method, null, "f-" + method,
                    true);
        }

        long answer(long ms, String session, long id, boolean delivered) {
            return add(ms, session, Direction.SERVER_TO_CLIENT, MessageKind.RESPONSE, id, "tools/call", null, null,
                    delivered);
        }

        long add(long ms, String session, Direction direction, MessageKind kind, long id, String method, String tool,
                 String fingerprint, boolean delivered) {
            return ring.add(new JournalEntry(0, Duration.ofMillis(ms), START.plusMillis(ms), session, "http", direction,
                    kind, id, method, tool, null, null, null, List.of(), delivered, fingerprint, null));
        }

        void answeredHttp(long sequence, int status, Map<String, String> headers) {
            ring.update(sequence, e -> e.withHttp(status, headers));
        }

        List<Violation> judge() {
            return ClientChecks.judge(ring.snapshot());
        }
    }

    @Test
    void aCallSentAgainWithTheSameArgumentsWhileTheFirstHadNoAnswerDeliveredIsAPossibleDuplicateWrite() {
        Journal lost = new Journal();
        lost.call(0, "s1", 2, "write_row", "aaaa", true);
        lost.answer(100, "s1", 2, false); // a fault dropped it
        long retry = lost.call(4_000, "s1", 3, "write_row", "aaaa", true);
        List<Violation> found = lost.judge();
        assertThat(found).hasSize(1);
        Violation v = found.get(0);
        assertThat(v.check()).isEqualTo(Check.DUPLICATE_CALL);
        assertThat(v.index()).isEqualTo(retry);
        assertThat(v.id()).isEqualTo(3L);
        assertThat(v.detail()).contains("tools/call of 'write_row' sent again with the same arguments 4.000s after #1");

        Journal answered = new Journal(); // twin: the first answer reached the client; the second call is a new one
        answered.call(0, "s1", 2, "write_row", "aaaa", true);
        answered.answer(100, "s1", 2, true);
        answered.call(4_000, "s1", 3, "write_row", "aaaa", true);
        assertThat(answered.judge()).isEmpty();

        Journal neverReached = new Journal(); // twin: the first call was dropped before the server saw it
        neverReached.call(0, "s1", 2, "write_row", "aaaa", false);
        neverReached.call(4_000, "s1", 3, "write_row", "aaaa", true);
        assertThat(neverReached.judge()).isEmpty();

        Journal otherArguments = new Journal(); // twin: a retry that asks something else
        otherArguments.call(0, "s1", 2, "write_row", "aaaa", true);
        otherArguments.call(4_000, "s1", 3, "write_row", "bbbb", true);
        assertThat(otherArguments.judge()).isEmpty();
    }

    @Test
    void aResendUnderAFreshIdempotencyKeyIsStillTheSameWriteAndSaysSo() {
        Journal freshKey = new Journal();
        freshKey.write(0, "s1", 2, "write_row", "{\"row\":7,\"request_id\":\"r-1\"}", true);
        freshKey.answer(100, "s1", 2, false); // a fault dropped it
        long resend = freshKey.write(4_000, "s1", 3, "write_row", "{\"request_id\":\"r-2\",\"row\":7}", true);
        List<Violation> found = freshKey.judge();
        assertThat(found).extracting(Violation::check).containsExactly(Check.DUPLICATE_CALL);
        assertThat(found.get(0).index()).isEqualTo(resend);
        assertThat(found.get(0).detail()).contains("tools/call of 'write_row' sent again with the same arguments "
                + "under a new idempotency key 4.000s after #1, which reached the server and had no answer delivered");

        Journal otherRow = new Journal(); // twin: a new key and other real arguments: another write
        otherRow.write(0, "s1", 2, "write_row", "{\"row\":7,\"request_id\":\"r-1\"}", true);
        otherRow.answer(100, "s1", 2, false);
        otherRow.write(4_000, "s1", 3, "write_row", "{\"row\":8,\"request_id\":\"r-2\"}", true);
        assertThat(otherRow.judge()).isEmpty();

        Journal safe = new Journal(); // twin: the first copy never reached the server: a safe retry, new key or not
        safe.write(0, "s1", 2, "write_row", "{\"row\":7,\"Idempotency-Key\":\"k-1\"}", false);
        safe.write(4_000, "s1", 3, "write_row", "{\"row\":7,\"Idempotency-Key\":\"k-2\"}", true);
        assertThat(safe.judge()).isEmpty();
    }

    @Test
    void aRetrySoonerThanRetryAfterSaidIsFlaggedAndOneThatWaitedIsNot() {
        Journal impatient = new Journal();
        long refused = impatient.call(0, "s1", 2, "echo", "aaaa", false);
        impatient.answeredHttp(refused, 503, Map.of("Retry-After", "2"));
        impatient.request(100, "s1", 3, "tools/list"); // another method: not its retry
        long retry = impatient.call(500, "s1", 4, "echo", "aaaa", true);
        List<Violation> found = impatient.judge();
        assertThat(found).extracting(Violation::check).containsExactly(Check.RETRY_AFTER_IGNORED);
        assertThat(found.get(0).index()).isEqualTo(retry);
        assertThat(found.get(0).detail()).contains("tools/call sent again 0.500s after #1 was answered HTTP 503 with "
                + "Retry-After: 2 (expected: no sooner than 2.000s)");

        Journal patient = new Journal();
        long refusedAgain = patient.call(0, "s1", 2, "echo", "aaaa", false);
        patient.answeredHttp(refusedAgain, 429, Map.of("Retry-After", "2"));
        patient.call(2_100, "s1", 3, "echo", "aaaa", true);
        assertThat(patient.judge()).isEmpty();

        Journal byDate = new Journal(); // the HTTP-date form, 3 s after the start
        long dated = byDate.call(0, "s1", 2, "echo", "aaaa", false);
        byDate.answeredHttp(dated, 503, Map.of("Retry-After", "Wed, 02 Dec 2026 10:00:03 GMT"));
        byDate.call(1_000, "s1", 3, "echo", "aaaa", true);
        assertThat(byDate.judge()).extracting(Violation::check).containsExactly(Check.RETRY_AFTER_IGNORED);

        Journal gaveUp = new Journal(); // no retry at all: it waited
        long once = gaveUp.call(0, "s1", 2, "echo", "aaaa", false);
        gaveUp.answeredHttp(once, 503, Map.of("Retry-After", "30"));
        assertThat(gaveUp.judge()).isEmpty();
    }

    @Test
    void aClientThatGoesOnAfterA404WithoutANewInitializeIsFlaggedAndOneThatReinitializesIsNot() {
        Journal stubborn = new Journal();
        stubborn.request(0, "abc", 1, "initialize");
        long expired = stubborn.call(100, "abc", 2, "echo", "aaaa", false);
        stubborn.answeredHttp(expired, 404, Map.of());
        long next = stubborn.request(200, "abc", 3, "tools/list");
        stubborn.request(300, "abc", 4, "tools/list");
        List<Violation> found = stubborn.judge();
        assertThat(found).extracting(Violation::check).containsExactly(Check.NO_REINITIALIZE);
        assertThat(found.get(0).index()).isEqualTo(next);
        assertThat(found.get(0).detail()).contains("#2 (tools/call) was answered HTTP 404 for session abc, then the "
                + "client sent tools/list and more, but no new initialize");
        assertThat(found.get(0).check().severity()).isEqualTo(Severity.ERROR);

        Journal renewed = new Journal();
        renewed.request(0, "abc", 1, "initialize");
        long gone = renewed.call(100, "abc", 2, "echo", "aaaa", false);
        renewed.answeredHttp(gone, 404, Map.of());
        renewed.request(200, "http-2", 1, "initialize");
        renewed.request(300, "def", 2, "tools/list");
        assertThat(renewed.judge()).isEmpty();

        Journal silent = new Journal(); // nothing after the 404: not this check's to judge
        long last = silent.call(100, "abc", 2, "echo", "aaaa", false);
        silent.answeredHttp(last, 404, Map.of());
        assertThat(silent.judge()).isEmpty();
    }

    @Test
    void aRefereeJudgingAJournalReportsItsFindingsEachTimeWithoutCountingThemTwice() {
        Journal lost = new Journal();
        lost.call(0, "s1", 2, "write_row", "aaaa", true);
        lost.call(4_000, "s1", 3, "write_row", "aaaa", true);
        Referee referee = new Referee();
        assertThat(referee.report().count(Check.DUPLICATE_CALL)).as("without the journal: not made").isZero();
        referee.judgeClientsBy(lost.ring::snapshot);
        assertThat(referee.report().count(Check.DUPLICATE_CALL)).isEqualTo(1);
        assertThat(referee.report().count(Check.DUPLICATE_CALL)).isEqualTo(1);
        assertThat(referee.report().firedIds()).containsExactly("client.duplicate-call");
        assertThat(referee.report().failsAt(Severity.ERROR)).isFalse();
    }
}
