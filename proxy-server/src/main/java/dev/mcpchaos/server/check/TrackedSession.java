package dev.mcpchaos.server.check;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.core.frame.Direction;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * What the referee knows of one session: the requests in flight each way (as sent, and as they
 * reached their receiver), its lifecycle (initialize, the version spoken, the capabilities), its
 * tools, and what faults excuse. Kept by the {@link Tracker}; read by the {@link CheckFamily}s.
 */
final class TrackedSession {
    private final Tracker tracker;
    String name;
    /**
     * Requests their sender has in flight, by id, oldest first: one table per direction they
     * were sent in. A request leaves when it is answered (or late): its id may then be used again.
     */
    final Map<Direction, LinkedHashMap<Object, Pending>> sent = new EnumMap<>(Direction.class);
    /**
     * Requests the receiver got and owes an answer to, by id, in the order they reached it:
     * the receiver is judged on what reached it, not on what a fault kept from it.
     */
    final Map<Direction, LinkedHashMap<Object, Pending>> pending = new EnumMap<>(Direction.class);
    /** Requests already reported as late: their answer is no unknown id. Bounded like pending. */
    final Map<Direction, LinkedHashMap<Object, Pending>> late = new EnumMap<>(Direction.class);
    /**
     * The answers sent, by the id they answer, as a hash of their text: the same answer again on
     * a resumed stream is the server replaying what the client missed, not a second answer.
     */
    final Map<Direction, LinkedHashMap<Object, Long>> answered = new EnumMap<>(Direction.class);
    /** A rule whose fault ended this stdio session's server (or its input): what comes later is owed nothing. */
    String endedBy;
    /** Whether the session's messages were lines of a stdio stream. */
    boolean stdio;
    /** The protocolVersion of the initialize answer that reached the client (after the rules). */
    String deliveredVersion;
    /** Whether the client was already judged on going on under a version it cannot speak. */
    boolean versionAcceptanceJudged;
    boolean initializeAnswered;
    boolean initializedNotified;
    /** The id of the client's initialize, to know its answer when it reaches the client. */
    Object initializeId;
    String requestedVersion;
    /** The revision the session speaks: the server's initialize answer, or a sessionless request's _meta. */
    String spokenVersion;
    JsonNode serverCapabilities;
    JsonNode clientCapabilities;
    /** The tools of the last complete tools/list, or null when unknown (or stale after list_changed). */
    Set<String> tools;
    Set<String> toolsInProgress;
    /** The schemas of the tools of the last complete tools/list (compiled when first used), by name. */
    Map<String, ToolSchemas> toolSchemas;
    Map<String, ToolSchemas> toolSchemasInProgress;

    TrackedSession(Tracker tracker) {
        this.tracker = tracker;
        for (Direction d : Direction.values()) {
            sent.put(d, bounded(false));
            pending.put(d, bounded(true));
            late.put(d, bounded(false));
            answered.put(d, bounded(false));
        }
    }

    private <V> LinkedHashMap<Object, V> bounded(boolean countEvictions) {
        return new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Object, V> eldest) {
                if (size() > Referee.MAX_IN_FLIGHT) {
                    if (countEvictions) {
                        tracker.untracked++;
                    }
                    return true;
                }
                return false;
            }
        };
    }

    /** Whether the session speaks a revision without initialize, where each request stands alone. */
    boolean sessionless() {
        return spokenVersion != null && spokenVersion.compareTo(Tracker.FIRST_SESSIONLESS_REVISION) >= 0;
    }

    /** The tools of this session's last tools/list; for a sessionless one, the last any request got. */
    Set<String> tools() {
        return tools == null && sessionless() ? tracker.sessionlessTools : tools;
    }

    /** The schemas of {@link #tools()}. */
    Map<String, ToolSchemas> toolSchemas() {
        return toolSchemas == null && sessionless() ? tracker.sessionlessToolSchemas : toolSchemas;
    }

    /**
     * A request that had no JSON-RPC answer, and is owed none: cancelled, answered with an HTTP
     * error, or a copy a duplicate fault made of a request already answered.
     */
    boolean owedNothing(Pending p) {
        int status = p.answeredStatus != null ? p.answeredStatus.getAsInt() : 0;
        return p.cancelled || p.answers > 0 || (status != 0 && (status < 200 || status > 299));
    }

    /** Reports the requests whose deadline passed by {@code now}. */
    void sweep(long now) {
        for (Direction d : Direction.values()) {
            Iterator<Pending> it = pending.get(d).values().iterator();
            while (it.hasNext()) {
                Pending p = it.next();
                if (now - p.deliveredAt <= tracker.deadlineNanos) {
                    break; // oldest first: the rest are younger
                }
                it.remove();
                sent.get(d).remove(p.id);
                late.get(d).put(p.id, p); // its answer, if it comes, is no unknown id
                JsonRpcChecks.unanswered(tracker, this, d, p, "no answer within "
                        + Duration.ofNanos(tracker.deadlineNanos).toString().substring(2)
                        .toLowerCase(java.util.Locale.ROOT));
            }
        }
    }

    void finish() {
        for (Direction d : Direction.values()) {
            for (Pending p : pending.get(d).values()) {
                JsonRpcChecks.unanswered(tracker, this, d, p, "no answer by the end of the session");
            }
            for (Pending p : sent.get(d).values()) {
                if (p.deliveries == 0) {
                    tracker.keptFromReceiver++; // a fault dropped it or answered it itself: the receiver owes nothing
                }
            }
            pending.get(d).clear();
            sent.get(d).clear();
        }
    }

    /**
     * A request the receiver of {@code p} sent after {@code p} reached it, which a fault kept from
     * the other side and which is still unanswered: a server may rightly wait on the answer to its
     * own request (a roots/list, a sampling request) before it answers. Null when there is none.
     */
    Pending keptRequestOfReceiver(Direction d, Pending p) {
        Direction back = d == Direction.CLIENT_TO_SERVER ? Direction.SERVER_TO_CLIENT : Direction.CLIENT_TO_SERVER;
        for (Pending own : sent.get(back).values()) {
            if (own.deliveries == 0 && own.faultedBy != null && own.index > p.index) {
                return own;
            }
        }
        return null;
    }

    /** A copy of {@code p} reached its receiver at {@code now}: from now on it owes an answer. */
    void deliver(Direction d, Pending p, long now) {
        p.deliveries++;
        if (p.deliveries == 1) {
            p.deliveredAt = now;
        }
        if (endedBy != null && p.excusedBy == null) {
            p.excusedBy = endedBy; // the server is gone: nothing that reaches it now can be answered
        }
        if (!pending.get(d).containsKey(p.id)) {
            pending.get(d).put(p.id, p); // a copy after the first was answered: its answer is welcome
        }
    }

    /** A fault of {@code rule} ended the connection (or the server): what is owed now is the fault's. */
    void connectionEnded(String rule) {
        for (Direction d : Direction.values()) {
            for (Pending p : pending.get(d).values()) {
                if (p.excusedBy == null) {
                    p.excusedBy = rule;
                }
            }
        }
        if (stdio) {
            endedBy = rule; // one connection, one server: it does not come back in this session
        }
    }

    /** The receiver got its sender's cancel of {@code id}: no answer is owed now, and one sent after it is flagged. */
    void cancelReached(Direction requestDirection, Object id) {
        Pending p = pending.get(requestDirection).get(id);
        if (p == null) {
            p = late.get(requestDirection).get(id); // late already: its answer may still come
        }
        if (p != null) {
            p.cancelled = true;
        }
    }

    /** The server answered initialize with {@code result}: the version the session speaks, its capabilities. */
    void initialized(JsonNode result) {
        initializeAnswered = true;
        spokenVersion = Tracker.text(result.get("protocolVersion"));
        if (!tracker.tracksDelivery) {
            deliveredVersion = spokenVersion; // offline: what the server sent is taken as what the client got
            versionAcceptanceJudged = false;
        }
        if (spokenVersion != null && spokenVersion.compareTo("2025-11-25") >= 0) {
            tracker.modernToolsSeen = true;
        }
        if (spokenVersion != null && spokenVersion.compareTo(Tracker.FIRST_SESSIONLESS_REVISION) >= 0) {
            tracker.sessionlessSeen = true;
        }
        serverCapabilities = result.get("capabilities");
    }

    /** The server said its tools changed: the next tools/list says what there is. */
    void toolsChanged() {
        tools = null;
        toolSchemas = null;
        if (sessionless()) {
            tracker.sessionlessTools = null;
            tracker.sessionlessToolSchemas = null;
        }
    }
}
