package dev.mcpchaos.core.session;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import io.netty.util.concurrent.Ticker;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Remembers the requests in flight on one session so that a response can be matched to the
 * method and tool of the request it answers ("responses to tools/call of search_*"), and to when
 * that request was read (so that interceptors can time requests without keeping their own map).
 *
 * <p>Each direction is its own id space: the client's ids (its requests travel client to server,
 * their responses server to client) never meet the server's ({@code sampling/createMessage},
 * {@code elicitation/create}, {@code roots/list}, {@code ping}). A request whose response never
 * comes (dropped by a fault, a crashed peer) would otherwise stay forever, so each direction
 * keeps at most {@link #DEFAULT_MAX_PENDING} requests by default and forgets the oldest first.
 *
 * <p>Not thread-safe: used on its session's event loop.
 */
public final class Correlator {

    /** Default number of unanswered requests remembered per direction. */
    public static final int DEFAULT_MAX_PENDING = 10_000;

    private final PendingRequests clientRequests;
    private final PendingRequests serverRequests;
    private long evicted;

    public Correlator() {
        this(DEFAULT_MAX_PENDING);
    }

    /** @param maxPendingPerDirection how many unanswered requests to remember per direction */
    public Correlator(int maxPendingPerDirection) {
        if (maxPendingPerDirection < 1) {
            throw new IllegalArgumentException("maxPendingPerDirection: " + maxPendingPerDirection
                    + " (expected: >= 1)");
        }
        clientRequests = new PendingRequests(maxPendingPerDirection);
        serverRequests = new PendingRequests(maxPendingPerDirection);
    }

    /**
     * Learns from a frame as it is read: a request is remembered with the time it was read; a
     * response is matched to its request (which is forgotten) and
     * {@link Frame#answers(Envelope, long)} is set with that request and its time. Batches are
     * handled element by element; a batch frame itself gets no single answered request.
     *
     * @param ticker the clock of the executor the session's interceptors run on, so that an
     *               interceptor can subtract {@link Frame#answeredRequestArrivalNanos()} from its
     *               own reading of the same clock; read only for a request or a batch
     */
    public void observe(Frame frame, Ticker ticker) {
        Objects.requireNonNull(ticker, "ticker");
        Envelope envelope = frame.envelope();
        switch (envelope.kind()) {
            case REQUEST:
                if (envelope.id() != null) { // a null or structured id can never be answered by id
                    requestsFrom(frame.direction()).put(envelope.id(), new Pending(envelope, ticker.nanoTime()));
                }
                break;
            case RESPONSE:
            case ERROR:
                if (envelope.hasId() && envelope.id() != null) {
                    Pending request = requestsFrom(frame.direction().reverse()).remove(envelope.id());
                    if (request != null) {
                        frame.answers(request.envelope, request.arrivalNanos);
                    }
                }
                break;
            case BATCH:
                long now = ticker.nanoTime(); // the batch's requests were read together
                for (Envelope element : envelope.batch()) {
                    if (element.isRequest() && element.id() != null) {
                        requestsFrom(frame.direction()).put(element.id(), new Pending(element, now));
                    } else if (element.isResponse() && element.id() != null) {
                        requestsFrom(frame.direction().reverse()).remove(element.id());
                    }
                }
                break;
            default:
                break;
        }
    }

    /** The request with this id sent in {@code direction} and not answered yet, or null. */
    public Envelope pending(Direction direction, Object id) {
        Pending request = requestsFrom(direction).get(id);
        return request != null ? request.envelope : null;
    }

    /** How many requests sent in {@code direction} are waiting for an answer. */
    public int pendingCount(Direction direction) {
        return requestsFrom(direction).size();
    }

    /** How many unanswered requests were forgotten because a direction held too many. */
    public long evictedCount() {
        return evicted;
    }

    private PendingRequests requestsFrom(Direction direction) {
        return direction == Direction.CLIENT_TO_SERVER ? clientRequests : serverRequests;
    }

    /** A request waiting for its response, and when it was read. */
    private record Pending(Envelope envelope, long arrivalNanos) {
    }

    /**
     * The requests of one direction, oldest first. Most sessions wait on one request at a time
     * (a sessionless HTTP request is a session of its own, with one request), so the first lives
     * in a field and a map is made only for a second: a map per direction and request cost a
     * table, a node and two hashings on every request.
     */
    private final class PendingRequests {
        private final int max;
        /** The one request held while {@link #map} is null; null when none. */
        private Object soleId;
        private Pending sole;
        /** All requests once two were held at once; insertion order is the eviction order. */
        private LinkedHashMap<Object, Pending> map;

        PendingRequests(int max) {
            this.max = max;
        }

        void put(Object id, Pending pending) {
            if (map == null) {
                if (sole == null || soleId.equals(id)) {
                    soleId = id;
                    sole = pending;
                    return;
                }
                map = new LinkedHashMap<>(8) {
                    @Override
                    protected boolean removeEldestEntry(Map.Entry<Object, Pending> eldest) {
                        if (size() > max) {
                            evicted++;
                            return true;
                        }
                        return false;
                    }
                };
                map.put(soleId, sole);
                soleId = null;
                sole = null;
            }
            map.put(id, pending);
        }

        Pending remove(Object id) {
            if (map != null) {
                return map.remove(id);
            }
            if (sole != null && soleId.equals(id)) {
                Pending removed = sole;
                soleId = null;
                sole = null;
                return removed;
            }
            return null;
        }

        Pending get(Object id) {
            if (map != null) {
                return map.get(id);
            }
            return sole != null && soleId.equals(id) ? sole : null;
        }

        int size() {
            return map != null ? map.size() : sole != null ? 1 : 0;
        }
    }
}
