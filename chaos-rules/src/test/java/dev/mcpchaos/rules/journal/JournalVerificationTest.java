package dev.mcpchaos.rules.journal;

import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;

import java.util.Map;

import static dev.mcpchaos.rules.journal.Messages.dropped;
import static dev.mcpchaos.rules.journal.Messages.notification;
import static dev.mcpchaos.rules.journal.Messages.request;
import static dev.mcpchaos.rules.journal.Messages.toolCall;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JournalVerificationTest {

    private final Entries journal = new Entries();

    private JournalVerification verify() {
        return journal.ring().verify();
    }

    @Test
    void countsWhatTheClientSent() {
        journal.passed(journal.toolCall("s1", 1, "search", "{\"q\":\"a\"}"));
        journal.passed(journal.response("s1", 1, "tools/call", "search"));
        journal.passed(journal.toolCall("s1", 2, "search", "{\"q\":\"b\"}"));
        journal.passed(journal.toolCall("s1", 3, "fetch", "{}"));

        assertThat(verify().client().sent(toolCall("search")).times(2)).extracting(JournalEntry::id)
                .containsExactly(1L, 2L);
        verify().client().sent(toolCall("search")).atLeast(1);
        verify().client().sent(toolCall("search")).atMost(2);
        verify().client().sent(toolCall("fetch")).once();
        verify().client().sent(toolCall("delete*")).never();
        verify().client().sent(toolCall("*")).times(3);
        verify().server().sent(toolCall("search")).once(); // the response
    }

    @Test
    void aWrongCountSaysWhatWasExpectedAndListsWhatWasSent() {
        journal.passed(journal.toolCall("s1", 1, "search", "{\"q\":\"a\"}"));
        journal.at(1500).passed(journal.toolCall("s1", 2, "search", "{\"q\":\"a\"}"));
        journal.passed(journal.toolCall("s1", 3, "search", "{\"q\":\"a\"}"));

        assertThatThrownBy(() -> verify().client().sent(toolCall("search")).times(2))
                .isInstanceOf(AssertionFailedError.class)
                .hasMessageStartingWith("Expected the client to send tools/call of search exactly 2 times,\n"
                        + "but the client sent it 3 times.\nMatching entries (3):\n  #1 +0.000s s1 c->s request id=1"
                        + " tools/call search params=")
                .hasMessageContaining("\n  #2 +1.500s s1 c->s request id=2 tools/call search")
                .hasMessageEndingWith("The journal holds 3 entries (#1..#3), none dropped for capacity.");
        assertThatThrownBy(() -> verify().client().sent(toolCall("search")).never())
                .hasMessageStartingWith("Expected the client to send tools/call of search never,\n"
                        + "but the client sent it 3 times.");
        assertThatThrownBy(() -> verify().client().sent(toolCall("fetch")).atLeast(1))
                .hasMessageStartingWith("Expected the client to send tools/call of fetch at least once,\n"
                        + "but the client sent it never.\nMatching entries: none\n");
        assertThatThrownBy(() -> verify().client().sent(toolCall("search")).atMost(1))
                .hasMessageStartingWith("Expected the client to send tools/call of search at most once,");
        assertThatThrownBy(() -> verify().client().sent(toolCall("search")).times(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("count: -1 (expected: >= 0)");
    }

    @Test
    void aFailureSaysWhenEntriesWereDroppedForCapacity() {
        Entries small = new Entries(2);
        for (int i = 1; i <= 5; i++) {
            small.passed(small.toolCall("s1", i, "search", "{}"));
        }
        assertThat(small.ring().snapshot().evicted()).isEqualTo(3);
        assertThatThrownBy(() -> small.ring().verify().client().sent(toolCall("search")).times(5))
                .hasMessageContaining("but the client sent it 2 times.")
                .hasMessageEndingWith("The journal holds 2 entries (#4..#5), 3 older entries dropped for capacity 2:"
                        + " counts may be short.");
    }

    @Test
    void retriedAfterADroppedAnswerWithTheSameArguments() {
        journal.passed(journal.toolCall("s1", 1, "write", "{\"row\":7,\"v\":\"x\"}"));
        long lost = journal.response("s1", 1, "tools/call", "write");
        journal.fault(lost, "lose-answer", "drop", "dropped");
        // The SDK puts a fresh progress token in _meta each time: not part of the arguments.
        journal.passed(journal.request("s1", 2, "tools/call", "write",
                "{\"arguments\":{\"v\":\"x\",\"row\":7.0},\"name\":\"write\",\"_meta\":{\"progressToken\":2}}"));

        ClientVerification.Retry retry = verify().client().retriedAfter(dropped(toolCall("write")))
                .withSameArguments();
        assertThat(retry.original().id()).isEqualTo(1L);
        assertThat(retry.lost().sequence()).isEqualTo(lost);
        assertThat(retry.retry().id()).isEqualTo(2L);
    }

    @Test
    void aRetryUnderAFreshIdempotencyKeyHasTheSameArguments() {
        journal.passed(journal.toolCall("s1", 1, "write", "{\"row\":7,\"idempotency_key\":\"k-1\"}"));
        journal.fault(journal.response("s1", 1, "tools/call", "write"), "lose-answer", "drop", "dropped");
        journal.passed(journal.toolCall("s1", 2, "write", "{\"row\":7,\"idempotency_key\":\"k-2\"}"));

        ClientVerification.Retry retry = verify().client().retriedAfter(dropped(toolCall("write")))
                .withSameArguments();
        assertThat(retry.retry().paramsFingerprint()).as("the exact params differ: the key")
                .isNotEqualTo(retry.original().paramsFingerprint());

        Entries otherRow = new Entries(); // twin: other real arguments under the new key
        otherRow.passed(otherRow.toolCall("s1", 1, "write", "{\"row\":7,\"idempotency_key\":\"k-1\"}"));
        otherRow.fault(otherRow.response("s1", 1, "tools/call", "write"), "lose-answer", "drop", "dropped");
        otherRow.passed(otherRow.toolCall("s1", 2, "write", "{\"row\":8,\"idempotency_key\":\"k-2\"}"));
        assertThatThrownBy(() -> otherRow.ring().verify().client().retriedAfter(dropped(toolCall("write")))
                .withSameArguments())
                .hasMessageStartingWith("Expected the retry #3 to have the same arguments as the first request,\n"
                        + "but the params differ, idempotency keys aside (");
    }

    @Test
    void retriedAfterADroppedRequest() {
        long lost = journal.toolCall("s1", 1, "search", "{\"q\":\"a\"}");
        journal.fault(lost, "lose", "drop", "dropped");
        journal.passed(journal.toolCall("s1", 2, "search", "{\"q\":\"b\"}"));

        verify().client().retriedAfter(dropped(toolCall("search")));
        assertThatThrownBy(() -> verify().client().retriedAfter(dropped(toolCall("search"))).withSameArguments())
                .hasMessageStartingWith("Expected the retry #2 to have the same arguments as the first request,\n"
                        + "but the params differ, idempotency keys aside (")
                .hasMessageContaining("The first request, the lost message and the retry (2):\n  #1 ")
                .hasMessageContaining("drop(rule 'lose'): dropped; not delivered");
    }

    @Test
    void aLostInitializeAnswerFindsItsRequestUnderTheProvisionalSessionName() {
        journal.passed(journal.request("http-1", 0, "initialize", null, "{\"protocolVersion\":\"2025-06-18\"}"));
        journal.fault(journal.response("abc", 0, "initialize", null), "lose-init", "drop", "dropped");
        journal.passed(journal.request("http-2", 0, "initialize", null, "{\"protocolVersion\":\"2025-06-18\"}"));

        ClientVerification.Retry retry = verify().client().retriedAfter(dropped(Messages.response("initialize")))
                .withSameArguments();
        assertThat(retry.original().session()).isEqualTo("http-1");
        assertThat(retry.retry().session()).isEqualTo("http-2");
    }

    @Test
    void noRetryFailsWithTheLostMessageAndWhatCameAfter() {
        journal.passed(journal.toolCall("s1", 1, "write", "{}"));
        journal.fault(journal.response("s1", 1, "tools/call", "write"), "lose-answer", "drop", "dropped");
        journal.passed(journal.toolCall("s1", 2, "read", "{}"));

        assertThatThrownBy(() -> verify().client().retriedAfter(dropped(toolCall("write"))))
                .hasMessageStartingWith("Expected the client to send tools/call of write again after #2 (dropped "
                        + "tools/call of write),\nbut it did not.\nThe lost message and what the client sent after it"
                        + " (2):\n  #2 +0.000s s1 s->c response id=1 tools/call write drop(rule 'lose-answer'): "
                        + "dropped; not delivered\n  #3 ");
    }

    @Test
    void nothingDroppedFailsRatherThanPassing() {
        journal.passed(journal.toolCall("s1", 1, "write", "{}"));
        journal.passed(journal.response("s1", 1, "tools/call", "write"));
        journal.passed(journal.toolCall("s1", 2, "write", "{}"));

        assertThatThrownBy(() -> verify().client().retriedAfter(dropped(toolCall("write"))))
                .hasMessageStartingWith("Expected the client to retry after dropped tools/call of write,\n"
                        + "but the journal holds no dropped tools/call of write.\nEntries a rule acted on: none\n");
    }

    @Test
    void reinitializedAfterSessionExpire() {
        journal.passed(journal.request("-", 0, "initialize", null, "{}"));
        long hit = journal.toolCall("s1", 1, "search", "{}");
        journal.fault(hit, "expire", "session_expire", "session expired; this request answered 404")
                .http(hit, 404, Map.of());
        journal.passed(journal.request("-", 0, "initialize", null, "{}"));

        assertThat(verify().client().reinitializedAfter("session_expire").sequence()).isEqualTo(3);
        assertThat(verify().client().reinitializedAfter("expire").sequence()).isEqualTo(3); // by rule name too
    }

    @Test
    void notReinitializedFails() {
        journal.passed(journal.request("-", 0, "initialize", null, "{}"));
        long hit = journal.toolCall("s1", 1, "search", "{}");
        journal.fault(hit, "expire", "session_expire", "session expired; this request answered 404");
        journal.toolCall("s1", 2, "search", "{}");

        assertThatThrownBy(() -> verify().client().reinitializedAfter("session_expire"))
                .hasMessageStartingWith("Expected the client to send initialize again after #2 (hit by "
                        + "session_expire),\nbut it did not.\nThat message and what the client sent after it (2):");
        assertThatThrownBy(() -> verify().client().reinitializedAfter("crash"))
                .hasMessageStartingWith("Expected the client to re-initialize after crash,\nbut no message was hit by"
                        + " a rule or fault named crash.\nEntries a rule acted on (1):\n  #2 ");
    }

    @Test
    void cancelledWhatItGaveUpOn() {
        journal.passed(journal.toolCall("s1", 4, "slow", "{}"));
        journal.passed(journal.cancelled("s1", 4));

        assertThat(verify().client().cancelled(toolCall("slow"))).extracting(JournalEntry::requestId)
                .containsExactly(4L);
        verify().client().sent(notification("notifications/cancelled")).once();
    }

    @Test
    void aCancellationOfAnotherRequestOrSessionDoesNotCount() {
        journal.passed(journal.toolCall("s1", 4, "slow", "{}"));
        journal.passed(journal.cancelled("s2", 4)); // another session's request 4
        journal.passed(journal.cancelled("s1", 5));

        assertThatThrownBy(() -> verify().client().cancelled(toolCall("slow")))
                .hasMessageStartingWith("Expected the client to send notifications/cancelled for tools/call of slow,\n"
                        + "but none of its notifications/cancelled names one of those requests.\n"
                        + "The requests and the cancellations (3):\n  #1 +0.000s s1 c->s request id=4 tools/call slow")
                .hasMessageContaining("\n  #2 +0.000s s2 c->s notification notifications/cancelled requestId=4 "
                        + "delivered");
        assertThatThrownBy(() -> verify().client().cancelled(toolCall("fast")))
                .hasMessageStartingWith("Expected the client to cancel tools/call of fast,\nbut it sent no tools/call"
                        + " of fast.");
        Entries quiet = new Entries();
        quiet.passed(quiet.toolCall("s1", 4, "slow", "{}"));
        assertThatThrownBy(() -> quiet.ring().verify().client().cancelled(toolCall("slow")))
                .hasMessageContaining("but it sent no notifications/cancelled.");
    }

    @Test
    void honoredRetryAfterWhenTheNextRequestWaited() {
        long refused = journal.at(1000).toolCall("s1", 1, "search", "{}");
        journal.fault(refused, "busy", "http_status", "answered HTTP 503").http(refused, 503,
                Map.of("Retry-After", "2"));
        // Another request the client had in flight is not a retry: it does not count.
        journal.at(1010).passed(journal.request("s1", 9, "tools/list", null, "{}"));
        journal.at(3000).passed(journal.toolCall("s1", 2, "search", "{}"));

        verify().client().honoredRetryAfter();
    }

    @Test
    void aClientThatCameBackTooSoonFails() {
        long refused = journal.at(1000).toolCall("s1", 1, "search", "{}");
        journal.fault(refused, "busy", "http_status", "answered HTTP 503").http(refused, 503,
                Map.of("Retry-After", "2"));
        journal.at(1050).passed(journal.toolCall("s1", 2, "search", "{}"));

        assertThatThrownBy(() -> verify().client().honoredRetryAfter())
                .hasMessageStartingWith("Expected the client to wait as Retry-After asked after each of 1 answers with"
                        + " it,\nbut it did not: #2 came 0.050s after #1 (HTTP 503, Retry-After: 2; expected: >= "
                        + "2.000s).\nThose answers and the requests that came too soon (2):\n"
                        + "  #1 +1.000s s1 c->s request id=1 tools/call search params=")
                .hasMessageContaining(" HTTP 503 Retry-After: 2 http_status(rule 'busy'): answered HTTP 503; not "
                        + "delivered\n  #2 +1.050s");
    }

    @Test
    void retryAfterAsAnHttpDate() {
        long refused = journal.at(0).toolCall("s1", 1, "search", "{}");
        journal.http(refused, 429, Map.of("Retry-After", "Wed, 02 Dec 2026 06:00:05 GMT"));
        journal.at(4000).passed(journal.toolCall("s1", 2, "search", "{}"));
        assertThatThrownBy(() -> verify().client().honoredRetryAfter())
                .hasMessageContaining("#2 came at 2026-12-02T06:00:04Z, before 2026-12-02T06:00:05Z (HTTP 429");

        Entries patient = new Entries();
        long again = patient.at(0).toolCall("s1", 1, "search", "{}");
        patient.http(again, 429, Map.of("Retry-After", "Wed, 02 Dec 2026 06:00:05 GMT"));
        patient.at(5000).passed(patient.toolCall("s1", 2, "search", "{}"));
        patient.ring().verify().client().honoredRetryAfter();
    }

    @Test
    void noRetryAfterInTheJournalFails() {
        journal.passed(journal.toolCall("s1", 1, "search", "{}"));
        assertThatThrownBy(() -> verify().client().honoredRetryAfter())
                .hasMessageStartingWith("Expected the client to honor Retry-After,\nbut no answer in the journal was a"
                        + " 429 or 503 with Retry-After.");
    }

    @Test
    void requestsMatchByMethod() {
        journal.passed(journal.request("-", 0, "initialize", null, "{}"));
        journal.passed(journal.response("-", 0, "initialize", null));
        verify().client().sent(request("initialize")).once();
        verify().client().sent(request("tools/*")).never();
        verify().server().sent(Messages.response("initialize")).once();
    }
}
