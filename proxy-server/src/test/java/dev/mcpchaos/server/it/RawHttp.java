package dev.mcpchaos.server.it;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A minimal HTTP/1.1 client on a plain socket, for what {@code java.net.http} cannot do: send
 * garbage, stop reading on purpose, cut a connection mid-stream at a chosen byte, and read an
 * SSE stream event by event with the exact bytes of each event.
 *
 * <p>Every read is bounded by the socket's read timeout ({@link #DEFAULT_READ_TIMEOUT} unless
 * changed), so a test that waits for bytes that never come fails instead of hanging.
 */
final class RawHttp implements AutoCloseable {

    static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(20);

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private RawHttp(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new java.io.BufferedInputStream(socket.getInputStream(), 64 * 1024);
        this.out = socket.getOutputStream();
    }

    /** Connects to 127.0.0.1:port. */
    static RawHttp connect(int port) {
        return connect(port, -1);
    }

    /** Connects to 127.0.0.1:port with a receive buffer of {@code receiveBuffer} bytes (-1: the default). */
    static RawHttp connect(int port, int receiveBuffer) {
        try {
            Socket socket = new Socket();
            if (receiveBuffer > 0) {
                socket.setReceiveBufferSize(receiveBuffer); // before connect, so the window is small from the start
            }
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.setSoTimeout((int) DEFAULT_READ_TIMEOUT.toMillis());
            return new RawHttp(socket);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot connect to 127.0.0.1:" + port, e);
        }
    }

    Socket socket() {
        return socket;
    }

    void readTimeout(Duration timeout) throws IOException {
        socket.setSoTimeout((int) timeout.toMillis());
    }

    /** Writes raw bytes. */
    RawHttp write(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
        return this;
    }

    /** Sends a request: {@code METHOD path}, the given header lines, a Content-Length and the body. */
    RawHttp request(String method, String path, List<String> headers, byte[] body) throws IOException {
        StringBuilder head = new StringBuilder().append(method).append(' ').append(path).append(" HTTP/1.1\r\n")
                .append("Host: 127.0.0.1:").append(socket.getPort()).append("\r\n");
        for (String header : headers) {
            head.append(header).append("\r\n");
        }
        if (body != null) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("\r\n");
        out.write(head.toString().getBytes(ISO_8859_1));
        if (body != null) {
            out.write(body);
        }
        out.flush();
        return this;
    }

    /** POSTs a JSON-RPC body to {@code path}, accepting JSON and SSE as an MCP client does. */
    RawHttp post(String path, String json, String... extraHeaders) throws IOException {
        List<String> headers = new ArrayList<>(List.of("Content-Type: application/json",
                "Accept: application/json, text/event-stream"));
        headers.addAll(List.of(extraHeaders));
        return request("POST", path, headers, json.getBytes(UTF_8));
    }

    /** Reads a response head (skipping 1xx answers). */
    Response readHead() throws IOException {
        while (true) {
            String statusLine = readLine(in);
            if (statusLine == null) {
                throw new EOFException("connection closed before a response head");
            }
            String[] parts = statusLine.split(" ", 3);
            if (parts.length < 2 || !parts[0].startsWith("HTTP/")) {
                throw new IOException("not an HTTP status line: " + statusLine);
            }
            int status = Integer.parseInt(parts[1]);
            List<String[]> headers = new ArrayList<>();
            for (String line = readLine(in); line != null && !line.isEmpty(); line = readLine(in)) {
                int colon = line.indexOf(':');
                headers.add(new String[] {line.substring(0, colon).trim(), line.substring(colon + 1).trim()});
            }
            if (status >= 100 && status < 200) {
                continue;
            }
            return new Response(status, headers, this);
        }
    }

    /** Reads a whole response: head and body. */
    Response readResponse() throws IOException {
        Response response = readHead();
        response.readBody();
        return response;
    }

    /** Whether the peer closed the connection: a read returns end of stream within the read timeout. */
    boolean awaitClosedByPeer() throws IOException {
        try {
            while (true) {
                int b = in.read();
                if (b < 0) {
                    return true;
                }
            }
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (java.net.SocketException e) {
            return true; // reset
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    /** Closes with a TCP reset (SO_LINGER 0), as a crashed client would. */
    void abort() {
        try {
            socket.setSoLinger(true, 0);
        } catch (IOException ignored) {
            // closing anyway
        }
        close();
    }

    static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        while (true) {
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

    /** A response: status, headers in order, and a body read on demand. */
    static final class Response {
        final int status;
        final List<String[]> headers;
        private final RawHttp conn;
        private InputStream body;
        private byte[] bytes;

        Response(int status, List<String[]> headers, RawHttp conn) {
            this.status = status;
            this.headers = headers;
            this.conn = conn;
        }

        String header(String name) {
            for (String[] header : headers) {
                if (header[0].equalsIgnoreCase(name)) {
                    return header[1];
                }
            }
            return null;
        }

        /** The body, decoded from its framing (chunked, Content-Length, or up to the connection's end). */
        InputStream body() {
            if (body == null) {
                String length = header("Content-Length");
                String encoding = header("Transfer-Encoding");
                if (status == 204 || status == 304) {
                    body = InputStream.nullInputStream();
                } else if (encoding != null && encoding.toLowerCase(Locale.ROOT).contains("chunked")) {
                    body = new ChunkedInput(conn.in);
                } else if (length != null) {
                    body = new LimitedInput(conn.in, Long.parseLong(length));
                } else {
                    body = conn.in;
                }
            }
            return body;
        }

        byte[] readBody() throws IOException {
            if (bytes == null) {
                bytes = body().readAllBytes();
            }
            return bytes;
        }

        String bodyText() throws IOException {
            return new String(readBody(), UTF_8);
        }

        /**
         * Reads the next SSE event, returning its exact bytes up to and including the blank
         * line that ends it, or null at the end of the stream. Lines end in LF or CRLF here.
         */
        String nextEvent() throws IOException {
            InputStream source = body();
            ByteArrayOutputStream event = new ByteArrayOutputStream();
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            while (true) {
                int b = source.read();
                if (b < 0) {
                    return null;
                }
                event.write(b);
                if (b == '\n') {
                    String text = line.toString(UTF_8);
                    line.reset();
                    if (text.isEmpty() || text.equals("\r")) {
                        return event.toString(UTF_8);
                    }
                } else {
                    line.write(b);
                }
            }
        }
    }

    /** The body of a chunked response; fails with EOFException when the connection ends mid-body. */
    static final class ChunkedInput extends InputStream {
        private final InputStream in;
        private long remaining;
        private boolean done;

        ChunkedInput(InputStream in) {
            this.in = in;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            if (done) {
                return -1;
            }
            if (remaining == 0) {
                String sizeLine = readLine(in);
                if (sizeLine == null) {
                    throw new EOFException("connection closed inside a chunked body (no terminating chunk)");
                }
                int semicolon = sizeLine.indexOf(';');
                long size = Long.parseLong((semicolon < 0 ? sizeLine : sizeLine.substring(0, semicolon)).trim(), 16);
                if (size == 0) {
                    for (String trailer = readLine(in); trailer != null && !trailer.isEmpty(); trailer = readLine(in)) {
                        // trailers are ignored
                    }
                    done = true;
                    return -1;
                }
                remaining = size;
            }
            int n = in.read(buffer, offset, (int) Math.min(length, remaining));
            if (n < 0) {
                throw new EOFException("connection closed inside a chunk");
            }
            remaining -= n;
            if (remaining == 0) {
                String crlf = readLine(in);
                if (crlf == null || !crlf.isEmpty()) {
                    throw new IOException("chunk not followed by CRLF: " + crlf);
                }
            }
            return n;
        }
    }

    /** The first {@code length} bytes of a stream. */
    static final class LimitedInput extends InputStream {
        private final InputStream in;
        private long remaining;

        LimitedInput(InputStream in, long length) {
            this.in = in;
            this.remaining = length;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            if (remaining == 0) {
                return -1;
            }
            int n = in.read(buffer, offset, (int) Math.min(length, remaining));
            if (n < 0) {
                throw new EOFException("connection closed with " + remaining + " bytes of the body missing");
            }
            remaining -= n;
            return n;
        }
    }
}
