package dev.mcpchaos.server.it;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTP/1.1 upstream on a plain server socket on 127.0.0.1 whose every answer a test writes
 * byte by byte: exact header blocks, chunked bodies cut at chosen places, streams that never
 * end, connections dropped mid-body, and a view of what the proxy did to the connection (did it
 * close it? did it stop reading?). One thread per connection; keep-alive is honoured, so the
 * proxy's pooled connection carries several requests.
 */
final class ScriptedUpstream implements AutoCloseable {

    /** Answers one request. Throwing an IOException closes the connection. */
    interface Handler {
        void handle(Request request, Conn conn) throws IOException;
    }

    /** A request as the upstream received it. */
    static final class Request {
        final String method;
        final String path;
        final List<String[]> headers;
        final byte[] body;

        Request(String method, String path, List<String[]> headers, byte[] body) {
            this.method = method;
            this.path = path;
            this.headers = headers;
            this.body = body;
        }

        String header(String name) {
            for (String[] header : headers) {
                if (header[0].equalsIgnoreCase(name)) {
                    return header[1];
                }
            }
            return null;
        }

        String bodyText() {
            return new String(body, UTF_8);
        }

        @Override
        public String toString() {
            return method + " " + path + " " + (body.length > 200 ? body.length + " bytes" : bodyText());
        }
    }

    /** One upstream connection, for a handler to answer on. */
    static final class Conn {
        final Socket socket;
        final InputStream in;
        final OutputStream out;
        private boolean closed;

        Conn(Socket socket, InputStream in) throws IOException {
            this.socket = socket;
            this.in = in;
            this.out = socket.getOutputStream();
        }

        /** A whole response with a Content-Length. */
        void respond(int status, List<String> headers, byte[] body) throws IOException {
            List<String> all = new ArrayList<>(headers);
            all.add("Content-Length: " + body.length);
            writeHead(status, all);
            out.write(body);
            out.flush();
        }

        /** A status line and header lines, as given, then the blank line. */
        void writeHead(int status, List<String> headers) throws IOException {
            StringBuilder head = new StringBuilder("HTTP/1.1 ").append(status).append(' ').append(reason(status))
                    .append("\r\n");
            for (String header : headers) {
                head.append(header).append("\r\n");
            }
            head.append("\r\n");
            out.write(head.toString().getBytes(ISO_8859_1));
            out.flush();
        }

        /** One chunk of a chunked body, flushed. */
        void chunk(byte[] bytes) throws IOException {
            chunk(bytes, 0, bytes.length);
        }

        /**
         * One chunk, size line, data and CRLF, in a single write. Not one write each: the proxy
         * relays an SSE event as soon as its data arrives, so a client could read it, leave, and
         * have the proxy close this connection before the trailing CRLF was written; that write
         * then failed (broken pipe) and the handler died before it could watch for the close.
         */
        void chunk(byte[] bytes, int offset, int length) throws IOException {
            if (length == 0) {
                return;
            }
            byte[] size = (Integer.toHexString(length) + "\r\n").getBytes(ISO_8859_1);
            byte[] whole = new byte[size.length + length + 2];
            System.arraycopy(size, 0, whole, 0, size.length);
            System.arraycopy(bytes, offset, whole, size.length, length);
            whole[whole.length - 2] = '\r';
            whole[whole.length - 1] = '\n';
            out.write(whole);
            out.flush();
        }

        void endChunked() throws IOException {
            out.write("0\r\n\r\n".getBytes(ISO_8859_1));
            out.flush();
        }

        /** Writes raw bytes, flushed. */
        void raw(byte[] bytes) throws IOException {
            out.write(bytes);
            out.flush();
        }

        /** Closes this connection (abruptly, when in the middle of a body). */
        void close() {
            closed = true;
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing
            }
        }

        /**
         * Waits up to {@code timeout} for the peer (the proxy) to close this connection, reading
         * and discarding anything it sends. True when it did.
         */
        boolean awaitPeerClose(Duration timeout) {
            try {
                socket.setSoTimeout((int) timeout.toMillis());
                while (in.read() >= 0) {
                    // discard
                }
                return true;
            } catch (SocketTimeoutException e) {
                return false;
            } catch (IOException e) {
                return true; // reset by the peer
            }
        }

        boolean isClosed() {
            return closed;
        }

        private static String reason(int status) {
            switch (status) {
                case 200: return "OK";
                case 202: return "Accepted";
                case 204: return "No Content";
                case 401: return "Unauthorized";
                case 404: return "Not Found";
                default: return "Status";
            }
        }
    }

    private final ServerSocket server;
    private final Handler handler;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    /** Every request received, in order. */
    final List<Request> requests = new CopyOnWriteArrayList<>();
    /** Connections accepted. */
    final AtomicInteger connections = new AtomicInteger();
    private volatile boolean closed;

    private ScriptedUpstream(ServerSocket server, Handler handler) {
        this.server = server;
        this.handler = handler;
        this.acceptor = new Thread(this::acceptLoop, "scripted-upstream-" + server.getLocalPort());
        this.acceptor.setDaemon(true);
        this.acceptor.start();
    }

    /** Listens on 127.0.0.1 on a free port. */
    static ScriptedUpstream start(Handler handler) {
        return start(0, handler);
    }

    /** Listens on 127.0.0.1:port (0: any free port). */
    static ScriptedUpstream start(int port, Handler handler) {
        try {
            ServerSocket server = new ServerSocket();
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
            return new ScriptedUpstream(server, handler);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on 127.0.0.1:" + port, e);
        }
    }

    int port() {
        return server.getLocalPort();
    }

    /** {@code http://127.0.0.1:PORT/mcp}. */
    URI endpoint() {
        return URI.create("http://127.0.0.1:" + port() + "/mcp");
    }

    private void acceptLoop() {
        while (!closed) {
            Socket socket;
            try {
                socket = server.accept();
            } catch (IOException e) {
                return;
            }
            connections.incrementAndGet();
            open.add(socket);
            Thread worker = new Thread(() -> serve(socket), "scripted-upstream-conn-" + connections.get());
            worker.setDaemon(true);
            worker.start();
        }
    }

    private void serve(Socket socket) {
        try {
            socket.setTcpNoDelay(true);
            InputStream in = new BufferedInputStream(socket.getInputStream());
            Conn conn = new Conn(socket, in);
            while (!conn.isClosed()) {
                Request request = readRequest(in);
                if (request == null) {
                    break;
                }
                requests.add(request);
                handler.handle(request, conn);
            }
        } catch (IOException e) {
            // the peer went away, or the handler gave up on the connection
        } finally {
            open.remove(socket);
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    private static Request readRequest(InputStream in) throws IOException {
        String requestLine = RawHttp.readLine(in);
        if (requestLine == null) {
            return null;
        }
        String[] parts = requestLine.split(" ");
        List<String[]> headers = new ArrayList<>();
        long length = 0;
        boolean chunked = false;
        for (String line = RawHttp.readLine(in); line != null && !line.isEmpty(); line = RawHttp.readLine(in)) {
            int colon = line.indexOf(':');
            String name = line.substring(0, colon).trim();
            String value = line.substring(colon + 1).trim();
            headers.add(new String[] {name, value});
            if (name.equalsIgnoreCase("Content-Length")) {
                length = Long.parseLong(value);
            } else if (name.equalsIgnoreCase("Transfer-Encoding")
                    && value.toLowerCase(Locale.ROOT).contains("chunked")) {
                chunked = true;
            }
        }
        byte[] body = chunked ? new RawHttp.ChunkedInput(in).readAllBytes()
                : new RawHttp.LimitedInput(in, length).readAllBytes();
        return new Request(parts[0], parts.length > 1 ? parts[1] : "", headers, body);
    }

    /** Stops listening and drops every open connection. */
    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing
        }
        for (Socket socket : open) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing
            }
        }
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
