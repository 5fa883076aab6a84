package dev.mcpchaos.server.drill;

import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.Rules;
import dev.mcpchaos.rules.journal.JournalEntry;

import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The 2026-07-28 era's {@code subscriptions/listen} scenario of the catalogue (#37): the listen
 * stream is cut, and a resilient client listens again. Kept apart from {@link Catalogue}, which
 * only lists it, as {@link SseScenarios} is.
 *
 * <p>The drill's demo server serves {@code subscriptions/listen} in its 2026-07-28 mode: the
 * acknowledgment ({@code notifications/subscriptions/acknowledged}) first, then the stream is
 * held open (its tool list never changes, so no {@code notifications/tools/list_changed} follows).
 * The fault cuts the connection at the acknowledgment: the one message every listen stream
 * carries, so the cut needs no change of the server's lists to happen. The client sees its listen
 * stream end without the graceful {@code complete} result, which the spec calls an unexpected
 * disconnect.
 */
final class SubscriptionScenarios {

    static final String LISTEN = "subscriptions/listen";
    static final String ACKNOWLEDGED = "notifications/subscriptions/acknowledged";

    private SubscriptionScenarios() {
    }

    /** {@code listen-cut}, in its place among the 2026-07-28 scenarios. */
    static Scenario listenCut() {
        return new Scenario("listen-cut", "the subscriptions/listen stream is cut (the connection closes at its "
                + "first message, the acknowledgment), with no graceful complete result",
                List.of(Rules.disconnect("listen-cut", "client").onMethod(ACKNOWLEDGED).times(1)),
                "sends subscriptions/listen again (a new request, a new id), and goes on listening",
                "basic/patterns (2026-07-28, Subscribe and Notify: stream state is scoped to the request; if the "
                        + "channel is lost, the client re-issues the request); basic/patterns/subscriptions#graceful-"
                        + "closure (a close without the complete result is an unexpected disconnect, which the client "
                        + "MAY treat as a trigger to reconnect): no keyword asks for it, SHOULD is the catalogue's",
                Level.SHOULD, Set.of(TransportKind.HTTP), Set.of(Era.STATELESS),
                "pass when, after the cut, the client sent subscriptions/listen again under a new id; fail when it "
                        + "never did (or reused the cut request's id); not exercised when the client never listened",
                relistens(), null);
    }

    /** After the cut, the client sent {@code subscriptions/listen} again, under a new id. */
    static Grader relistens() {
        return run -> {
            List<JournalEntry> hit = Graders.hits(run, e -> !e.delivered());
            if (hit.isEmpty()) {
                return Graders.notExercised(run);
            }
            JournalEntry cut = hit.get(0);
            JournalEntry listened = last(run.journal().filter(e -> isListen(e) && e.sequence() < cut.sequence()));
            if (listened == null) {
                // The rule picks the acknowledgment, which only a listen stream carries: not expected.
                return new Grader.Finding(Outcome.NOT_EXERCISED, "#" + cut.sequence() + " was cut, but the client "
                        + "sent no subscriptions/listen before it; the client " + Graders.exit(run),
                        Graders.lines(cut));
            }
            List<JournalEntry> again = run.journal().filter(e -> isListen(e) && e.sequence() > cut.sequence());
            if (again.isEmpty()) {
                return new Grader.Finding(Outcome.FAIL, "the listen stream of #" + listened.sequence() + " was cut at #"
                        + cut.sequence() + " and the client never sent subscriptions/listen again; it "
                        + Graders.exit(run), Graders.lines(listened, cut));
            }
            JournalEntry relisten = again.get(0);
            if (relisten.id() != null && Objects.equals(relisten.id(), listened.id())) {
                return new Grader.Finding(Outcome.FAIL, "the client listened again as #" + relisten.sequence()
                        + " under the cut request's id " + relisten.id() + " (a new request MUST have a new id, "
                        + "basic#requests)", Graders.lines(listened, cut, relisten), Level.MUST);
            }
            return new Grader.Finding(Outcome.PASS, "the listen stream of #" + listened.sequence() + " was cut at #"
                    + cut.sequence() + "; the client listened again as #" + relisten.sequence() + " (id "
                    + relisten.id() + ") " + SseScenarios.seconds(relisten.elapsed().minus(cut.elapsed())) + " later; it "
                    + Graders.exit(run), Graders.lines(listened, cut, relisten));
        };
    }

    private static boolean isListen(JournalEntry e) {
        return e.fromClient() && e.kind() == MessageKind.REQUEST && LISTEN.equals(e.method());
    }

    private static JournalEntry last(List<JournalEntry> entries) {
        return entries.isEmpty() ? null : entries.get(entries.size() - 1);
    }
}
