package dev.mcpchaos.server.host;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One logical SSE stream of a Streamable HTTP session: the events sent on it, kept for replay,
 * and at most one HTTP response it is currently written to.
 *
 * <p>A stream outlives its connections. Events appended while no connection is attached are kept
 * and written when one attaches, so a client that lost its connection can resume with
 * {@code Last-Event-ID} and miss nothing; the standalone GET stream also keeps what was sent
 * before the client first opened it. Event ids are {@code <stream number>-<sequence>} (for
 * example {@code 3-2}): unique within the session, and they name the stream to resume, as the
 * 2025-11-25 revision asks.
 *
 * <p>Wire format of one event (the data is compact JSON, so always one line):
 * <pre>
 * id: 3-2
 * event: message
 * data: {"jsonrpc":"2.0",...}
 *
 * </pre>
 * While a connection is idle for the keep-alive interval, a comment line {@code : keep-alive}
 * is written, so intermediaries do not time it out and a vanished client is noticed.
 *
 * <p>Limits: the last {@value #MAX_RETAINED_EVENTS} events are kept; a resumption from an older
 * id starts at the oldest event kept.
 *
 * <p>Threads: producers call {@link #append} and {@link #complete} from any thread; the thread
 * serving an HTTP response runs {@link Connection#serve} and is the only one writing to that
 * response.
 */
final class SseStream {

    static final int MAX_RETAINED_EVENTS = 1000;

    /** For {@link #attach}: start after the last event some earlier connection flushed. */
    static final long AFTER_DELIVERED = -1;

    private static final byte[] KEEP_ALIVE = ": keep-alive\n\n".getBytes(StandardCharsets.US_ASCII);

    /** One event, already framed, so a replay writes exactly the bytes of the first delivery. */
    private record Event(long sequence, byte[] frame) {
    }

    private final int number;
    /** Whether events carry ids: not on a sessionless (2026-07-28) stream, a revision without resumption. */
    private final boolean ids;
    private final ArrayDeque<Event> events = new ArrayDeque<>(); // guarded by this
    private long lastSequence; // guarded by this
    private long deliveredSequence; // guarded by this: the last event flushed to some connection
    private boolean complete; // guarded by this: nothing more will be appended
    private Connection connection; // guarded by this: the one being written to, or null

    SseStream(int number) {
        this(number, true);
    }

    /**
     * @param ids whether events carry {@code id:} lines; false for a sessionless (2026-07-28)
     *            request's answer: that revision removed SSE event ids and resumption
     */
    SseStream(int number, boolean ids) {
        this.number = number;
        this.ids = ids;
    }

    /** This stream's number in its session: the part of its event ids before the dash. */
    int number() {
        return number;
    }

    /**
     * Parses an event id of the form {@code <stream>-<sequence>}.
     *
     * @return {@code {stream, sequence}}, or {@code null} if {@code id} is not of that form
     */
    static long[] parseEventId(String id) {
        if (id == null) {
            return null;
        }
        int dash = id.indexOf('-');
        if (dash <= 0 || dash == id.length() - 1) {
            return null;
        }
        try {
            long stream = Long.parseLong(id.substring(0, dash).trim());
            long sequence = Long.parseLong(id.substring(dash + 1).trim());
            return stream >= 0 && sequence >= 0 ? new long[] {stream, sequence} : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Adds one message as the next event; ignored once the stream is complete. */
    void append(JsonNode message) {
        appendEvent("event: message\ndata: ", JsonRpc.toBytes(message));
    }

    /**
     * Adds the priming event, an id and empty data ({@code id: 3-1\ndata:\n\n}): a client that
     * has only it can still resume the stream with {@code Last-Event-ID} (2025-11-25,
     * basic/transports, "Sending Messages to the Server" item 6: the server SHOULD send it first).
     * Ignored once the stream is complete.
     */
    void prime() {
        appendEvent("data:", new byte[0]);
    }

    /** Adds the next event: its id line, then {@code fields} and {@code data}, then the blank line. */
    private void appendEvent(String fields, byte[] data) {
        synchronized (this) {
            if (complete) {
                return;
            }
            long sequence = ++lastSequence;
            byte[] head = ((ids ? "id: " + number + "-" + sequence + "\n" : "") + fields)
                    .getBytes(StandardCharsets.US_ASCII);
            byte[] frame = new byte[head.length + data.length + 2];
            System.arraycopy(head, 0, frame, 0, head.length);
            System.arraycopy(data, 0, frame, head.length, data.length);
            frame[frame.length - 2] = '\n';
            frame[frame.length - 1] = '\n';
            events.addLast(new Event(sequence, frame));
            if (events.size() > MAX_RETAINED_EVENTS) {
                events.removeFirst();
            }
            notifyAll();
        }
    }

    /** Marks the end of the stream: a connection ends once it has written every event. */
    synchronized void complete() {
        complete = true;
        notifyAll();
    }

    synchronized boolean isComplete() {
        return complete;
    }

    /** Whether a connection is attached right now. */
    synchronized boolean isAttached() {
        return connection != null;
    }

    /**
     * Makes a new connection the one this stream is written to, from now on: events appended
     * after this call go to it, and a connection attached earlier stops (it is taken over: a
     * client reconnecting must not have to wait for the server to notice that the old one is
     * dead). Call it before sending the response headers, so that a client that has seen them
     * can rely on the takeover. Then call {@link Connection#serve}.
     *
     * @param afterSequence the last sequence the client has (0 for all), or {@link #AFTER_DELIVERED}
     *     to continue after the last event flushed to an earlier connection
     */
    synchronized Connection attach(long afterSequence) {
        // An id from the future (a confused or malicious client) must not silence the stream.
        long cursor = afterSequence == AFTER_DELIVERED ? deliveredSequence : Math.min(afterSequence, lastSequence);
        Connection attached = new Connection(cursor);
        connection = attached;
        notifyAll(); // wakes the previous connection so it sees it has been replaced
        return attached;
    }

    /** One HTTP response this stream is written to; see {@link #attach}. */
    final class Connection {

        private long cursor; // only the serving thread touches it

        private Connection(long cursor) {
            this.cursor = cursor;
        }

        /**
         * Writes the events after the attach point to {@code body}, then every new one as it is
         * appended, until the stream is complete and fully written, another connection takes over,
         * or a write fails; then detaches. Blocks the calling thread throughout.
         *
         * @param body the response body; flushed after every write, never closed here
         * @param keepAlive how long the response may be silent before a keep-alive comment
         * @throws IOException if writing fails (the client went away); the stream stays resumable
         */
        void serve(OutputStream body, Duration keepAlive) throws IOException {
            requireNonNull(body, "body");
            long keepAliveNanos = keepAlive.toNanos();
            try {
                while (true) {
                    List<byte[]> frames = new ArrayList<>();
                    boolean finished;
                    synchronized (SseStream.this) {
                        long deadline = System.nanoTime() + keepAliveNanos;
                        while (connection == this && lastSequence <= cursor && !complete) {
                            long remaining = deadline - System.nanoTime();
                            if (remaining <= 0) {
                                break;
                            }
                            try {
                                TimeUnit.NANOSECONDS.timedWait(SseStream.this, remaining);
                            } catch (InterruptedException e) {
                                // The server is stopping; end this response.
                                Thread.currentThread().interrupt();
                                return;
                            }
                        }
                        if (connection != this) {
                            return;
                        }
                        for (Event event : events) {
                            if (event.sequence() > cursor) {
                                frames.add(event.frame());
                            }
                        }
                        cursor = Math.max(cursor, lastSequence);
                        // No append can follow complete(), so these frames are the last.
                        finished = complete;
                    }
                    if (frames.isEmpty() && !finished) {
                        body.write(KEEP_ALIVE);
                    } else {
                        for (byte[] frame : frames) {
                            body.write(frame);
                        }
                    }
                    body.flush();
                    synchronized (SseStream.this) {
                        deliveredSequence = Math.max(deliveredSequence, cursor);
                    }
                    if (finished) {
                        return;
                    }
                }
            } finally {
                detach();
            }
        }

        /** Stops being the stream's connection, unless another one has taken over already. Idempotent. */
        void detach() {
            synchronized (SseStream.this) {
                if (connection == this) {
                    connection = null;
                }
            }
        }
    }
}
