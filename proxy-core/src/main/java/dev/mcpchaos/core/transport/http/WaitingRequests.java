package dev.mcpchaos.core.transport.http;

import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;

import java.util.ArrayDeque;

/**
 * The pipelined requests of one client connection that wait their turn: what the decoder handed
 * on (heads, pieces of bodies, a request it refused) while an exchange was in progress, in order,
 * and a request that missed its deadline while waiting ({@link TimedOut}, answered 408 in its
 * turn). Past {@value #MAX_WAITING} pieces the front end stops reading until they are served.
 * Owned by its {@link FrontendHandler}, on the connection's event loop.
 */
final class WaitingRequests {

    /** Pipelined HTTP objects held before the connection stops being read. */
    static final int MAX_WAITING = 64;

    /** Stands in the queue for a pipelined request that missed its deadline: its turn answers 408 in its version. */
    record TimedOut(HttpVersion version, String message) {
    }

    private final ArrayDeque<Object> waiting = new ArrayDeque<>();

    boolean isEmpty() {
        return waiting.isEmpty();
    }

    /** Queues what the decoder handed on; takes it. Returns whether the queue is full: reading pauses. */
    boolean add(Object msg) {
        waiting.add(msg);
        return waiting.size() >= MAX_WAITING;
    }

    /** Whether there is room for more: reading may go on. */
    boolean roomToRead() {
        return waiting.size() < MAX_WAITING;
    }

    /** The next piece in line, or null; the caller takes it. */
    Object poll() {
        return waiting.poll();
    }

    /** Queues the 408 a pipelined request gets in its turn for missing its deadline. */
    void addTimedOut(HttpVersion version, String message) {
        waiting.add(new TimedOut(version, message));
    }

    /** Drops {@code request}, the last one queued, and what came of its body. */
    void dropLast(HttpRequest request) {
        while (!waiting.isEmpty()) {
            Object last = waiting.pollLast();
            ReferenceCountUtil.release(last);
            if (last == request) {
                break;
            }
        }
    }

    /** The connection closed: lets go of everything that waits. */
    void releaseAll() {
        for (Object msg = waiting.poll(); msg != null; msg = waiting.poll()) {
            ReferenceCountUtil.release(msg);
        }
    }
}
