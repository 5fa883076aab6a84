package dev.mcpchaos.server.record;

import dev.mcpchaos.server.internal.JsonTrees;
import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.core.codec.sse.SseFields;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.HeaderSource;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.intercept.ObservingInterceptor;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.session.Session;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBufUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Records every message that passes into a cassette (see {@link Cassette}), with its secrets
 * taken out first ({@link Recording}). An observer: it forwards every frame at once, unchanged.
 *
 * <p>Recording never blocks an event loop: on the loop a message is only copied (its bytes, and on
 * HTTP the exchange's method, status, content type, SSE fields and headers) into a queue, and one
 * thread of its own parses, redacts and writes, flushing after each batch. The queue holds at most
 * {@value #MAX_QUEUED_BYTES} bytes of messages; beyond that messages are dropped, counted, logged
 * once and marked in the cassette by a {@code gap} line. A write error is logged once and
 * recording stops; the proxy goes on. {@link #close()} writes what is queued and closes the files.
 *
 * <p>Secrets are taken out by a {@link Redactor} per cassette, sharing what the recording has
 * recognised ({@link KnownSecrets}). Lines are written as they come, so a secret recognised later
 * may stand bare in a line written before: once the files are closed, each such cassette is
 * rewritten without it ({@link CassetteScrub}). A recording that never closes keeps them.
 *
 * <p>A session's lines wait until its {@code initialize} was answered (or {@value #HOLD_MESSAGES}
 * messages or {@value #HOLD_MILLIS} ms passed), so that the header can say what was negotiated and
 * an HTTP session's lines carry its {@code Mcp-Session-Id} rather than the name it had before.
 */
public final class Recorder implements ObservingInterceptor, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Recorder.class);

    /** The most message bytes waiting to be written: 64 MiB. */
    static final long MAX_QUEUED_BYTES = 64L << 20;
    /** How many messages of a session wait for its initialize to be answered at most. */
    static final int HOLD_MESSAGES = 256;
    /** How long the messages of a session wait for its initialize to be answered at most. */
    static final long HOLD_MILLIS = 2000;
    /** Files kept open at once in a directory recording; others are closed and reopened to append. */
    private static final int OPEN_FILES = 32;

    private static final Object END = new Object();

    private final Recording recording;
    private final TransportKind transport;
    private final String recordedAt = Instant.now().truncatedTo(ChronoUnit.MILLIS).toString();
    /** The secrets looked for wherever they appear, in every cassette of this recording (the writer thread's). */
    private final KnownSecrets known;
    private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private final AtomicLong queuedBytes = new AtomicLong();
    private final AtomicLong droppedSinceGap = new AtomicLong();
    private final AtomicLong recorded = new AtomicLong();
    private volatile boolean stopped;
    private volatile boolean dropLogged;
    private final Thread writer;

    // ---- the writer thread's
    /** Weakly: a session that ended and was written is forgotten with it. */
    private final Map<Session, SessionState> sessions = new WeakHashMap<>();
    /** The one cassette of a file recording; null for a directory. */
    private CassetteFile single;
    private final LinkedHashMap<Path, CassetteFile> openFiles = new LinkedHashMap<>(16, 0.75f, true);
    private final Set<String> namesUsed = new HashSet<>();
    /** Every cassette begun, open or not: each gets the secrets recognised after its first line at the end. */
    private final List<CassetteFile> begun = new ArrayList<>();

    /**
     * Opens the cassette (a file recording) or makes the directory, and starts the writer thread.
     *
     * @throws UncheckedIOException naming the path, when it cannot be written
     */
    public Recorder(Recording recording, TransportKind transport) {
        this(recording, transport, Map.of());
    }

    /**
     * As {@link #Recorder(Recording, TransportKind)}, for a server given {@code serverVariables}
     * on top of the environment it inherits (a stdio server's {@code -e NAME=VALUE}): the
     * {@link Recording#redactEnv} variables are looked up there too, since what the server sees
     * is what it can print.
     *
     * @throws UncheckedIOException naming the path, when it cannot be written
     */
    public Recorder(Recording recording, TransportKind transport, Map<String, String> serverVariables) {
        this.recording = Objects.requireNonNull(recording, "recording");
        this.transport = Objects.requireNonNull(transport, "transport");
        Objects.requireNonNull(serverVariables, "serverVariables");
        for (String name : recording.unsetVariables(serverVariables)) {
            log.warn("record: --redact-env {}: the variable is not set, so there is nothing to redact", name);
        }
        known = new KnownSecrets(recording.secretValues(serverVariables));
        Path target = recording.target();
        try {
            if (recording.directory()) {
                Files.createDirectories(target);
            } else {
                single = new CassetteFile(target, newRedactor());
                single.open(false);
                begun.add(single);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("record: '" + target + "' cannot be written: " + e.getMessage()
                    + (recording.directory() ? " (expected: a directory to write cassettes in)"
                    : " (expected: a file in a directory that exists)"), e);
        }
        writer = new Thread(this::writeLoop, "mcp-chaos-recorder");
        writer.setDaemon(true);
        writer.start();
        log.info("recording into {}{} what the peers {}", target, recording.directory() ? " (one file per session)" : "",
                recording.isAfterFaults() ? "got (after faults)" : "sent (before faults)");
    }

    private Redactor newRedactor() {
        return new Redactor(recording.headers(), recording.paths(), known, 0);
    }

    /** How many messages were written so far. */
    public long recordedMessages() {
        return recorded.get();
    }

    @Override
    public void observe(InterceptorContext ctx, Frame frame) {
        if (!stopped && frame.envelope().kind() != MessageKind.BLANK) {
            capture(ctx, frame);
        }
    }

    private void capture(InterceptorContext ctx, Frame frame) {
        byte[] bytes = ByteBufUtil.getBytes(frame.content());
        if (queuedBytes.addAndGet(bytes.length) > MAX_QUEUED_BYTES) {
            queuedBytes.addAndGet(-bytes.length);
            droppedSinceGap.incrementAndGet();
            if (!dropLogged) {
                dropLogged = true;
                log.warn("record: the writer is behind by {} MiB of messages: dropping messages until it catches up"
                        + " (the cassette marks where, with a gap line)", MAX_QUEUED_BYTES >> 20);
            }
            return;
        }
        long dropped = droppedSinceGap.getAndSet(0);
        if (dropped > 0) {
            queue.add(new Gap(ctx.session(), dropped));
        }
        Direction direction = frame.direction();
        Envelope answers = frame.answers();
        HttpInfo http = null;
        if (frame.route() instanceof HeaderSource exchange) {
            boolean toClient = direction == Direction.SERVER_TO_CLIENT;
            List<Map.Entry<String, String>> responseHeaders = toClient ? exchange.responseHeaders() : List.of();
            String contentType = null;
            for (Map.Entry<String, String> header : responseHeaders) {
                if (header.getKey().equalsIgnoreCase("content-type")) {
                    contentType = header.getValue();
                    break;
                }
            }
            boolean sse = toClient && contentType != null
                    && contentType.toLowerCase(Locale.ROOT).startsWith("text/event-stream");
            SseFields fields = frame.framing() instanceof SseFields f ? f : null;
            http = new HttpInfo(frame.route(), exchange.requestMethod(), exchange.requestUri(),
                    toClient ? exchange.responseStatus() : 0, contentType, sse,
                    fields != null ? fields.id() : null, fields != null ? fields.eventType() : null,
                    toClient ? List.of() : List.copyOf(exchange.requestHeaders()), List.copyOf(responseHeaders));
        }
        Envelope envelope = frame.envelope();
        queue.add(new Captured(ctx.session(), System.nanoTime(), direction, bytes,
                answers != null ? answers.method() : null, envelope != null ? envelope.method() : null, http));
    }

    /** Nothing to see once recording stopped (a write error). */
    @Override
    public boolean inspects(TransportKind transport, Direction direction) {
        return !stopped;
    }

    /** Writes what is queued, closes the cassettes and stops the writer thread; waits up to 10 s. */
    @Override
    public void close() {
        queue.add(END);
        try {
            writer.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (writer.isAlive()) {
            log.warn("record: the writer did not finish within 10 s; the cassette may lack its last messages");
        }
    }

    @Override
    public String toString() {
        return "Recorder(" + recording.target() + ')';
    }

    // ------------------------------------------------------------------ the writer thread

    private void writeLoop() {
        List<Object> batch = new ArrayList<>();
        boolean ending = false;
        while (!ending) {
            try {
                Object first = queue.poll(200, TimeUnit.MILLISECONDS);
                if (first != null) {
                    batch.add(first);
                    queue.drainTo(batch);
                }
            } catch (InterruptedException e) {
                ending = true;
            }
            for (Object item : batch) {
                if (item == END) {
                    ending = true;
                } else if (!stopped) {
                    handle(item);
                }
                if (item instanceof Captured c) {
                    queuedBytes.addAndGet(-c.bytes().length);
                }
            }
            batch.clear();
            if (!stopped) {
                releaseHeld(ending);
                flushAll();
            }
        }
        closeAll();
        if (!stopped) {
            scrubEarlierLines();
        }
    }

    /**
     * Lines are written as they come, so a secret recognised in a later message (by its name,
     * its scheme, its shape) may stand bare in a line written before. Once every cassette is
     * closed, each one written before a secret became known is rewritten with it replaced (see
     * {@link CassetteScrub}); until then those lines hold it on disk.
     */
    private void scrubEarlierLines() {
        for (CassetteFile file : begun) {
            if (file.knownAtFirstLine < 0 || file.knownAtFirstLine >= known.count()) {
                continue; // nothing written, or nothing learned since its first line
            }
            try {
                int replaced = CassetteScrub.scrub(file.path, known.since(file.knownAtFirstLine), file.redactor::placeholder);
                if (replaced > 0) {
                    log.info("record: {}: redacted {} place(s) in lines written before the secret there was "
                            + "recognised", file.path, replaced);
                }
            } catch (IOException | RuntimeException e) {
                log.error("record: {}: could not take the secrets recognised later out of the lines written before"
                        + " ({}); the cassette may hold them", file.path, e.toString());
            }
        }
        begun.clear();
    }

    private void handle(Object item) {
        if (item instanceof Gap gap) {
            SessionState state = state(gap.session(), System.nanoTime());
            if (state.file != null) {
                writeGap(state, gap.dropped());
            } else {
                state.held.add(gap);
            }
            return;
        }
        Captured c = (Captured) item;
        SessionState state = state(c.session(), c.nanos());
        if (state.file != null) {
            write(state, c);
            return;
        }
        state.held.add(c);
        if (c.direction() == Direction.SERVER_TO_CLIENT && "initialize".equals(c.answersMethod())) {
            release(state, c.session());
        } else if (state.held.size() == 1 && c.direction() == Direction.CLIENT_TO_SERVER && c.method() != null
                && !c.method().equals("initialize")) {
            // A session that does not begin with initialize (a sessionless 2026-07-28 request, or a
            // session begun before the recording) has its final name already and nothing to
            // negotiate: its lines go now, in the order they came, not after the wait. Unless it
            // is a sessionless request whose cassette has no header yet: the server says who it
            // is only in its answers then (result _meta), so the header waits for one.
            if (headerPending() && sessionless(c)) {
                state.awaitingAnswer = true;
            } else {
                release(state, c.session());
            }
        } else if (state.awaitingAnswer && c.direction() == Direction.SERVER_TO_CLIENT && c.answersMethod() != null) {
            release(state, c.session());
            releaseAwaiting(); // the header is written now: the others need not wait for theirs
        }
    }

    /** Whether the next session released writes a header: always in a directory (a file each). */
    private boolean headerPending() {
        return single == null || !single.headerWritten;
    }

    private static boolean sessionless(Captured c) {
        JsonNode meta = metaOf(parse(c.bytes()));
        return meta != null && meta.path(META_PROTOCOL_VERSION).isTextual();
    }

    /** Releases the sessionless sessions held for a header that one cassette file now has, in arrival order. */
    private void releaseAwaiting() {
        if (headerPending()) {
            return;
        }
        List<SessionState> waiting = new ArrayList<>();
        for (SessionState state : sessions.values()) {
            if (state.awaitingAnswer && state.file == null && !state.held.isEmpty()) {
                waiting.add(state);
            }
        }
        waiting.sort(java.util.Comparator.comparingLong(SessionState::heldSince));
        for (SessionState state : waiting) {
            release(state, state.session());
        }
    }

    private SessionState state(Session session, long nanos) {
        return sessions.computeIfAbsent(session, s -> new SessionState(nanos));
    }

    /** Writes the sessions whose wait is over (or all of them, when ending). */
    private void releaseHeld(boolean all) {
        long now = System.nanoTime();
        for (SessionState state : sessions.values()) {
            if (state.file == null && !state.held.isEmpty() && (all || state.held.size() >= HOLD_MESSAGES
                    || now - state.heldSince() > TimeUnit.MILLISECONDS.toNanos(HOLD_MILLIS))) {
                release(state, state.session());
            }
        }
    }

    /** The session's wait is over: its cassette gets its header if it has none yet, then the held lines. */
    private void release(SessionState state, Session session) {
        if (stopped) {
            return;
        }
        CassetteFile file = single != null ? single : directoryFile(session);
        if (file == null) {
            return;
        }
        state.file = file;
        try {
            if (!file.headerWritten) {
                file.knownAtFirstLine = known.count();
                file.writer().writeHeader(header(state, file.redactor));
                file.headerWritten = true;
            }
        } catch (IOException e) {
            fail(file, e);
            return;
        }
        for (Object held : state.held) {
            if (held instanceof Gap gap) {
                writeGap(state, gap.dropped());
            } else {
                write(state, (Captured) held);
            }
        }
        state.held.clear();
    }

    /** A new cassette in the directory, named after the session. */
    private CassetteFile directoryFile(Session session) {
        String base = session.id().replaceAll("[^A-Za-z0-9._-]", "_");
        if (base.length() > 100) {
            base = base.substring(0, 100);
        }
        String name = base;
        for (int n = 2; !namesUsed.add(name); n++) {
            name = base + "-" + n;
        }
        CassetteFile file = new CassetteFile(recording.target().resolve(name + ".ndjson"), newRedactor());
        try {
            file.open(false);
        } catch (IOException e) {
            fail(file, e);
            return null;
        }
        track(file);
        begun.add(file);
        return file;
    }

    private void track(CassetteFile file) {
        openFiles.put(file.path, file);
        if (openFiles.size() > OPEN_FILES) {
            CassetteFile eldest = openFiles.values().iterator().next();
            openFiles.remove(eldest.path);
            eldest.closeQuietly();
        }
    }

    private CassetteHeader header(SessionState state, Redactor redactor) {
        JsonNode request = null;
        JsonNode result = null;
        for (Object held : state.held) {
            if (held instanceof Captured c) {
                JsonNode message = parse(c.bytes());
                if (message == null) {
                    continue;
                }
                if (c.direction() == Direction.CLIENT_TO_SERVER && "initialize".equals(message.path("method").asText())) {
                    request = message.path("params");
                } else if ("initialize".equals(c.answersMethod()) && message.has("result")) {
                    result = message.get("result");
                }
            }
        }
        if (request == null && result == null) {
            // Sessionless (2026-07-28): no initialize; each request names the version and its
            // client in its _meta, so the first one's says what was spoken.
            for (Object held : state.held) {
                JsonNode meta = held instanceof Captured c && c.direction() == Direction.CLIENT_TO_SERVER
                        ? metaOf(parse(c.bytes())) : null;
                if (meta != null && meta.path(META_PROTOCOL_VERSION).isTextual()) {
                    // The server names itself in a result's _meta, and server/discover's result
                    // holds its capabilities: both from the answer the header waited for, if any.
                    JsonNode answer = null;
                    String answered = null;
                    for (Object other : state.held) {
                        if (other instanceof Captured line && line.direction() == Direction.SERVER_TO_CLIENT
                                && line.answersMethod() != null) {
                            JsonNode message = parse(line.bytes());
                            if (message != null && message.path("result").isObject()) {
                                answer = message.get("result");
                                answered = line.answersMethod();
                                break;
                            }
                        }
                    }
                    return new CassetteHeader(Cassette.FORMAT_VERSION, transport == TransportKind.HTTP ? "http" : "stdio",
                            recordedAt, "mcp-chaos " + version(), meta.get(META_PROTOCOL_VERSION).asText(),
                            redactor.message(field(answer != null ? answer.get("_meta") : null, META_SERVER_INFO)),
                            "server/discover".equals(answered) ? redactor.message(field(answer, "capabilities")) : null,
                            redactor.message(field(meta, META_CLIENT_INFO)),
                            redactor.message(field(meta, META_CLIENT_CAPABILITIES)));
                }
            }
        }
        return new CassetteHeader(Cassette.FORMAT_VERSION, transport == TransportKind.HTTP ? "http" : "stdio",
                recordedAt, "mcp-chaos " + version(),
                result != null && result.path("protocolVersion").isTextual() ? result.get("protocolVersion").asText() : null,
                redactor.message(field(result, "serverInfo")), redactor.message(field(result, "capabilities")),
                redactor.message(field(request, "clientInfo")), redactor.message(field(request, "capabilities")));
    }

    /** The 2026-07-28 request metadata keys (docs/specification/2026-07-28, basic/transports). */
    private static final String META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
    private static final String META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
    private static final String META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
    private static final String META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";

    private static JsonNode metaOf(JsonNode message) {
        JsonNode meta = message != null ? message.path("params").get("_meta") : null;
        return meta != null && meta.isObject() ? meta : null;
    }

    private static JsonNode field(JsonNode node, String name) {
        JsonNode value = node != null ? node.get(name) : null;
        return value != null && value.isObject() ? value.deepCopy() : null;
    }

    private void write(SessionState state, Captured c) {
        CassetteFile file = state.file;
        Redactor redactor = file.redactor;
        // The headers first: a token in Authorization is then known when the body echoes it bare.
        HttpExchange http = c.http() == null ? null : exchange(file, c.http(), redactor);
        JsonNode message = parse(c.bytes());
        String raw = null;
        if (message != null) {
            message = redactor.message(message);
        } else {
            raw = redactor.text(new String(c.bytes(), StandardCharsets.UTF_8));
        }
        double millis = (c.nanos() - state.startNanos) / 1e6;
        CassetteEntry entry = new CassetteEntry(file.seq, Math.max(0, millis), c.direction(), c.session().id(),
                http, message, raw);
        try {
            file.writer().writeEntry(entry);
            file.seq++;
            recorded.incrementAndGet();
        } catch (IOException e) {
            fail(file, e);
        }
    }

    private void writeGap(SessionState state, long dropped) {
        try {
            state.file.writer().writeGap(dropped, "the recorder's queue was full; these messages were not recorded");
        } catch (IOException e) {
            fail(state.file, e);
        }
    }

    /** The exchange's number in this cassette, and its headers on its first line in each direction. */
    private static HttpExchange exchange(CassetteFile file, HttpInfo info, Redactor redactor) {
        ExchangeSeen seen = file.exchanges.computeIfAbsent(info.route(), r -> new ExchangeSeen(++file.exchangeCount));
        List<Map.Entry<String, String>> requestHeaders = null;
        List<Map.Entry<String, String>> responseHeaders = null;
        if (!info.requestHeaders().isEmpty() && !seen.request) {
            seen.request = true;
            requestHeaders = redactor.headers(info.requestHeaders());
        }
        if (!info.responseHeaders().isEmpty() && !seen.response) {
            seen.response = true;
            responseHeaders = redactor.headers(info.responseHeaders());
        }
        return new HttpExchange(seen.number, info.method(), info.uri() == null ? null : redactor.text(info.uri()),
                info.status(), info.contentType(), info.sse(), info.sseId(), info.sseEvent(), requestHeaders,
                responseHeaders);
    }

    private static JsonNode parse(byte[] bytes) {
        try {
            return JsonTrees.read(bytes);
        } catch (IOException e) {
            return null; // not JSON: recorded as text
        }
    }

    private void flushAll() {
        try {
            if (single != null) {
                single.flush();
            }
            for (CassetteFile file : openFiles.values()) {
                file.flush();
            }
        } catch (IOException e) {
            fail(null, e);
        }
    }

    private void closeAll() {
        if (single != null) {
            single.closeQuietly();
        }
        openFiles.values().forEach(CassetteFile::closeQuietly);
        openFiles.clear();
    }

    /** Logs once and stops recording: the proxy goes on without it. */
    private void fail(CassetteFile file, IOException e) {
        if (!stopped) {
            stopped = true;
            log.error("record: cannot write {}: {}; recording stopped, the proxy goes on",
                    file != null ? file.path : recording.target(), e.toString());
        }
        closeAll(); // what is still queued is passed over: the loop skips it once stopped
    }

    static String version() {
        try (InputStream in = Recorder.class.getResourceAsStream("/dev/mcpchaos/server/version.properties")) {
            if (in != null) {
                Properties properties = new Properties();
                properties.load(in);
                String version = properties.getProperty("version");
                if (version != null && !version.isBlank() && !version.contains("${")) {
                    return version.trim();
                }
            }
        } catch (IOException e) {
            // a missing version never stops a recording
        }
        return "unknown";
    }

    // ------------------------------------------------------------------ what travels and what is kept

    /** A message copied on the loop. */
    private record Captured(Session session, long nanos, Direction direction, byte[] bytes, String answersMethod,
                            String method, HttpInfo http) {
    }

    /** Messages dropped before the next one of a session. */
    private record Gap(Session session, long dropped) {
    }

    /** The HTTP exchange a message travelled on, as read on the loop. */
    private record HttpInfo(Object route, String method, String uri, int status, String contentType, boolean sse,
                            String sseId, String sseEvent, List<Map.Entry<String, String>> requestHeaders,
                            List<Map.Entry<String, String>> responseHeaders) {
    }

    private static final class ExchangeSeen {
        final int number;
        boolean request;
        boolean response;

        ExchangeSeen(int number) {
            this.number = number;
        }
    }

    /** Holds no reference to its session, so that the weak map can let the session go. */
    private static final class SessionState {
        final long startNanos;
        final List<Object> held = new ArrayList<>();
        final long createdNanos = System.nanoTime();
        CassetteFile file;
        /** A sessionless request held until its answer, for the header (see {@link #handle}). */
        boolean awaitingAnswer;

        SessionState(long startNanos) {
            this.startNanos = startNanos;
        }

        long heldSince() {
            return createdNanos;
        }

        /** The session of the held lines (there must be some). */
        Session session() {
            Object first = held.get(0);
            return first instanceof Captured c ? c.session() : ((Gap) first).session();
        }
    }

    /** One cassette being written. */
    private final class CassetteFile {
        final Path path;
        final Redactor redactor;
        /** By route: the exchange objects themselves, weakly, so that finished exchanges go. */
        final WeakHashMap<Object, ExchangeSeen> exchanges = new WeakHashMap<>();
        int exchangeCount;
        long seq;
        boolean headerWritten;
        /** How many secrets were known when its first line was written; -1 before. */
        int knownAtFirstLine = -1;
        private CassetteWriter writer;

        CassetteFile(Path path, Redactor redactor) {
            this.path = path;
            this.redactor = redactor;
        }

        void open(boolean append) throws IOException {
            OutputStream out = append
                    ? Files.newOutputStream(path, java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.APPEND)
                    : Files.newOutputStream(path);
            writer = new CassetteWriter(new BufferedOutputStream(out, 64 * 1024));
        }

        CassetteWriter writer() throws IOException {
            if (writer == null) {
                open(true); // closed to keep few files open: appended to again
                if (single != this) {
                    track(this);
                }
            }
            return writer;
        }

        void flush() throws IOException {
            if (writer != null) {
                writer.flush();
            }
        }

        void closeQuietly() {
            if (writer != null) {
                try {
                    writer.close();
                } catch (IOException e) {
                    log.warn("record: closing {}: {}", path, e.toString());
                }
                writer = null;
            }
        }
    }
}
