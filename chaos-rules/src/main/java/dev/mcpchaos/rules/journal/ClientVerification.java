package dev.mcpchaos.rules.journal;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Assertions on how the MCP client behaved, as the journal saw it: what it sent, whether it
 * retried after a lost message (or did not), wrote the same thing twice, re-initialized after its
 * session expired, cancelled what it gave up on, and waited as {@code Retry-After} asked.
 *
 * <p>The client is judged on what it received and did: a message a rule dropped before the server
 * is the rule's doing, and sending it again is a safe retry; a request that reached the server
 * may have been carried out, so sending it again while its answer is missing is a duplicate write.
 */
public final class ClientVerification extends SenderVerification {

    ClientVerification(JournalSnapshot snapshot) {
        super(snapshot, Direction.CLIENT_TO_SERVER, "the client");
    }

    /**
     * That the client sent the request again after the first message of {@code lost} (such as
     * {@code dropped(toolCall("search"))}: the request itself, or the response to it): a later
     * request of the same method and tool. Chain {@link Retry#withSameArguments()} to check that
     * it asked the same thing again (a possible duplicate write).
     */
    public Retry retriedAfter(MessagePattern lost) {
        Objects.requireNonNull(lost, "lost");
        List<JournalEntry> matches = snapshot.filter(lost);
        if (matches.isEmpty()) {
            throw JournalVerification.failure(snapshot, "the client to retry after " + lost.description(),
                    "the journal holds no " + lost.description(), "Entries a rule acted on", faulted());
        }
        JournalEntry lostEntry = matches.get(0);
        JournalEntry original = requestOf(lostEntry);
        JournalEntry retry = null;
        List<JournalEntry> after = sentAfter(lostEntry.sequence());
        for (JournalEntry e : after) {
            if (e.kind() == MessageKind.REQUEST && Objects.equals(e.method(), lostEntry.method())
                    && Objects.equals(e.tool(), lostEntry.tool()) && e != original) {
                retry = e;
                break;
            }
        }
        String what = describe(lostEntry);
        if (retry == null) {
            throw JournalVerification.failure(snapshot, "the client to send " + what + " again after #"
                    + lostEntry.sequence() + " (" + lost.description() + ")", "it did not",
                    "The lost message and what the client sent after it", prepend(lostEntry, after));
        }
        return new Retry(snapshot, lostEntry, original, retry);
    }

    /**
     * That the client did not send the request again after any message of {@code lost}: no later
     * request of the same method and tool, whatever its arguments. After a lost answer to a write,
     * {@code notRetriedAfter(notReachedClient(toolCall("write")))} is what the right client does:
     * it reads back, or reports the outcome unknown. Fails when the journal holds no message of
     * {@code lost}: a client that was never put to the test proves nothing.
     *
     * @return the messages of {@code lost}
     */
    public List<JournalEntry> notRetriedAfter(MessagePattern lost) {
        Objects.requireNonNull(lost, "lost");
        List<JournalEntry> matches = snapshot.filter(lost);
        if (matches.isEmpty()) {
            throw JournalVerification.failure(snapshot, "the client not to retry after " + lost.description(),
                    "the journal holds no " + lost.description() + ", so nothing was put to the test",
                    "Entries a rule acted on", faulted());
        }
        List<JournalEntry> retries = new ArrayList<>();
        List<String> which = new ArrayList<>();
        for (JournalEntry lostEntry : matches) {
            JournalEntry original = requestOf(lostEntry);
            for (JournalEntry e : sentAfter(lostEntry.sequence())) {
                if (e.kind() == MessageKind.REQUEST && Objects.equals(e.method(), lostEntry.method())
                        && Objects.equals(e.tool(), lostEntry.tool()) && e != original && !retries.contains(e)) {
                    retries.add(e);
                    which.add("#" + e.sequence() + " after #" + lostEntry.sequence());
                }
            }
        }
        if (!retries.isEmpty()) {
            List<JournalEntry> relevant = new ArrayList<>(matches);
            relevant.addAll(retries);
            relevant.sort((a, b) -> Long.compare(a.sequence(), b.sequence()));
            throw JournalVerification.failure(snapshot, "the client not to send " + describe(matches.get(0))
                    + " again after " + lost.description(), "it did: " + String.join(", ", which),
                    "The lost messages and the retries", relevant);
        }
        return matches;
    }

    /**
     * The client's duplicate writes among its requests of {@code writes}, to count:
     * {@code duplicateWrites(toolCall("write")).never()}. A duplicate write is a write the server
     * received twice, or a resend of one that reached it: a later request of the same method and
     * tool with the same arguments (by the {@link JournalEntry#writeFingerprint() write
     * fingerprint}, so a fresh idempotency key does not make it another write) as an earlier one
     * that reached the server, which either reached the server as well, or was sent before the
     * earlier one's answer reached the client. A resend of a request that never reached the
     * server is a safe retry and is never counted.
     *
     * <p>Each duplicate counts once, as its later copy ({@link Count#entries()}); a failure lists
     * the duplicates with the copies that reached the server and what became of their answers.
     * A client that wrote the same thing twice on purpose, each after the other's answer, also
     * made the server receive it twice: narrow {@code writes} to the call under test then.
     */
    public Count duplicateWrites(MessagePattern writes) {
        Objects.requireNonNull(writes, "writes");
        List<JournalEntry> requests = snapshot.filter(e -> e.fromClient() && e.kind() == MessageKind.REQUEST
                && e.writeFingerprint() != null && writes.test(e));
        List<JournalEntry> duplicates = new ArrayList<>();
        List<JournalEntry> listed = new ArrayList<>();
        for (int j = 0; j < requests.size(); j++) {
            JournalEntry later = requests.get(j);
            for (int i = 0; i < j; i++) {
                JournalEntry first = requests.get(i);
                if (!first.reachedServer() || !first.sameArgumentsAs(later)) {
                    continue; // a first copy that never reached the server makes a safe retry
                }
                JournalEntry answer = answerTo(first);
                boolean answeredBefore = answer != null && answer.delivered() && answer.sequence() < later.sequence();
                if (later.delivered() || !answeredBefore) {
                    duplicates.add(later);
                    addOnce(listed, first);
                    if (answer != null && answer.sequence() < later.sequence()) {
                        addOnce(listed, answer);
                    }
                    addOnce(listed, later);
                    break;
                }
            }
        }
        listed.sort((a, b) -> Long.compare(a.sequence(), b.sequence()));
        return new Count(snapshot, "the client to duplicate a write of " + writes.description(),
                n -> n == 0 ? "it never did" : "it did " + Count.times(n, ""), duplicates,
                "The copies that reached the server, their answers, and the duplicates", listed);
    }

    /**
     * That the client sent a new {@code initialize} after the first message a rule with this
     * fault type or name (such as {@code session_expire}) acted on.
     */
    public JournalEntry reinitializedAfter(String faultOrRule) {
        Objects.requireNonNull(faultOrRule, "faultOrRule");
        JournalEntry hit = null;
        for (JournalEntry e : snapshot.entries()) {
            if (e.hadFault(faultOrRule)) {
                hit = e;
                break;
            }
        }
        if (hit == null) {
            throw JournalVerification.failure(snapshot, "the client to re-initialize after " + faultOrRule,
                    "no message was hit by a rule or fault named " + faultOrRule, "Entries a rule acted on",
                    faulted());
        }
        List<JournalEntry> after = sentAfter(hit.sequence());
        for (JournalEntry e : after) {
            if (e.kind() == MessageKind.REQUEST && "initialize".equals(e.method())) {
                return e;
            }
        }
        throw JournalVerification.failure(snapshot, "the client to send initialize again after #" + hit.sequence()
                + " (hit by " + faultOrRule + ")", "it did not", "That message and what the client sent after it",
                prepend(hit, after));
    }

    /**
     * That the client sent {@code notifications/cancelled} for at least one request of
     * {@code requests} (same session, {@code params.requestId} its id), after the request.
     *
     * @return the cancellations
     */
    public List<JournalEntry> cancelled(MessagePattern requests) {
        Objects.requireNonNull(requests, "requests");
        List<JournalEntry> sentRequests = snapshot.filter(e -> e.fromClient() && e.kind() == MessageKind.REQUEST
                && requests.test(e));
        List<JournalEntry> cancellations = snapshot.filter(e -> e.fromClient()
                && e.kind() == MessageKind.NOTIFICATION && "notifications/cancelled".equals(e.method()));
        if (sentRequests.isEmpty()) {
            throw JournalVerification.failure(snapshot, "the client to cancel " + requests.description(),
                    "it sent no " + requests.description(), "Its cancellations", cancellations);
        }
        List<JournalEntry> found = new ArrayList<>();
        for (JournalEntry c : cancellations) {
            for (JournalEntry r : sentRequests) {
                if (r.sequence() < c.sequence() && r.session().equals(c.session()) && r.id() != null
                        && sameId(r.id(), c.requestId())) {
                    found.add(c);
                    break;
                }
            }
        }
        if (found.isEmpty()) {
            List<JournalEntry> relevant = new ArrayList<>(sentRequests);
            relevant.addAll(cancellations);
            relevant.sort((a, b) -> Long.compare(a.sequence(), b.sequence()));
            throw JournalVerification.failure(snapshot, "the client to send notifications/cancelled for "
                    + requests.description(), cancellations.isEmpty() ? "it sent no notifications/cancelled"
                    : "none of its notifications/cancelled names one of those requests",
                    "The requests and the cancellations", relevant);
        }
        return found;
    }

    /**
     * That after every answer with status 429 or 503 and a {@code Retry-After} (seconds or an
     * HTTP date) to a request, the client's next request of the same method and tool (its retry)
     * came no sooner than it said. Other requests are not counted: a client may have sent them
     * before the answer reached it (the MCP Java SDK lists the tools beside a call). A client
     * that did not retry waited. Fails when no such answer is in the journal: there was nothing
     * to honor.
     */
    public void honoredRetryAfter() {
        List<JournalEntry> told = snapshot.filter(e -> e.httpStatus() != null
                && (e.httpStatus() == 429 || e.httpStatus() == 503) && e.httpHeader("Retry-After") != null);
        if (told.isEmpty()) {
            throw JournalVerification.failure(snapshot, "the client to honor Retry-After",
                    "no answer in the journal was a 429 or 503 with Retry-After", "Entries a rule acted on",
                    faulted());
        }
        List<JournalEntry> relevant = new ArrayList<>();
        List<String> broken = new ArrayList<>();
        for (JournalEntry t : told) {
            JournalEntry next = null;
            for (JournalEntry e : sentAfter(t.sequence())) {
                if (e.kind() == MessageKind.REQUEST && Objects.equals(e.method(), t.method())
                        && Objects.equals(e.tool(), t.tool())) {
                    next = e;
                    break;
                }
            }
            if (next == null) {
                continue;
            }
            String value = t.httpHeader("Retry-After").trim();
            Duration waited = next.elapsed().minus(t.elapsed());
            String problem = null;
            try {
                Duration asked = Duration.ofSeconds(Long.parseLong(value));
                if (waited.compareTo(asked) < 0) {
                    problem = "#" + next.sequence() + " came " + seconds(waited) + " after #" + t.sequence()
                            + " (HTTP " + t.httpStatus() + ", Retry-After: " + value + "; expected: >= "
                            + seconds(asked) + ")";
                }
            } catch (NumberFormatException notSeconds) {
                try {
                    Instant until = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
                    if (next.wallTime().isBefore(until)) {
                        problem = "#" + next.sequence() + " came at " + next.wallTime() + ", before " + until
                                + " (HTTP " + t.httpStatus() + ", Retry-After: " + value + " of #" + t.sequence() + ")";
                    }
                } catch (DateTimeParseException notDate) {
                    problem = "#" + t.sequence() + " has Retry-After: " + value
                            + " (expected: seconds or an HTTP date), so it cannot be checked";
                }
            }
            if (problem != null) {
                broken.add(problem);
                relevant.add(t);
                relevant.add(next);
            }
        }
        if (!broken.isEmpty()) {
            throw JournalVerification.failure(snapshot, "the client to wait as Retry-After asked after each of "
                    + told.size() + " answers with it", "it did not: " + String.join("; ", broken),
                    "Those answers and the requests that came too soon", relevant);
        }
    }

    /** A retry found by {@link #retriedAfter}. */
    public static final class Retry {
        private final JournalSnapshot snapshot;
        private final JournalEntry lost;
        private final JournalEntry original;
        private final JournalEntry retry;

        Retry(JournalSnapshot snapshot, JournalEntry lost, JournalEntry original, JournalEntry retry) {
            this.snapshot = snapshot;
            this.lost = lost;
            this.original = original;
            this.retry = retry;
        }

        /**
         * That the retry asked what the first request asked: the same
         * {@link JournalEntry#writeFingerprint() write fingerprint}, so {@code _meta} and
         * idempotency-key arguments aside (a resend under a fresh {@code request_id} is the same
         * write). This says nothing about where the first copy went: after a dropped request it
         * is a safe retry; only a first copy that reached the server makes it a duplicate write
         * (see {@link ClientVerification#duplicateWrites}).
         */
        public Retry withSameArguments() {
            if (original == null || !original.sameArgumentsAs(retry)) {
                List<JournalEntry> relevant = new ArrayList<>();
                if (original != null) {
                    relevant.add(original);
                }
                if (lost != original) {
                    relevant.add(lost);
                }
                relevant.add(retry);
                String actual = original == null ? "the request the lost message answered is not in the journal"
                        : "the params differ, idempotency keys aside (" + original.writeFingerprint() + " then "
                                + retry.writeFingerprint() + ")";
                throw JournalVerification.failure(snapshot, "the retry #" + retry.sequence()
                        + " to have the same arguments as the first request", actual,
                        "The first request, the lost message and the retry", relevant);
            }
            return this;
        }

        /** The first request (null when the journal no longer holds it). */
        public JournalEntry original() {
            return original;
        }

        /** The message that was lost. */
        public JournalEntry lost() {
            return lost;
        }

        /** The retry. */
        public JournalEntry retry() {
            return retry;
        }
    }

    /** The request a lost message is or answers: itself, or the client's request with its id before it. */
    private JournalEntry requestOf(JournalEntry lost) {
        if (lost.fromClient() && lost.kind() == MessageKind.REQUEST) {
            return lost;
        }
        if (lost.id() == null) {
            return null;
        }
        List<JournalEntry> all = snapshot.entries();
        JournalEntry elsewhere = null;
        for (int i = all.size() - 1; i >= 0; i--) {
            JournalEntry e = all.get(i);
            if (e.sequence() < lost.sequence() && e.direction() == lost.direction().reverse()
                    && e.kind() == MessageKind.REQUEST && sameId(e.id(), lost.id())
                    && Objects.equals(e.method(), lost.method())) {
                if (e.session().equals(lost.session())) {
                    return e;
                }
                if (elsewhere == null) {
                    // An HTTP initialize travels under a provisional session name; its answer under the real one.
                    elsewhere = e;
                }
            }
        }
        return elsewhere;
    }

    /** The server's first answer (response or error) to a client's request, delivered or not; null when none. */
    private JournalEntry answerTo(JournalEntry request) {
        for (JournalEntry e : snapshot.entries()) {
            if (e.sequence() > request.sequence() && !e.fromClient()
                    && (e.kind() == MessageKind.RESPONSE || e.kind() == MessageKind.ERROR)
                    && sameId(e.id(), request.id()) && e.session().equals(request.session())
                    && Objects.equals(e.method(), request.method())) {
                return e;
            }
        }
        return null;
    }

    private static void addOnce(List<JournalEntry> list, JournalEntry e) {
        if (!list.contains(e)) {
            list.add(e);
        }
    }

    private List<JournalEntry> sentAfter(long sequence) {
        return snapshot.filter(e -> e.fromClient() && e.sequence() > sequence);
    }

    private List<JournalEntry> faulted() {
        return snapshot.filter(e -> !e.faults().isEmpty());
    }

    private static boolean sameId(Object a, Object b) {
        return a != null && a.equals(b);
    }

    private static List<JournalEntry> prepend(JournalEntry first, List<JournalEntry> rest) {
        List<JournalEntry> all = new ArrayList<>(rest.size() + 1);
        all.add(first);
        all.addAll(rest);
        return all;
    }

    private static String describe(JournalEntry e) {
        return e.method() == null ? "the request" : e.method() + (e.tool() == null ? "" : " of " + e.tool());
    }

    private static String seconds(Duration d) {
        return String.format(Locale.ROOT, "%.3fs", d.toNanos() / 1e9);
    }
}
