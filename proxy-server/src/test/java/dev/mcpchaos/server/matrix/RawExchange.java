package dev.mcpchaos.server.matrix;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One HTTP/1.1 request on a connection of its own to 127.0.0.1, and what came back, byte by byte
 * with the time each piece arrived: the head, the body as its framing delivers it (chunked or
 * Content-Length), the SSE events in it, and how the response ended. Reads in a thread of its own
 * until the response ends, the connection closes, or the deadline passes.
 */
final class RawExchange {

    /** How a response ended. */
    enum End {
        /** Completely: its Content-Length, or the chunked body's last chunk. */
        CLEAN,
        /** The connection closed (or was reset) in the middle of the body. */
        CUT,
        /** The connection closed without a byte of a response. */
        CLOSED,
        /** Still open at the deadline, after its head. */
        OPEN,
        /** No response head by the deadline, the connection still open. */
        NONE
    }

    /** A piece of the decoded body and when it arrived. */
    private record Piece(byte[] bytes, long at) {
    }

    /** One SSE event: its exact bytes, its data and when its last byte arrived. */
    record SseEvent(String raw, String data, long at) {
        /** The value of its {@code id} field, or null. */
        String id() {
            for (String line : raw.split("\n")) {
                if (line.startsWith("id:")) {
                    return line.substring(3).trim();
                }
            }
            return null;
        }
    }

    final String name;
    final long sentAt;
    private final Clock clock;
    private final Socket socket;
    private final long deadlineNanos;
    private final CompletableFuture<Void> finished = new CompletableFuture<>();
    private final List<Piece> pieces = new ArrayList<>();
    private volatile int status = -1;
    private volatile long headAt = -1;
    private final List<String[]> headers = new ArrayList<>();
    private volatile End end;
    private volatile long endAt = -1;

    private RawExchange(String name, Clock clock, int port, byte[] request, long deadlineNanos) {
        this.name = name;
        this.clock = clock;
        this.deadlineNanos = deadlineNanos;
        try {
            socket = new Socket();
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            sentAt = clock.now();
            socket.getOutputStream().write(request);
            socket.getOutputStream().flush();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot send " + name + " to 127.0.0.1:" + port, e);
        }
        Thread reader = new Thread(this::read, "matrix-client-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    /** POSTs a JSON-RPC body to /mcp as an MCP client does, with the session id when not null. */
    static RawExchange post(String name, Clock clock, int port, String session, String json, long deadlineNanos) {
        byte[] body = json.getBytes(UTF_8);
        StringBuilder head = new StringBuilder("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:").append(port).append("\r\n")
                .append("Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n")
                .append("MCP-Protocol-Version: 2025-11-25\r\n");
        if (session != null) {
            head.append("Mcp-Session-Id: ").append(session).append("\r\n");
        }
        head.append("Content-Length: ").append(body.length).append("\r\n\r\n");
        byte[] headBytes = head.toString().getBytes(ISO_8859_1);
        byte[] all = new byte[headBytes.length + body.length];
        System.arraycopy(headBytes, 0, all, 0, headBytes.length);
        System.arraycopy(body, 0, all, headBytes.length, body.length);
        return new RawExchange(name, clock, port, all, deadlineNanos);
    }

    /** Opens the session's GET stream. */
    static RawExchange get(String name, Clock clock, int port, String session, long deadlineNanos) {
        return get(name, clock, port, session, null, deadlineNanos);
    }

    /** A GET of the session's stream, resumed after {@code lastEventId} when it is not null. */
    static RawExchange get(String name, Clock clock, int port, String session, String lastEventId,
                           long deadlineNanos) {
        String head = "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nAccept: text/event-stream\r\n"
                + "MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: " + session + "\r\n"
                + (lastEventId == null ? "" : "Last-Event-ID: " + lastEventId + "\r\n") + "\r\n";
        return new RawExchange(name, clock, port, head.getBytes(ISO_8859_1), deadlineNanos);
    }

    private void read() {
        try {
            InputStream in = new BufferedInputStream(socket.getInputStream());
            String statusLine = readLine(in);
            if (statusLine == null) {
                finish(End.CLOSED);
                return;
            }
            List<String[]> head = new ArrayList<>();
            for (String line = readLine(in); line != null && !line.isEmpty(); line = readLine(in)) {
                int colon = line.indexOf(':');
                head.add(new String[] {line.substring(0, colon).trim(), line.substring(colon + 1).trim()});
            }
            synchronized (this) {
                headers.addAll(head);
                status = Integer.parseInt(statusLine.split(" ")[1]);
                headAt = clock.now();
            }
            String length = header("Content-Length");
            String encoding = header("Transfer-Encoding");
            if (encoding != null && encoding.toLowerCase(Locale.ROOT).contains("chunked")) {
                readChunked(in);
            } else if (length != null) {
                readLength(in, Long.parseLong(length));
            } else {
                readToEnd(in);
            }
        } catch (SocketTimeoutException e) {
            finish(status < 0 ? End.NONE : End.OPEN);
        } catch (IOException e) {
            finish(status < 0 ? End.CLOSED : End.CUT);
        } finally {
            finish(End.CUT); // a no-op when an end was recorded
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    private void readChunked(InputStream in) throws IOException {
        while (true) {
            String sizeLine = readLine(in);
            if (sizeLine == null) {
                finish(End.CUT);
                return;
            }
            int size = Integer.parseInt(sizeLine.split(";")[0].trim(), 16);
            if (size == 0) {
                readLine(in); // the blank line after the last chunk (no trailers here)
                finish(End.CLEAN);
                return;
            }
            byte[] data = in.readNBytes(size);
            if (data.length < size) {
                add(data);
                finish(End.CUT);
                return;
            }
            add(data);
            readLine(in);
        }
    }

    private void readLength(InputStream in, long length) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        byte[] buffer = new byte[8192];
        while (body.size() < length) {
            int n = in.read(buffer, 0, (int) Math.min(buffer.length, length - body.size()));
            if (n < 0) {
                break;
            }
            body.write(buffer, 0, n);
        }
        add(body.toByteArray()); // a JSON body is one message: it counts when it is whole
        finish(body.size() == length ? End.CLEAN : End.CUT);
    }

    private void readToEnd(InputStream in) throws IOException {
        add(in.readAllBytes());
        finish(End.CLEAN);
    }

    private String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        while (true) {
            long left = deadlineNanos - clock.now();
            if (left <= 0) {
                throw new SocketTimeoutException("deadline");
            }
            socket.setSoTimeout((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            int b = in.read();
            if (b < 0) {
                return line.size() == 0 ? null : line.toString(ISO_8859_1);
            }
            if (b == '\n') {
                String text = line.toString(ISO_8859_1);
                return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
            }
            line.write(b);
        }
    }

    private synchronized void add(byte[] bytes) {
        if (bytes.length > 0) {
            pieces.add(new Piece(bytes, clock.now()));
        }
    }

    private synchronized void finish(End how) {
        if (end == null) {
            end = how;
            endAt = clock.now();
            finished.complete(null);
        }
    }

    /** Waits for the response to end (or the deadline to pass). */
    RawExchange await() {
        finished.orTimeout(TimeUnit.NANOSECONDS.toMillis(deadlineNanos - clock.now()) + 5_000, TimeUnit.MILLISECONDS)
                .exceptionally(e -> null).join();
        return this;
    }

    boolean isFinished() {
        return finished.isDone();
    }

    int status() {
        return status;
    }

    long headAt() {
        return headAt;
    }

    synchronized String header(String name) {
        for (String[] header : headers) {
            if (header[0].equalsIgnoreCase(name)) {
                return header[1];
            }
        }
        return null;
    }

    End end() {
        return end;
    }

    long endAt() {
        return endAt;
    }

    /** The whole body as text. */
    synchronized String body() {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        pieces.forEach(p -> all.writeBytes(p.bytes));
        return all.toString(UTF_8);
    }

    /** When the whole body had arrived (the last piece), or -1 for none. */
    synchronized long bodyAt() {
        return pieces.isEmpty() ? -1 : pieces.get(pieces.size() - 1).at;
    }

    /** The body read as an SSE stream: every complete event, with when its last byte arrived. */
    synchronized List<SseEvent> events() {
        List<SseEvent> events = new ArrayList<>();
        StringBuilder event = new StringBuilder();
        StringBuilder line = new StringBuilder();
        for (Piece piece : pieces) {
            String text = new String(piece.bytes, UTF_8);
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                event.append(c);
                if (c != '\n') {
                    line.append(c);
                    continue;
                }
                boolean blank = line.length() == 0;
                line.setLength(0);
                if (blank) {
                    events.add(new SseEvent(event.toString(), data(event.toString()), piece.at));
                    event.setLength(0);
                }
            }
        }
        return events;
    }

    private static String data(String raw) {
        StringBuilder data = new StringBuilder();
        boolean first = true;
        for (String line : raw.split("\n")) {
            if (line.startsWith("data:")) {
                String value = line.substring(5);
                if (!first) {
                    data.append('\n');
                }
                data.append(value.startsWith(" ") ? value.substring(1) : value);
                first = false;
            }
        }
        return data.toString();
    }

    /** Ends the exchange from the client's side. */
    void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public String toString() {
        return name + ": " + (status < 0 ? "no response" : "HTTP " + status + " " + header("Content-Type")) + ", "
                + end + (body().isEmpty() ? "" : ", body " + body());
    }
}
