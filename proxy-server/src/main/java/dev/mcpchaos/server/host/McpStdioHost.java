package dev.mcpchaos.server.host;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * An MCP server over one pair of streams (the stdio transport): frames lines, hands each message
 * to the {@link McpSessionHandler} of its one session and writes replies and notifications as
 * lines. The demo server ({@code DemoServer}) runs on it.
 *
 * <p>Threads: the caller of {@link #serve} reads and hands on every message inline, in order; a
 * handler that answers later (the demo's {@code tools/call}) answers from its own threads. Every
 * write goes through one lock because replies and progress notifications come from several
 * threads and a line must never be interleaved with another.
 *
 * <p>Limits: an incoming line may hold at most {@value #MAX_LINE_BYTES} bytes (a longer one is
 * skipped and answered with a parse error); at end of input, answers still due get
 * {@link #DRAIN_TIMEOUT} before the handlers are closed (which interrupts them).
 *
 * <p>When the handlers serve sessionless requests ({@link McpSessionHandler.Factory#sessionless()},
 * a dual-era server), a message that opens the way a 2026-07-28 client does
 * ({@link McpRevisions#isSessionlessRequest}: {@code server/discover}, or the protocol version in
 * {@code _meta}) goes to that handler, every other to the one session's: stdio has no header to
 * tell the eras apart by, so the message does.
 *
 * <p>Messages that belong to no request (the demo's log notification after
 * {@code logging/setLevel}) are not sent over stdio: this transport has always answered
 * {@code logging/setLevel} with its result only, and the scripted demo and existing clients rely
 * on that exact line sequence.
 */
public final class McpStdioHost {

    static final int MAX_LINE_BYTES = JsonRpc.MAX_MESSAGE_BYTES;

    static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(10);

    private final BoundedLineReader reader;
    private final OutputStream out;
    private final PrintStream log;
    private final String logPrefix;
    private final McpSessionHandler handler;
    /** The handler of sessionless (2026-07-28) requests, or null when the handlers serve none. */
    private final McpSessionHandler sessionless;
    private final Set<CompletableFuture<?>> inFlight = ConcurrentHashMap.newKeySet();
    private final Object writeLock = new Object();
    private boolean outputBroken; // guarded by writeLock

    private McpStdioHost(InputStream in, OutputStream out, PrintStream log, String logName, McpSessionHandler handler,
                         McpSessionHandler sessionless) {
        this.reader = new BoundedLineReader(in, MAX_LINE_BYTES);
        this.out = out;
        this.log = log;
        // String.concat, not +: a new shape of + costs a spawned server its own method handles at start.
        this.logPrefix = "[".concat(logName).concat("] ");
        this.handler = handler;
        this.sessionless = sessionless;
    }

    /**
     * Serves MCP on the given streams until {@code in} ends, then waits (at most
     * {@link #DRAIN_TIMEOUT}) for answers still due, closes {@code handlers} and returns.
     *
     * <p>Each message is written to {@code out} as one line of compact JSON and flushed. Neither
     * stream is closed: they belong to the caller.
     *
     * @param in where client messages arrive
     * @param out where replies and notifications go; nothing else is written to it
     * @param log where diagnostics go (stderr in production)
     * @param logName names this server in its diagnostics, such as {@code mcp-chaos-demo}
     * @param handlers opens the one session's handler; closed at the end, even on failure
     * @return the process exit code, {@code 0}
     * @throws IOException if reading {@code in} fails (a failing {@code out} is logged and tolerated,
     *     because a client that stopped reading will close {@code in} next)
     */
    public static int serve(InputStream in, OutputStream out, PrintStream log, String logName,
                            McpSessionHandler.Factory handlers) throws IOException {
        requireNonNull(in, "in");
        requireNonNull(out, "out");
        requireNonNull(log, "log");
        requireNonNull(logName, "logName");
        try {
            return new McpStdioHost(in, out, log, logName, handlers.open("stdio", unsolicited -> { }),
                    handlers.sessionless()).run();
        } finally {
            handlers.close();
        }
    }

    /** Serves until the input ends, then drains the answers still due; returns the exit code. */
    private int run() throws IOException {
        BoundedLineReader.Line line;
        while ((line = reader.next()) != null) {
            onLine(line);
        }
        drainInFlight();
        return 0;
    }

    private void onLine(BoundedLineReader.Line line) {
        if (line.tooLong()) {
            log.println(logPrefix + "skipped a message longer than " + MAX_LINE_BYTES + " bytes");
            write(JsonRpc.error(null, JsonRpc.PARSE_ERROR,
                    "Parse error: message longer than " + MAX_LINE_BYTES + " bytes"));
            return;
        }
        if (line.isBlank()) {
            return;
        }
        JsonNode message;
        try {
            message = JsonRpc.parse(line.bytes());
        } catch (IOException e) {
            write(JsonRpc.error(null, JsonRpc.PARSE_ERROR, "Parse error: " + JsonRpc.parseErrorReason(e)));
            return;
        }
        // A dual-era server (the handlers serve sessionless requests too) tells the eras apart by
        // the message, as stdio has no header: see McpRevisions.isSessionlessRequest.
        McpSessionHandler answering = sessionless != null && McpRevisions.isSessionlessRequest(message)
                ? sessionless : handler;
        track(answering.handle(message, this::write).thenAccept(reply -> {
            if (reply != null) {
                write(reply);
            }
        }));
    }

    /** Writes one message as one line; serialises outside the lock so a big reply does not hold others up longer than its copy. */
    private void write(JsonNode message) {
        byte[] bytes = JsonRpc.toBytes(message);
        synchronized (writeLock) {
            if (outputBroken) {
                return;
            }
            try {
                out.write(bytes);
                out.write('\n');
                out.flush();
            } catch (IOException e) {
                // The client has gone; keep reading until its input ends too, but stop writing.
                outputBroken = true;
                log.println(logPrefix + "cannot write to the client any more: " + e);
            }
        }
    }

    private void track(CompletableFuture<?> work) {
        inFlight.add(work);
        work.whenComplete((ignored, failure) -> {
            inFlight.remove(work);
            if (failure != null) {
                log.println(logPrefix + "failed to answer a message: " + failure);
            }
        });
    }

    private void drainInFlight() {
        CompletableFuture<?>[] pending = inFlight.toArray(new CompletableFuture<?>[0]);
        if (pending.length == 0) {
            return;
        }
        try {
            CompletableFuture.allOf(pending).get(DRAIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            log.println(logPrefix + inFlight.size() + " tool call(s) still running after " + DRAIN_TIMEOUT.toSeconds()
                    + " s at end of input; interrupting them");
        } catch (ExecutionException e) {
            // Already logged by track(); the session is over either way.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
