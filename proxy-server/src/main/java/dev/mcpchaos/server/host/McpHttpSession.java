package dev.mcpchaos.server.host;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One MCP session of {@link McpHttpHost}: its id, its {@link McpSessionHandler}, and its SSE streams.
 *
 * <p>Stream 0 is the standalone stream that GET requests attach to; it carries the messages that
 * belong to no request and lives as long as the session. Streams 1, 2, ... are the SSE responses
 * to POSTs, kept after they end so that a client can still resume one with {@code Last-Event-ID}.
 *
 * <p>Limits: at most {@value #MAX_RETAINED_POST_STREAMS} POST streams are kept; beyond that the
 * oldest complete ones are forgotten (a resumption of one of those attaches to the standalone
 * stream instead). Thread-safe.
 */
final class McpHttpSession {

    static final int MAX_RETAINED_POST_STREAMS = 16;

    private final String id;
    private final McpSessionHandler handler;
    private final SseStream standalone = new SseStream(0);
    private final Map<Long, SseStream> postStreams = new LinkedHashMap<>(); // guarded by this
    private long nextStreamNumber = 1; // guarded by this
    private volatile long lastActivityNanos = System.nanoTime();
    private volatile boolean ended;

    McpHttpSession(String id, McpSessionHandler.Factory handlers) {
        this.id = requireNonNull(id, "id");
        this.handler = handlers.open(id, standalone::append);
    }

    String id() {
        return id;
    }

    McpSessionHandler handler() {
        return handler;
    }

    /** The standalone stream: where GETs attach and where messages that belong to no request go. */
    SseStream standalone() {
        return standalone;
    }

    /** Opens the stream for the SSE response to one POST. */
    synchronized SseStream newPostStream() {
        SseStream stream = new SseStream((int) nextStreamNumber);
        postStreams.put(nextStreamNumber++, stream);
        // Forget the oldest finished streams first; a running one is never dropped, or its
        // remaining events could not be resumed.
        Iterator<SseStream> oldestFirst = postStreams.values().iterator();
        while (postStreams.size() > MAX_RETAINED_POST_STREAMS && oldestFirst.hasNext()) {
            SseStream candidate = oldestFirst.next();
            if (candidate.isComplete() && !candidate.isAttached()) {
                oldestFirst.remove();
            }
        }
        return stream;
    }

    /** The stream with that number (0 is the standalone stream), or {@code null} if unknown or forgotten. */
    synchronized SseStream stream(long number) {
        return number == 0 ? standalone : postStreams.get(number);
    }

    /** Records activity, which keeps the session from expiring. */
    void touch() {
        lastActivityNanos = System.nanoTime();
    }

    /** Whether nothing happened since {@code cutoffNanos} (a {@link System#nanoTime} value) and no stream is open. */
    boolean idleSince(long cutoffNanos) {
        if (lastActivityNanos - cutoffNanos > 0 || standalone.isAttached()) {
            return false;
        }
        synchronized (this) {
            for (SseStream stream : postStreams.values()) {
                if (stream.isAttached() || !stream.isComplete()) {
                    return false;
                }
            }
        }
        return true;
    }

    boolean isEnded() {
        return ended;
    }

    /**
     * Ends the session: every stream completes, so open SSE responses write what they still owe
     * and end. Tool calls already running finish, but their messages go nowhere.
     */
    void end() {
        ended = true;
        List<SseStream> streams;
        synchronized (this) {
            streams = new ArrayList<>(postStreams.values());
        }
        standalone.complete();
        streams.forEach(SseStream::complete);
    }
}
