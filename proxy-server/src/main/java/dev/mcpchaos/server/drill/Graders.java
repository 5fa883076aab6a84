package dev.mcpchaos.server.drill;

import static dev.mcpchaos.rules.journal.Messages.any;
import static dev.mcpchaos.rules.journal.Messages.notReachedClient;
import static dev.mcpchaos.rules.journal.Messages.notReachedServer;
import static dev.mcpchaos.rules.journal.Messages.toolCall;

import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.journal.ClientVerification;
import dev.mcpchaos.rules.journal.JournalEntry;
import dev.mcpchaos.rules.journal.JournalSnapshot;
import dev.mcpchaos.rules.journal.MessagePattern;
import dev.mcpchaos.server.host.McpRevisions;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * The graders of the catalogue, each over the journal's own checks ({@link ClientVerification}).
 * Every one answers {@link Outcome#NOT_EXERCISED} first when no message was hit by the
 * scenario's rules: a client that was never put to the test passes nothing.
 */
final class Graders {

    private static final int MAX_EVIDENCE = 12;

    private Graders() {
    }

    /**
     * The session goes on: after the first message the rules hit, the client sent a request
     * whose answer reached it. With {@code cleanExit}, the client must also have exited 0 (a
     * late answer must not crash it).
     */
    static Grader goesOn(boolean cleanExit) {
        return run -> {
            List<JournalEntry> hit = hits(run, e -> true);
            if (hit.isEmpty()) {
                return notExercised(run);
            }
            JournalEntry first = hit.get(0);
            JournalSnapshot journal = run.journal();
            for (JournalEntry request : journal.filter(e -> e.fromClient() && e.kind() == MessageKind.REQUEST
                    && e.sequence() > first.sequence())) {
                JournalEntry answer = answerTo(journal, request);
                if (answer != null && answer.reachedClient()) {
                    if (cleanExit && !Integer.valueOf(0).equals(run.clientExit())) {
                        return new Grader.Finding(Outcome.FAIL, "the session went on, but the client "
                                + exit(run) + " (expected: exit 0)", lines(first, request, answer));
                    }
                    String cancelled = cancelledBefore(journal, first) ? "; it cancelled the request it gave up on"
                            : "";
                    return new Grader.Finding(Outcome.PASS, "after #" + first.sequence() + " (" + faultsOf(first)
                            + ") the client sent #" + request.sequence() + " and got its answer #"
                            + answer.sequence() + cancelled, lines(first, request, answer));
                }
            }
            List<JournalEntry> after = new ArrayList<>();
            after.add(first);
            after.addAll(journal.filter(e -> e.sequence() > first.sequence()));
            return new Grader.Finding(Outcome.FAIL, "after #" + first.sequence() + " (" + faultsOf(first)
                    + ") no request of the client was answered: the session did not go on; the client "
                    + exit(run), lines(after));
        };
    }

    /**
     * A late answer, for a client that gave up on its request first: the answer to the request
     * was held for {@code delay}; a client that, before the answer left the proxy, cancelled the
     * request, sent another request or ended, had given up on it, and is then graded as
     * {@link #goesOn goesOn(true)} grades (it goes on, and exits 0). A client that did none of
     * these waited the delay out (its own timeout is longer): the answer came in time for it,
     * nothing was late, so the scenario was not exercised, with the journal lines that show it.
     */
    static Grader ignoresLateAnswer(Duration delay) {
        Grader goesOn = goesOn(true);
        return run -> {
            List<JournalEntry> held = hits(run, e -> !e.fromClient());
            if (held.isEmpty()) {
                return notExercised(run);
            }
            JournalEntry late = held.get(0);
            Instant released = late.wallTime().plus(delay);
            JournalSnapshot journal = run.journal();
            List<JournalEntry> meanwhile = journal.filter(e -> e.fromClient() && e.sequence() > late.sequence()
                    && e.wallTime().isBefore(released) && (e.kind() == MessageKind.REQUEST
                    || "notifications/cancelled".equals(e.method())));
            boolean endedFirst = run.clientEnded() != null && run.clientEnded().isBefore(released);
            if (meanwhile.isEmpty() && !endedFirst) {
                List<JournalEntry> next = journal.filter(e -> e.fromClient() && e.sequence() > late.sequence());
                List<JournalEntry> shown = new ArrayList<>();
                shown.add(late);
                next.stream().findFirst().ifPresent(shown::add);
                return new Grader.Finding(Outcome.NOT_EXERCISED, "the client waited the " + delay.toMillis()
                        + " ms delay out: it neither cancelled #" + late.sequence() + "'s request, nor sent another "
                        + "request, nor ended before the answer left the proxy, so its own timeout is longer than the "
                        + "delay and the answer was not late for it; the client " + exit(run), lines(shown));
            }
            return goesOn.grade(run);
        };
    }

    /**
     * The server died under the client (stdio): the client notices and ends on its own (reports it
     * and stops, or starts the server again and goes on), within the drill's timeout. A client
     * that has to be stopped at the timeout hangs on a dead server: fail. Its exit code is not
     * judged: reporting the crash by a non-zero exit is stopping cleanly.
     */
    static Grader endsAfterServerCrash() {
        return run -> {
            List<JournalEntry> hit = hits(run, e -> true);
            if (hit.isEmpty()) {
                return notExercised(run);
            }
            JournalEntry first = hit.get(0);
            if (run.clientExit() == null) {
                return new Grader.Finding(Outcome.FAIL, "the server was killed at #" + first.sequence()
                        + " and the client hung on: it " + exit(run), lines(first));
            }
            return new Grader.Finding(Outcome.PASS, "the server was killed at #" + first.sequence()
                    + " and the client noticed and ended on its own: it " + exit(run), lines(first));
        };
    }

    /**
     * No blind resend: the answer to a {@code tools/call} was lost after the server received it,
     * and the client did not send the same call again (nor any duplicate write).
     */
    static Grader noResendAfterLostAnswer() {
        return run -> {
            List<JournalEntry> lost = hits(run, e -> !e.fromClient() && !e.delivered());
            if (lost.isEmpty()) {
                return notExercised(run);
            }
            MessagePattern lostAnswers = notReachedClient(byRules(run, toolCall("*")));
            try {
                ClientVerification client = run.journal().verify().client();
                client.notRetriedAfter(lostAnswers);
                client.duplicateWrites(toolCall("*")).never();
            } catch (AssertionError e) {
                return new Grader.Finding(Outcome.FAIL, firstLine(e), restLines(e));
            }
            return new Grader.Finding(Outcome.PASS, "the answer #" + lost.get(0).sequence()
                    + " was lost and the client did not send that call again; it " + exit(run), lines(lost));
        };
    }

    /**
     * A dropped request is sent again, under a new id: the request never reached the server, so
     * resending is a safe retry (the catalogue's recommendation: the spec only asks for a timeout,
     * at SHOULD); reusing its id breaks basic#requests, a MUST, and is graded at that level
     * whatever the scenario's. Any method: the scenario's rules say which requests are dropped.
     */
    static Grader resendsDroppedRequest() {
        return run -> {
            List<JournalEntry> dropped = hits(run, e -> e.fromClient() && !e.delivered());
            if (dropped.isEmpty()) {
                return notExercised(run);
            }
            ClientVerification.Retry retry;
            try {
                retry = run.journal().verify().client().retriedAfter(notReachedServer(byRules(run, any())));
            } catch (AssertionError e) {
                return new Grader.Finding(Outcome.FAIL, firstLine(e), restLines(e));
            }
            JournalEntry original = retry.original();
            JournalEntry again = retry.retry();
            // A sessionless (2026-07-28) request is a session of its own to the journal: there the
            // ids of all the client's requests are compared, the dropped one never having been answered.
            boolean sessionless = original != null && McpRevisions.isSessionless(StatelessGraders.version(original));
            if (original != null && again.id() != null && again.id().equals(original.id())
                    && (sessionless || again.session().equals(original.session()))) {
                // The scenario only recommends resending; reusing the id breaks a MUST (basic#requests).
                return new Grader.Finding(Outcome.FAIL, "the client resent #" + original.sequence() + " as #"
                        + again.sequence() + " under the same id " + again.id() + (sessionless
                        ? ", the id of a request still unanswered (basic#requests 2026-07-28: MUST NOT match it)"
                        : " in the same session (a request id must not be reused: basic#requests, MUST)"),
                        lines(original, again), Level.MUST);
            }
            return new Grader.Finding(Outcome.PASS, "the request #" + dropped.get(0).sequence()
                    + " was dropped and the client sent it again as #" + again.sequence() + " under a new id",
                    lines(dropped.get(0), again));
        };
    }

    /** After a 503 with {@code Retry-After}, the client's retry waited as long as it said. */
    static Grader honorsRetryAfter() {
        return run -> {
            List<JournalEntry> told = hits(run, e -> e.httpStatus() != null
                    && e.httpHeader("Retry-After") != null);
            if (told.isEmpty()) {
                return notExercised(run);
            }
            try {
                run.journal().verify().client().honoredRetryAfter();
            } catch (AssertionError e) {
                return new Grader.Finding(Outcome.FAIL, firstLine(e), restLines(e));
            }
            JournalEntry t = told.get(0);
            List<JournalEntry> next = run.journal().filter(e -> e.fromClient() && e.kind() == MessageKind.REQUEST
                    && e.sequence() > t.sequence() && Objects.equals(e.method(), t.method())
                    && Objects.equals(e.tool(), t.tool()));
            if (next.isEmpty()) {
                return new Grader.Finding(Outcome.PASS, "#" + t.sequence() + " was answered " + t.httpStatus()
                        + " with Retry-After: " + t.httpHeader("Retry-After") + " and the client did not retry",
                        lines(t));
            }
            JournalEntry retry = next.get(0);
            return new Grader.Finding(Outcome.PASS, "#" + t.sequence() + " was answered " + t.httpStatus()
                    + " with Retry-After: " + t.httpHeader("Retry-After") + "; the retry #" + retry.sequence()
                    + " came " + seconds(t, retry) + " later", lines(t, retry));
        };
    }

    /** After a {@code 404} on its session, the client started a new one with {@code initialize}. */
    static Grader reinitializes() {
        return run -> {
            List<JournalEntry> hit = hits(run, e -> true);
            if (hit.isEmpty()) {
                return notExercised(run);
            }
            JournalEntry again;
            try {
                again = run.journal().verify().client().reinitializedAfter(run.rules().get(0));
            } catch (AssertionError e) {
                return new Grader.Finding(Outcome.FAIL, firstLine(e), restLines(e));
            }
            return new Grader.Finding(Outcome.PASS, "after #" + hit.get(0).sequence() + " (" + faultsOf(hit.get(0))
                    + ") the client sent initialize again as #" + again.sequence(), lines(hit.get(0), again));
        };
    }

    static Grader.Finding notExercised(Grader.Run run) {
        return new Grader.Finding(Outcome.NOT_EXERCISED, "the fault never fired: no message the client exchanged "
                + "matched the rules " + run.rules() + "; the client " + exit(run), List.of());
    }

    /** The entries any of the scenario's rules acted on that {@code also} accepts, oldest first. */
    static List<JournalEntry> hits(Grader.Run run, Predicate<JournalEntry> also) {
        return run.journal().filter(e -> run.rules().stream().anyMatch(e::hadFault) && also.test(e));
    }

    private static MessagePattern byRules(Grader.Run run, MessagePattern pattern) {
        return new MessagePattern(pattern.description() + " hit by " + run.rules(),
                e -> pattern.test(e) && run.rules().stream().anyMatch(e::hadFault));
    }

    /** The first answer after {@code request} to it (same id and method), or null. */
    static JournalEntry answerTo(JournalSnapshot journal, JournalEntry request) {
        for (JournalEntry e : journal.entries()) {
            if (e.sequence() > request.sequence() && !e.fromClient()
                    && (e.kind() == MessageKind.RESPONSE || e.kind() == MessageKind.ERROR)
                    && request.id() != null && request.id().equals(e.id())
                    && Objects.equals(e.method(), request.method())) {
                return e;
            }
        }
        return null;
    }

    private static boolean cancelledBefore(JournalSnapshot journal, JournalEntry hit) {
        return !journal.filter(e -> e.fromClient() && "notifications/cancelled".equals(e.method())
                && e.requestId() != null && e.requestId().equals(hit.id())).isEmpty();
    }

    static String faultsOf(JournalEntry e) {
        return e.faults().stream().map(JournalEntry.FaultAction::toString).reduce((a, b) -> a + ", " + b).orElse("");
    }

    /** The time from {@code from} to {@code to} on the journal's clock, as {@code 0.250s}. */
    static String seconds(JournalEntry from, JournalEntry to) {
        return seconds(to.elapsed().minus(from.elapsed()));
    }

    /** A duration as {@code 0.250s}. */
    static String seconds(Duration d) {
        return String.format(java.util.Locale.ROOT, "%.3fs", d.toNanos() / 1e9);
    }

    static String exit(Grader.Run run) {
        return run.clientExit() == null ? "was stopped at the timeout" : "exited " + run.clientExit();
    }

    static List<String> lines(JournalEntry... entries) {
        return lines(List.of(entries));
    }

    static List<String> lines(List<JournalEntry> entries) {
        List<String> out = new ArrayList<>();
        for (JournalEntry e : entries) {
            if (out.size() == MAX_EVIDENCE) {
                out.add("... " + (entries.size() - MAX_EVIDENCE) + " more");
                break;
            }
            out.add(e.toString());
        }
        return out;
    }

    private static String firstLine(AssertionError e) {
        String message = String.valueOf(e.getMessage());
        String[] lines = message.split("\n");
        return lines.length > 1 && lines[1].startsWith("but") ? lines[0] + " " + lines[1] : lines[0];
    }

    private static List<String> restLines(AssertionError e) {
        String[] lines = String.valueOf(e.getMessage()).split("\n");
        List<String> out = new ArrayList<>();
        for (int i = 1; i < lines.length && out.size() < MAX_EVIDENCE; i++) {
            if (!lines[i].startsWith("but")) {
                out.add(lines[i].strip());
            }
        }
        return out;
    }
}
