package dev.mcpchaos.rules.journal;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** Builds journal entries for tests, the way a recorder would, on a clock the test moves. */
final class Entries {

    static final Instant START = Instant.parse("2026-12-02T06:00:00Z");

    private final JournalRing ring;
    private long nowMillis;

    Entries(int capacity) {
        ring = new JournalRing(capacity);
    }

    Entries() {
        this(1000);
    }

    JournalRing ring() {
        return ring;
    }

    Entries at(long millis) {
        nowMillis = millis;
        return this;
    }

    long request(String session, long id, String method, String tool, String params) {
        String message = "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"" + method + "\",\"params\":" + params
                + "}";
        ParamsFingerprint.Fingerprints fingerprints = ParamsFingerprint.ofRequest(message);
        return add(session, Direction.CLIENT_TO_SERVER, MessageKind.REQUEST, id, method, tool, null,
                fingerprints.params(), fingerprints.write());
    }

    long toolCall(String session, long id, String tool, String arguments) {
        return request(session, id, "tools/call", tool, "{\"name\":\"" + tool + "\",\"arguments\":" + arguments + "}");
    }

    long response(String session, long id, String method, String tool) {
        return add(session, Direction.SERVER_TO_CLIENT, MessageKind.RESPONSE, id, method, tool, null, null);
    }

    long cancelled(String session, long requestId) {
        return add(session, Direction.CLIENT_TO_SERVER, MessageKind.NOTIFICATION, null, "notifications/cancelled",
                null, requestId, null);
    }

    long add(String session, Direction direction, MessageKind kind, Object id, String method, String tool,
             Object requestId, String fingerprint) {
        return add(session, direction, kind, id, method, tool, requestId, fingerprint, null);
    }

    long add(String session, Direction direction, MessageKind kind, Object id, String method, String tool,
             Object requestId, String fingerprint, String writeFingerprint) {
        return ring.add(new JournalEntry(0, Duration.ofMillis(nowMillis), START.plusMillis(nowMillis), session,
                "http", direction, kind, id, method, tool, requestId, null, null, List.of(), false, fingerprint,
                writeFingerprint, null));
    }

    /** Marks it delivered, as the recorder does when it leaves. */
    Entries delivered(long seq) {
        ring.update(seq, JournalEntry::withDelivered);
        return this;
    }

    Entries fault(long seq, String rule, String fault, String detail) {
        ring.update(seq, e -> e.withFault(new JournalEntry.FaultAction(rule, fault, detail)));
        return this;
    }

    Entries http(long seq, int status, Map<String, String> headers) {
        ring.update(seq, e -> e.withHttp(status, headers));
        return this;
    }

    /** Adds and delivers, the common case. */
    long passed(long seq) {
        delivered(seq);
        return seq;
    }
}
