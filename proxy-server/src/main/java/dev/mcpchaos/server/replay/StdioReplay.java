package dev.mcpchaos.server.replay;

import dev.mcpchaos.server.internal.JsonTrees;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.server.record.Cassette;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Plays the server of recorded cassettes over stdio: reads the client's messages one a line,
 * answers each request with what was recorded for the same method and params (see
 * {@link ReplayIndex}), with the live request's id and progress token put in, and sends the
 * notifications the server sent on its own at their recorded place. A request with no recording
 * gets a JSON-RPC error {@code -32601} that names its method and the closest recorded request,
 * and is counted. Answers go out at once, or at their recorded delays ({@link Timing}), scheduled
 * so that the stdin reader never waits; at the end of the input the replay sends what is still
 * due, then returns. Faults come from the proxy in front of it: behind
 * {@code McpChaosProxy.stdio(InProcessServer.launcher("replay", replay::serveUntilEnd))} it sits
 * behind the same interceptor chain as a real server.
 */
public final class StdioReplay {

    private static final Logger log = LoggerFactory.getLogger(StdioReplay.class);

    private final ReplayIndex index;
    private final AtomicLong served = new AtomicLong();
    private final AtomicLong unmatched = new AtomicLong();
    private final Responder responder;
    private final TimedSender sender = new TimedSender();
    /** Replies scheduled and not yet sent, and the first failure of a scheduled write; guarded by itself. */
    private final Object pending = new Object();
    private int unsent;
    private RuntimeException sendFailure;

    /** @param cassettes what to play, read in this order; repeats beyond the recordings get the last again */
    public StdioReplay(List<Cassette> cassettes) {
        this(cassettes, OnExhausted.LAST);
    }

    /**
     * @param cassettes   what to play, read in this order
     * @param onExhausted what a repeat beyond its recordings gets
     */
    public StdioReplay(List<Cassette> cassettes, OnExhausted onExhausted) {
        this(cassettes, onExhausted, Timing.NONE, Matching.DEFAULT);
    }

    /**
     * @param cassettes   what to play, read in this order
     * @param onExhausted what a repeat beyond its recordings gets
     * @param timing      when answers go out
     * @param matching    how requests find their recordings
     */
    public StdioReplay(List<Cassette> cassettes, OnExhausted onExhausted, Timing timing, Matching matching) {
        this.index = new ReplayIndex(Objects.requireNonNull(cassettes, "cassettes"),
                Objects.requireNonNull(matching, "matching"));
        this.responder = new Responder(index, Objects.requireNonNull(onExhausted, "onExhausted"),
                Objects.requireNonNull(timing, "timing"), served, unmatched);
    }

    /** How many recorded requests the cassettes hold. */
    public int recordedRequests() {
        return index.recordedRequests();
    }

    /** Requests answered from the cassettes so far. */
    public long served() {
        return served.get();
    }

    /** Requests that had no recording so far. */
    public long unmatched() {
        return unmatched.get();
    }

    /** {@link #serve} as an {@link dev.mcpchaos.core.transport.stdio.InProcessServer.Body}: exit code 0 at the end. */
    public int serveUntilEnd(InputStream in, OutputStream out) throws IOException {
        serve(in, out);
        return 0;
    }

    /** Serves until {@code in} ends; {@code out} gets one message a line. */
    public void serve(InputStream in, OutputStream out) throws IOException {
        try {
            serveLines(in, out);
        } catch (java.io.UncheckedIOException e) {
            throw e.getCause(); // a write failed: the client (or the proxy) is gone
        }
        long n = served.get();
        log.info("replay: the client's input ended; {} {} answered from the cassettes, {} without a recording", n,
                n == 1 ? "request" : "requests", unmatched.get());
    }

    private void serveLines(InputStream in, OutputStream out) throws IOException {
        BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
            if (line.isBlank()) {
                continue;
            }
            long arrival = System.nanoTime();
            JsonNode message;
            try {
                message = JsonTrees.read(line);
            } catch (JsonProcessingException e) {
                write(out, Responder.error(null, -32700, "parse error: the line is not JSON (" + e.getOriginalMessage() + ")"));
                continue;
            }
            List<Responder.Out> reply = responder.respond(message);
            if (reply.isEmpty()) {
                continue;
            }
            synchronized (pending) {
                unsent++;
            }
            sender.send(reply, arrival, o -> write(out, o.message()), this::sent);
            throwIfFailed();
        }
        // What is still scheduled goes out before the end: a server answers what it was asked.
        synchronized (pending) {
            while (unsent > 0) {
                try {
                    pending.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException("interrupted while the last answers were due");
                }
            }
        }
        throwIfFailed();
    }

    private void sent(RuntimeException failure) {
        synchronized (pending) {
            unsent--;
            if (sendFailure == null) {
                sendFailure = failure;
            }
            pending.notifyAll();
        }
    }

    private void throwIfFailed() {
        synchronized (pending) {
            if (sendFailure != null) {
                throw sendFailure;
            }
        }
    }

    private static void write(OutputStream out, JsonNode message) {
        try {
            byte[] bytes = JsonTrees.bytes(message);
            synchronized (out) { // the stdin reader and the timing thread both write, a line at a time
                out.write(bytes);
                out.write('\n');
                out.flush();
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
