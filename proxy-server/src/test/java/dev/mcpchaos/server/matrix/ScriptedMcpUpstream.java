package dev.mcpchaos.server.matrix;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A Streamable HTTP MCP server on a plain server socket on 127.0.0.1 that answers with exact,
 * scripted bytes: the body of every answer, SSE events one by one, and when it wrote each one.
 * It parses the requests it gets (it is a lenient server: a body that is valid JSON-RPC is
 * answered by its id and method, whatever else a fault changed), and answers what it cannot
 * parse with 400 and a JSON-RPC parse error, as the MCP SDKs do. Keep-alive is honoured.
 */
final class ScriptedMcpUpstream implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** What a request to the upstream was and when it arrived (ms on the scenario's clock). */
    record Received(String method, String session, String body, long at) {
    }

    /** How the upstream answers a {@code tools/call} of the target tool. */
    enum TargetAnswer {
        /** {@code application/json}: the result. */
        JSON,
        /** {@code text/event-stream}: a priming event, the result, end of stream. */
        SSE_FINAL,
        /** {@code text/event-stream}: a priming event, a progress notification, the result, end. */
        SSE_PROGRESS
    }

    private final ServerSocket server;
    private final Clock clock;
    private final TargetAnswer targetAnswer;
    private final String session;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    /** Every request, in arrival order. */
    final List<Received> requests = new CopyOnWriteArrayList<>();
    /** When each scripted message was written (just before), by its name (the first time). */
    final ConcurrentHashMap<String, Long> sent = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @param session the {@code Mcp-Session-Id} to give in answer to {@code initialize}; null for
     *                a sessionless server that never names one
     */
    ScriptedMcpUpstream(Clock clock, TargetAnswer targetAnswer, String session) {
        this.clock = clock;
        this.targetAnswer = targetAnswer;
        this.session = session;
        try {
            server = new ServerSocket();
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on 127.0.0.1", e);
        }
        Thread acceptor = new Thread(this::accept, "matrix-upstream-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getLocalPort() + "/mcp");
    }

    /** The bodies of the POSTs received, in order. */
    List<String> postBodies() {
        return requests.stream().filter(r -> r.method.equals("POST")).map(Received::body).toList();
    }

    private void accept() {
        while (!closed) {
            Socket socket;
            try {
                socket = server.accept();
            } catch (IOException e) {
                return;
            }
            open.add(socket);
            Thread worker = new Thread(() -> serve(socket), "matrix-upstream-conn");
            worker.setDaemon(true);
            worker.start();
        }
    }

    private void serve(Socket socket) {
        try (socket) {
            socket.setTcpNoDelay(true);
            InputStream in = new BufferedInputStream(socket.getInputStream());
            OutputStream out = socket.getOutputStream();
            while (!closed) {
                String requestLine = readLine(in);
                if (requestLine == null) {
                    return;
                }
                String method = requestLine.split(" ")[0];
                String sessionHeader = null;
                int length = 0;
                for (String line = readLine(in); line != null && !line.isEmpty(); line = readLine(in)) {
                    int colon = line.indexOf(':');
                    String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
                    String value = line.substring(colon + 1).trim();
                    if (name.equals("content-length")) {
                        length = Integer.parseInt(value);
                    } else if (name.equals("mcp-session-id")) {
                        sessionHeader = value;
                    }
                }
                byte[] body = in.readNBytes(length);
                if (body.length < length) {
                    return;
                }
                String text = new String(body, UTF_8);
                requests.add(new Received(method, sessionHeader, text, clock.now()));
                answer(out, method, text);
            }
        } catch (IOException e) {
            // the proxy went away or closed the connection
        } finally {
            open.remove(socket);
        }
    }

    private void answer(OutputStream out, String method, String body) throws IOException {
        if (method.equals("GET")) {
            sse(out, List.of(
                    new Event(null, "g-0", ""),
                    new Event("NOTE_T", "g-1", Msg.NOTE_T),
                    new Event("NOTE_W", "g-2", Msg.NOTE_W)));
            return;
        }
        if (!method.equals("POST")) {
            json(out, 405, null, "");
            return;
        }
        JsonNode message;
        try {
            message = JSON.readTree(body);
        } catch (IOException e) {
            message = null;
        }
        if (message == null || !message.isObject()) {
            json(out, 400, null, Msg.PARSE_ERROR);
            return;
        }
        if (!message.has("method")) {
            json(out, 202, null, ""); // a response or error from the client
            return;
        }
        String rpcMethod = message.path("method").asText();
        if (!message.has("id")) {
            json(out, 202, null, ""); // a notification
            return;
        }
        JsonNode id = message.get("id");
        switch (rpcMethod) {
            case "initialize":
                json(out, 200, session, Msg.INIT_RESULT, "INIT_RESULT");
                return;
            case "ping":
                json(out, 200, session, Msg.result(id, "{}"), "PONG");
                return;
            case "tools/call":
                String tool = message.path("params").path("name").asText();
                String result = Msg.toolResult(id, tool + " done");
                if (tool.equals("target") && targetAnswer != TargetAnswer.JSON) {
                    Event priming = new Event(null, "t-0", "");
                    Event done = new Event("T_RESULT", targetAnswer == TargetAnswer.SSE_FINAL ? "t-1" : "t-2", result);
                    sse(out, targetAnswer == TargetAnswer.SSE_FINAL ? List.of(priming, done)
                            : List.of(priming, new Event("PROGRESS", "t-1", Msg.PROGRESS), done));
                    return;
                }
                json(out, 200, session, result, tool.equals("target") ? "T_RESULT" : "W_RESULT");
                return;
            default:
                json(out, 200, session, "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"error\":{\"code\":-32601,"
                        + "\"message\":\"Method not found\"}}");
        }
    }

    /** One SSE event: its name in {@link #sent} (null: not a message), its id and its data. */
    private record Event(String name, String id, String data) {
        byte[] bytes() {
            String text = data.isEmpty() ? "id: " + id + "\ndata: \n\n"
                    : "id: " + id + "\nevent: message\ndata: " + data + "\n\n";
            return text.getBytes(UTF_8);
        }
    }

    private void json(OutputStream out, int status, String sessionId, String body) throws IOException {
        json(out, status, sessionId, body, null);
    }

    /**
     * A whole JSON answer; {@code name}, when not null, is recorded in {@link #sent} with the time
     * just before the write: the proxy cannot have the message any earlier, so a delay measured
     * from it is never too long.
     */
    private void json(OutputStream out, int status, String sessionId, String body, String name) throws IOException {
        byte[] bytes = body.getBytes(UTF_8);
        StringBuilder head = new StringBuilder("HTTP/1.1 ").append(status).append(status == 200 ? " OK" : " Status")
                .append("\r\n");
        if (!body.isEmpty()) {
            head.append("Content-Type: application/json\r\n");
        }
        if (sessionId != null) {
            head.append("Mcp-Session-Id: ").append(sessionId).append("\r\n");
        }
        head.append("Content-Length: ").append(bytes.length).append("\r\n\r\n");
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.write(head.toString().getBytes(ISO_8859_1));
        all.write(bytes);
        if (name != null) {
            sent.putIfAbsent(name, clock.now());
        }
        out.write(all.toByteArray());
        out.flush();
    }

    /** An SSE answer, one chunk per event, then the end of the stream. */
    private void sse(OutputStream out, List<Event> events) throws IOException {
        StringBuilder head = new StringBuilder("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                + "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n");
        if (session != null) {
            head.append("Mcp-Session-Id: ").append(session).append("\r\n");
        }
        out.write(head.append("\r\n").toString().getBytes(ISO_8859_1));
        out.flush();
        for (Event event : events) {
            byte[] bytes = event.bytes();
            ByteArrayOutputStream chunk = new ByteArrayOutputStream();
            chunk.write((Integer.toHexString(bytes.length) + "\r\n").getBytes(ISO_8859_1));
            chunk.write(bytes);
            chunk.write("\r\n".getBytes(ISO_8859_1));
            if (event.name != null) {
                sent.putIfAbsent(event.name, clock.now()); // before the write, as for a JSON answer
            }
            out.write(chunk.toByteArray());
            out.flush();
        }
        out.write("0\r\n\r\n".getBytes(ISO_8859_1));
        out.flush();
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b = in.read(); b >= 0; b = in.read()) {
            if (b == '\n') {
                String text = line.toString(ISO_8859_1);
                return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
            }
            line.write(b);
        }
        return line.size() == 0 ? null : line.toString(ISO_8859_1);
    }

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
    }
}
