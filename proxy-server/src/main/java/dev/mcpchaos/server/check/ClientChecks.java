package dev.mcpchaos.server.check;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.journal.JournalEntry;
import dev.mcpchaos.rules.journal.JournalSnapshot;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The checks of how a client behaves when messages are lost or refused ({@code client.*}), made
 * on the proxy's journal rather than on the messages alone: only the journal knows which message
 * a fault dropped before the server saw it, which answer never reached the client, and which
 * exchange a fault answered with 404 or with {@code Retry-After}. So they run on a live proxy
 * with its journal on, over what the journal still holds, and not on cassettes.
 *
 * <p>A violation's {@link Violation#index() index} is the journal's sequence number of the
 * offending message ({@code #N} in the journal), and its excerpt the journal's line for it.
 */
final class ClientChecks implements CheckFamily {

    private static final String NEEDS_JOURNAL = "needs the proxy's journal, which is off (--journal; a cassette has "
            + "none)";

    @Override
    public List<Check> checks() {
        return List.of(Check.DUPLICATE_CALL, Check.RETRY_AFTER_IGNORED, Check.NO_REINITIALIZE);
    }

    @Override
    public String whyNotRun(Check check, Tracker seen) {
        if (seen.journal == null) {
            return NEEDS_JOURNAL;
        }
        return check != Check.DUPLICATE_CALL && !seen.httpSeen ? "HTTP only, and there was no HTTP traffic" : null;
    }

    /** The violations in {@code journal}, in the order of the offending messages. */
    static List<Violation> judge(JournalSnapshot journal) {
        Objects.requireNonNull(journal, "journal");
        List<Violation> found = new ArrayList<>();
        duplicateCalls(journal.entries(), found);
        retryAfterIgnored(journal.entries(), found);
        noReinitialize(journal.entries(), found);
        return found;
    }

    /**
     * A tools/call sent again with the same tool and arguments while an earlier one, which reached
     * the server, had no answer delivered to the client: if the tool writes, it may run twice
     * (docs/journal.md calls it a duplicate write). Arguments compare by the journal's write
     * fingerprint, which leaves out idempotency-key arguments: a resend under a fresh
     * {@code request_id} is the worst kind, since the server cannot tell it is one. A call the
     * proxy dropped before the server saw it can be sent again safely; a call whose answer the
     * client got is a new request, not a retry.
     */
    private static void duplicateCalls(List<JournalEntry> entries, List<Violation> found) {
        Map<String, JournalEntry> unanswered = new LinkedHashMap<>(); // by tool and arguments
        Map<String, String> keyOfRequest = new HashMap<>(); // session and id -> the key in unanswered
        for (JournalEntry e : entries) {
            if (e.fromClient() && e.kind() == MessageKind.REQUEST && "tools/call".equals(e.method())
                    && e.writeFingerprint() != null) {
                String key = e.tool() + '\u0000' + e.writeFingerprint();
                JournalEntry first = unanswered.get(key);
                if (first != null) {
                    boolean newKey = !Objects.equals(first.paramsFingerprint(), e.paramsFingerprint());
                    found.add(violation(Check.DUPLICATE_CALL, "tools/call of '" + e.tool() + "' sent again with the "
                            + "same arguments " + (newKey ? "under a new idempotency key " : "") + since(first, e)
                            + " after #" + first.sequence() + ", which reached the server and had no answer delivered"
                            + lostBy(first) + (newKey ? " (if the tool writes, it may have run twice, and the new key "
                            + "keeps the server from telling; after a lost answer, read back or report the outcome "
                            + "unknown)" : " (if the tool writes, it may have run twice; an idempotency key or a check "
                            + "before retrying avoids that)"), e));
                }
                if (e.delivered() && e.id() != null) {
                    unanswered.put(key, e);
                    keyOfRequest.put(e.session() + '\u0000' + e.id(), key);
                }
            } else if (!e.fromClient() && (e.kind() == MessageKind.RESPONSE || e.kind() == MessageKind.ERROR)
                    && e.delivered() && e.id() != null) {
                String key = keyOfRequest.remove(e.session() + '\u0000' + e.id());
                if (key != null) {
                    unanswered.remove(key);
                }
            }
        }
    }

    /** What the journal says became of a request or of its answer, for the detail. */
    private static String lostBy(JournalEntry request) {
        return request.faults().isEmpty() ? "" : " (" + request.faults().get(0) + ")";
    }

    /**
     * After an answer of 429 or 503 with {@code Retry-After} (seconds or an HTTP date), the
     * client's next request of the same method and tool (its retry) came sooner than it said.
     * Other requests do not count: a client may have sent them before the answer reached it. A
     * {@code Retry-After} that is neither form says nothing the client could honor.
     */
    private static void retryAfterIgnored(List<JournalEntry> entries, List<Violation> found) {
        for (int i = 0; i < entries.size(); i++) {
            JournalEntry told = entries.get(i);
            String value = told.httpStatus() != null && (told.httpStatus() == 429 || told.httpStatus() == 503)
                    ? told.httpHeader("Retry-After") : null;
            if (value == null) {
                continue;
            }
            JournalEntry retry = null;
            for (int j = i + 1; j < entries.size() && retry == null; j++) {
                JournalEntry e = entries.get(j);
                if (e.fromClient() && e.kind() == MessageKind.REQUEST && Objects.equals(e.method(), told.method())
                        && Objects.equals(e.tool(), told.tool())) {
                    retry = e;
                }
            }
            if (retry == null) {
                continue; // it did not retry: it waited
            }
            String v = value.trim();
            Duration waited = retry.elapsed().minus(told.elapsed());
            try {
                Duration asked = Duration.ofSeconds(Long.parseLong(v));
                if (waited.compareTo(asked) < 0) {
                    found.add(violation(Check.RETRY_AFTER_IGNORED, retry.method() + " sent again " + seconds(waited)
                            + " after #" + told.sequence() + " was answered HTTP " + told.httpStatus()
                            + " with Retry-After: " + v + " (expected: no sooner than " + seconds(asked) + ")", retry));
                }
            } catch (NumberFormatException notSeconds) {
                try {
                    Instant until = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
                    if (retry.wallTime().isBefore(until)) {
                        found.add(violation(Check.RETRY_AFTER_IGNORED, retry.method() + " sent again at "
                                + retry.wallTime() + " after #" + told.sequence() + " was answered HTTP "
                                + told.httpStatus() + " with Retry-After: " + v + " (expected: not before " + until
                                + ")", retry));
                    }
                } catch (DateTimeParseException notDate) {
                    // neither form: nothing the client could have honored
                }
            }
        }
    }

    /**
     * After an HTTP 404 for its session, a client of the 2025 revisions must start a new session
     * with an initialize (Streamable HTTP, "Session Management"). Flagged when it sent more
     * requests and none of them was an initialize; a client that sent nothing more gave up,
     * which the journal's own assertions can judge.
     */
    private static void noReinitialize(List<JournalEntry> entries, List<Violation> found) {
        for (int i = 0; i < entries.size(); i++) {
            JournalEntry expired = entries.get(i);
            if (!expired.fromClient() || expired.httpStatus() == null || expired.httpStatus() != 404
                    || !"http".equals(expired.transport())) {
                continue;
            }
            JournalEntry firstLater = null;
            boolean reinitialized = false;
            for (int j = i + 1; j < entries.size() && !reinitialized; j++) {
                JournalEntry e = entries.get(j);
                if (e.fromClient() && e.kind() == MessageKind.REQUEST) {
                    if ("initialize".equals(e.method())) {
                        reinitialized = true;
                    } else if (firstLater == null) {
                        firstLater = e;
                    }
                }
            }
            if (!reinitialized && firstLater != null) {
                found.add(violation(Check.NO_REINITIALIZE, "#" + expired.sequence() + " (" + expired.method()
                        + ") was answered HTTP 404 for session " + expired.session() + ", then the client sent "
                        + firstLater.method() + " and more, but no new initialize (expected: a new session "
                        + "started with initialize, without the old Mcp-Session-Id)", firstLater));
                return; // one is enough: every later request is the same mistake
            }
        }
    }

    private static Violation violation(Check check, String detail, JournalEntry e) {
        return new Violation(check, detail, e.session(), Direction.CLIENT_TO_SERVER, e.sequence(), e.id(),
                e.method(), Findings.excerpt(e.toString()));
    }

    private static String since(JournalEntry first, JournalEntry later) {
        return seconds(later.elapsed().minus(first.elapsed()));
    }

    private static String seconds(Duration d) {
        return String.format(Locale.ROOT, "%.3fs", d.toNanos() / 1e9);
    }
}
