package dev.mcpchaos.server.demo;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One run of the demo server over one pair of streams (the stdio transport): frames lines, hands
 * each message to a {@link DemoHandler} and writes replies and notifications as lines.
 *
 * <p>Threads: the caller of {@link #run()} reads and answers everything cheap inline (in order);
 * {@code tools/call} runs on a pool of at most {@value #MAX_TOOL_THREADS} daemon threads (more calls
 * queue), so a {@code slow} call never delays a {@code ping}. Every write goes through one lock
 * because replies and progress notifications come from several threads and a line must never be
 * interleaved with another.
 *
 * <p>Limits: an incoming line may hold at most {@value #MAX_LINE_BYTES} bytes (a longer one is
 * skipped and answered with a parse error); at end of input, tool calls still running get
 * {@link #DRAIN_TIMEOUT} to finish before they are interrupted.
 *
 * <p>Messages that belong to no request (the log notification after {@code logging/setLevel}) are
 * not sent over stdio: this transport has always answered {@code logging/setLevel} with its result
 * only, and the scripted demo and existing clients rely on that exact line sequence.
 */
final class DemoSession {

    static final String LATEST_PROTOCOL_VERSION = DemoHandler.LATEST_PROTOCOL_VERSION;
    static final List<String> SUPPORTED_PROTOCOL_VERSIONS = DemoHandler.SUPPORTED_PROTOCOL_VERSIONS;

    /** Room for an {@code echo} of the largest {@code large} payload, plus its envelope. */
    static final int MAX_LINE_BYTES = DemoHandler.MAX_MESSAGE_BYTES;

    static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(10);

    static final int MAX_TOOL_THREADS = 64;
    private static final String LOG_PREFIX = DemoHandler.LOG_PREFIX;
    private static final AtomicInteger SESSION_COUNTER = new AtomicInteger();

    private final BoundedLineReader reader;
    private final OutputStream out;
    private final PrintStream log;
    private final DemoHandler handler;
    private final ExecutorService toolExecutor;
    private final Set<CompletableFuture<?>> inFlight = ConcurrentHashMap.newKeySet();
    private final Object writeLock = new Object();
    private boolean outputBroken; // guarded by writeLock

    DemoSession(InputStream in, OutputStream out, PrintStream log, String serverVersion) {
        this.reader = new BoundedLineReader(requireNonNull(in, "in"), MAX_LINE_BYTES);
        this.out = requireNonNull(out, "out");
        this.log = requireNonNull(log, "log");
        this.toolExecutor = newToolExecutor("mcp-chaos-demo-" + SESSION_COUNTER.incrementAndGet() + "-tool-");
        this.handler = new DemoHandler(log, requireNonNull(serverVersion, "serverVersion"), toolExecutor,
                unsolicited -> { });
    }

    /** Serves until the input ends, then drains in-flight tool calls; returns the exit code. */
    int run() throws IOException {
        try {
            BoundedLineReader.Line line;
            while ((line = reader.next()) != null) {
                onLine(line);
            }
            drainInFlight();
            return 0;
        } finally {
            toolExecutor.shutdownNow();
        }
    }

    private void onLine(BoundedLineReader.Line line) {
        if (line.tooLong()) {
            log.println(LOG_PREFIX + "skipped a message longer than " + MAX_LINE_BYTES + " bytes");
            write(DemoHandler.error(null, DemoHandler.PARSE_ERROR,
                    "Parse error: message longer than " + MAX_LINE_BYTES + " bytes"));
            return;
        }
        if (line.isBlank()) {
            return;
        }
        JsonNode message;
        try {
            message = DemoHandler.parse(line.bytes());
        } catch (IOException e) {
            write(DemoHandler.error(null, DemoHandler.PARSE_ERROR, "Parse error: " + DemoHandler.parseErrorReason(e)));
            return;
        }
        track(handler.handle(message, this::write).thenAccept(reply -> {
            if (reply != null) {
                write(reply);
            }
        }));
    }

    /** Writes one message as one line; serialises outside the lock so a big reply does not hold others up longer than its copy. */
    private void write(JsonNode message) {
        byte[] bytes = DemoHandler.toBytes(message);
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
                log.println(LOG_PREFIX + "cannot write to the client any more: " + e);
            }
        }
    }

    private void track(CompletableFuture<?> work) {
        inFlight.add(work);
        work.whenComplete((ignored, failure) -> {
            inFlight.remove(work);
            if (failure != null) {
                log.println(LOG_PREFIX + "failed to answer a message: " + failure);
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
            log.println(LOG_PREFIX + inFlight.size() + " tool call(s) still running after " + DRAIN_TIMEOUT.toSeconds()
                    + " s at end of input; interrupting them");
        } catch (ExecutionException e) {
            // Already logged by track(); the session is over either way.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A pool of at most {@value #MAX_TOOL_THREADS} daemon threads whose idle threads time out, so
     * an idle server holds no tool threads. Used by both transports.
     */
    static ExecutorService newToolExecutor(String threadNamePrefix) {
        ThreadPoolExecutor executor = new ThreadPoolExecutor(MAX_TOOL_THREADS, MAX_TOOL_THREADS,
                30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), daemonThreads(threadNamePrefix));
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }

    /** Named daemon threads: never keep a JVM alive just because a slow call is still sleeping. */
    static ThreadFactory daemonThreads(String namePrefix) {
        AtomicInteger threads = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, namePrefix + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
