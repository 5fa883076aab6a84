package dev.mcpchaos.server.drill;

import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.Rules;
import dev.mcpchaos.rules.fault.PrimingDropFault;
import dev.mcpchaos.rules.fault.SseRetryFault;
import dev.mcpchaos.rules.journal.JournalEntry;
import dev.mcpchaos.rules.journal.JournalSnapshot;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * The 2025 era's SSE scenarios of the catalogue (#37): a cut answer resumed with
 * {@code Last-Event-ID}, the {@code retry:} field honoured, the GET stream dropped and opened
 * again, and the priming event missing. Kept apart from {@link Catalogue} and
 * {@link Graders}, which only list them.
 *
 * <p>Each is graded from the journal alone: a server's message that reached the client on a
 * stream the client resumed carries the {@code Last-Event-ID} of the GET that resumed it
 * ({@link JournalEntry#resumedAfter()}). A client that opens a stream again without
 * {@code Last-Event-ID} is not seen as resuming: nothing the fault took is redelivered to it.
 * The drill's demo server starts every SSE stream with a priming event (an id and empty data, for
 * clients of 2025-11-25), keeps every stream's events, and replays them after the id a GET names.
 */
final class SseScenarios {

    private static final Set<TransportKind> HTTP = Set.of(TransportKind.HTTP);
    private static final Set<Era> SESSIONS = Set.of(Era.SESSIONS);

    /**
     * The reconnection delay {@code retry-field} asks for: long enough to tell from a client's own
     * first delay (the TypeScript SDK's default is 1 s; the drill's test client uses 250 ms).
     */
    static final Duration RETRY = Duration.ofMillis(1500);

    private static final String SPEC = "basic/transports";

    private SseScenarios() {
    }

    /** The four scenarios, in the order of docs/drill.md. */
    static List<Scenario> all() {
        return List.of(
                new Scenario("sse-resume", "an SSE answer with event ids is cut (the connection closes at the "
                        + "first progress event of a tools/call of slow)",
                        List.of(Rules.disconnect("sse-resume", "client").onMethod("notifications/progress").times(1)),
                        "resumes with a GET and Last-Event-ID, and gets the rest of the answer",
                        SPEC + "#resumability-and-redelivery (2025-06-18, 2025-11-25: to resume after a "
                                + "disconnection the client SHOULD issue an HTTP GET with Last-Event-ID)",
                        Level.SHOULD, HTTP, SESSIONS,
                        "pass when, after the cut, the answer to a tools/call reached the client on a stream it "
                                + "resumed with Last-Event-ID; fail when none did",
                        resumesCutAnswer(), null),
                new Scenario("priming-missing", "the priming event of an SSE answer is removed (priming_drop at the "
                        + "first progress event of a tools/call of slow), and the stream is cut there, before its first "
                        + "message",
                        List.of(Rules.primingDrop("priming-missing").onMethod("notifications/progress").times(1),
                                Rules.disconnect("priming-missing-cut", "client").onMethod("notifications/progress")
                                        .times(1)),
                        "cannot resume (it holds no event id for Last-Event-ID) and does not crash or hang: "
                                + "times the request out and reports it, or sends a read again under a new id",
                        SPEC + "#sending-messages-to-the-server (2025-11-25, item 6: the server SHOULD send a "
                                + "priming event, an event id and empty data, to prime the client to reconnect); "
                                + "the text names no fallback without one: basic/lifecycle#timeouts (SHOULD)",
                        Level.SHOULD, HTTP, SESSIONS,
                        "pass when, after the cut, a request of the client was answered or it ended on its own, and it "
                                + "sent no GET with Last-Event-ID naming the removed priming event (it never got it); "
                                + "fail when it hung to the timeout, or resumed with that id",
                        goesOnWithoutPriming(), null),
                new Scenario("retry-field", "an SSE answer's first progress event says retry: "
                        + RETRY.toMillis() + ", then the answer is cut",
                        List.of(Rules.sseRetry("retry-field", RETRY).onMethod("notifications/progress").times(1),
                                Rules.disconnect("retry-field-cut", "client").onMethod("notifications/progress")
                                        .after(1).times(1)),
                        "waits as long as retry: says before it reconnects (or does not reconnect)",
                        SPEC + "#sending-messages-to-the-server (2025-11-25, item 6: the client MUST respect the "
                                + "retry field, waiting the given number of milliseconds before attempting to "
                                + "reconnect)",
                        Level.MUST, HTTP, SESSIONS,
                        "pass when the first message on a stream the client resumed came no sooner than retry: "
                                + "after the cut, or it did not resume (sse-resume judges that); fail when it came "
                                + "sooner",
                        honoursRetryField(), null),
                new Scenario("get-stream-dropped", "the session's GET stream is dropped at its first message "
                        + "(the notifications/message after logging/setLevel)",
                        List.of(Rules.getStreamDrop("get-stream-dropped").onMethod("notifications/message").times(1)),
                        "opens it again with Last-Event-ID, and gets the message it lost",
                        SPEC + "#listening-for-messages-from-the-server and #resumability-and-redelivery (after a "
                                + "disconnection, network failure or server-initiated closure, the client SHOULD "
                                + "issue an HTTP GET with Last-Event-ID)",
                        Level.SHOULD, HTTP, SESSIONS,
                        "pass when the message dropped with the stream reached the client later on a GET stream it "
                                + "resumed with Last-Event-ID; fail when it never did",
                        reopensGetStream(), null));
    }

    /** After the cut, the answer to a call reached the client on a stream it resumed. */
    static Grader resumesCutAnswer() {
        return run -> {
            List<JournalEntry> hit = Graders.hits(run, e -> !e.delivered());
            if (hit.isEmpty()) {
                return Graders.notExercised(run);
            }
            JournalEntry cut = hit.get(0);
            List<JournalEntry> resumed = resumedAfter(run, cut);
            for (JournalEntry e : resumed) {
                if (e.kind() == MessageKind.RESPONSE || e.kind() == MessageKind.ERROR) {
                    return new Grader.Finding(Outcome.PASS, "the answer was cut at #" + cut.sequence()
                            + "; the client resumed with Last-Event-ID: " + e.resumedAfter() + " and got the answer #"
                            + e.sequence() + " " + seconds(e.elapsed().minus(cut.elapsed())) + " later",
                            Graders.lines(cut, e));
                }
            }
            return new Grader.Finding(Outcome.FAIL, "the answer was cut at #" + cut.sequence()
                    + " and no answer reached the client on a stream resumed with Last-Event-ID"
                    + (resumed.isEmpty() ? " (it resumed none)" : " (it resumed, but got no answer there)")
                    + "; the client " + Graders.exit(run), Graders.lines(cut));
        };
    }

    /**
     * After the priming event was removed and the stream cut at its first message: the client did
     * not hang (a later request of it was answered, or it ended on its own) and did not resume
     * with the id of the priming event it never got. The ids removed are in the fault's detail.
     */
    static Grader goesOnWithoutPriming() {
        return run -> {
            List<JournalEntry> hit = Graders.hits(run, e -> hadPrimingDropped(e) && !e.delivered());
            if (hit.isEmpty()) {
                return Graders.notExercised(run);
            }
            JournalEntry cut = hit.get(0);
            Set<String> removed = removedPrimingIds(cut);
            for (JournalEntry e : resumedAfter(run, cut)) {
                if (removed.contains(e.resumedAfter())) {
                    return new Grader.Finding(Outcome.FAIL, "the priming event was removed and the stream cut at #"
                            + cut.sequence() + ", yet the client resumed with Last-Event-ID: " + e.resumedAfter()
                            + ", an id it never received (#" + e.sequence() + ")", Graders.lines(cut, e));
                }
            }
            JournalSnapshot journal = run.journal();
            for (JournalEntry request : journal.filter(e -> e.fromClient() && e.kind() == MessageKind.REQUEST
                    && e.sequence() > cut.sequence() && e.session().equals(cut.session()))) {
                JournalEntry answer = Graders.answerTo(journal, request);
                if (answer != null && answer.reachedClient()) {
                    return new Grader.Finding(Outcome.PASS, "the priming event was removed and the stream cut at #"
                            + cut.sequence() + " (" + Graders.faultsOf(cut) + "); the client did not hang: it sent #"
                            + request.sequence() + " (" + request.method() + ") " + seconds(request.elapsed()
                            .minus(cut.elapsed())) + " later and got its answer #" + answer.sequence(),
                            Graders.lines(cut, request, answer));
                }
            }
            if (run.clientExit() != null) {
                return new Grader.Finding(Outcome.PASS, "the priming event was removed and the stream cut at #"
                        + cut.sequence() + "; no later request was answered, but the client did not hang: it "
                        + Graders.exit(run) + " on its own", Graders.lines(cut));
            }
            return new Grader.Finding(Outcome.FAIL, "the priming event was removed and the stream cut at #"
                    + cut.sequence() + "; after it no request of the client was answered and it did not end: it hung "
                    + "(waiting for a resumption it had no event id for?) and " + Graders.exit(run),
                    Graders.lines(cut));
        };
    }

    /** Whether the scenario's {@code priming_drop} rule removed a priming event before this message. */
    private static boolean hadPrimingDropped(JournalEntry e) {
        return e.faults().stream().anyMatch(action -> action.fault().equals(PrimingDropFault.TYPE.name()));
    }

    /** The ids of the priming events removed before {@code e}, as its {@code priming_drop} detail names them. */
    static Set<String> removedPrimingIds(JournalEntry e) {
        Set<String> ids = new java.util.LinkedHashSet<>();
        for (JournalEntry.FaultAction action : e.faults()) {
            if (action.fault().equals(PrimingDropFault.TYPE.name())) {
                ids.addAll(PrimingDropFault.removedIds(action.detail()));
            }
        }
        return ids;
    }

    /** The first message of a resumed stream after the cut came no sooner than the retry: field asked. */
    static Grader honoursRetryField() {
        return run -> {
            List<JournalEntry> retried = Graders.hits(run, SseScenarios::toldToRetry);
            List<JournalEntry> cuts = Graders.hits(run, e -> !e.delivered());
            if (retried.isEmpty() || cuts.isEmpty()) {
                return Graders.notExercised(run);
            }
            JournalEntry told = retried.get(0);
            long retry = RETRY.toMillis(); // what the scenario's own sse_retry rule wrote
            JournalEntry cut = cuts.get(0);
            List<JournalEntry> resumed = resumedAfter(run, cut);
            if (resumed.isEmpty()) {
                return new Grader.Finding(Outcome.PASS, "#" + told.sequence() + " said retry: " + retry
                        + ", the answer was cut at #" + cut.sequence() + ", and the client did not reconnect "
                        + "with Last-Event-ID (sse-resume judges that); it " + Graders.exit(run),
                        Graders.lines(told, cut));
            }
            JournalEntry first = resumed.get(0);
            Duration waited = first.elapsed().minus(cut.elapsed());
            Outcome outcome = waited.toMillis() >= retry ? Outcome.PASS : Outcome.FAIL;
            return new Grader.Finding(outcome, "#" + told.sequence() + " said retry: " + retry + " and the answer "
                    + "was cut at #" + cut.sequence() + "; the stream resumed with Last-Event-ID: "
                    + first.resumedAfter() + " brought #" + first.sequence() + " " + seconds(waited) + " later"
                    + (outcome == Outcome.PASS ? "" : " (sooner than retry: asked)"), Graders.lines(told, cut, first));
        };
    }

    /** The message dropped with the GET stream reached the client later, on a GET stream it resumed. */
    static Grader reopensGetStream() {
        return run -> {
            List<JournalEntry> hit = Graders.hits(run, e -> !e.delivered());
            if (hit.isEmpty()) {
                return Graders.notExercised(run);
            }
            JournalEntry dropped = hit.get(0);
            for (JournalEntry e : resumedAfter(run, dropped)) {
                if (Objects.equals(e.method(), dropped.method()) && e.kind() == dropped.kind()) {
                    return new Grader.Finding(Outcome.PASS, "the GET stream was dropped at #" + dropped.sequence()
                            + "; the client opened it again with Last-Event-ID: " + e.resumedAfter()
                            + " and got the message again as #" + e.sequence() + " "
                            + seconds(e.elapsed().minus(dropped.elapsed())) + " later", Graders.lines(dropped, e));
                }
            }
            return new Grader.Finding(Outcome.FAIL, "the GET stream was dropped at #" + dropped.sequence()
                    + " and the message it carried never reached the client: it did not open the stream again with "
                    + "Last-Event-ID (a GET without it gets nothing of what was lost); the client "
                    + Graders.exit(run), Graders.lines(dropped));
        };
    }

    /** The server's messages that reached the client on a resumed stream after {@code after}, oldest first. */
    private static List<JournalEntry> resumedAfter(Grader.Run run, JournalEntry after) {
        return run.journal().filter(e -> e.sequence() > after.sequence() && e.reachedClient()
                && e.resumedAfter() != null && e.session().equals(after.session()));
    }

    /** Whether the scenario's {@code sse_retry} rule wrote its retry: field on this message. */
    private static boolean toldToRetry(JournalEntry e) {
        return e.faults().stream().anyMatch(action -> action.fault().equals(SseRetryFault.TYPE.name()));
    }

    static String seconds(Duration d) {
        return String.format(Locale.ROOT, "%.3fs", d.toNanos() / 1e9);
    }
}
