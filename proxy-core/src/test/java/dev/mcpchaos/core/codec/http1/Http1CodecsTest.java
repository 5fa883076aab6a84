package dev.mcpchaos.core.codec.http1;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Http1ServerCodec} and {@link Http1ClientCodec} against the Netty codecs they replace,
 * {@code HttpServerCodec} and {@code HttpClientCodec}, on the same byte streams: pipelined
 * messages the scanner reads mixed with those it defers (chunked, folded, bare LF, leading blank
 * lines, Transfer-Encoding with Content-Length, broken ones), cut at random points. What each
 * hands on (heads, the body of each message, its end, every failure) must be the same, and so
 * must the bytes each writes back and whether it closes the connection after.
 */
class Http1CodecsTest {

    static final int LIMIT = 8192;

    private static final String[] REQUESTS = {
        "POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
        "GET /mcp HTTP/1.1\r\nHost: a\r\nAccept: text/event-stream\r\n\r\n",
        "HEAD /mcp HTTP/1.1\r\nHost: a\r\n\r\n",
        "DELETE /mcp HTTP/1.0\r\nMcp-Session-Id: s1\r\n\r\n",
        "POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nX-Trailer: t\r\n\r\n",
        "POST /mcp HTTP/1.1\r\nHost: a\r\nX-Folded: a\r\n b\r\nContent-Length: 2\r\n\r\nhi",
        "POST /mcp HTTP/1.1\nHost: a\nContent-Length: 3\n\nabc",
        "\r\n\r\nGET /again HTTP/1.1\r\nHost: a\r\n\r\n",
        "POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
        "POST /mcp HTTP/1.1\r\nX-Ows: \t spaced \t\r\ncontent-length: 000\r\n\r\n",
    };
    /** Each breaks the stream: it goes last, and everything after it is Netty's to discard. */
    private static final String[] BROKEN_REQUESTS = {
        "POST /mcp HTTP/1.1\r\nBad Name: x\r\n\r\n",
        "POST /mcp HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
        "POST /mcp HTTP/1.1\r\nContent-Length: x\r\n\r\n",
        "GARBAGE\r\n\r\n",
    };

    @Test
    void readsRequestStreamsAsHttpServerCodecDoesAndAnswersAlike() {
        Random random = new Random(20261204);
        int fast = 0;
        for (int round = 0; round < 400; round++) {
            StringBuilder stream = new StringBuilder();
            int messages = 1 + random.nextInt(5);
            for (int i = 0; i < messages; i++) {
                String request = REQUESTS[random.nextInt(REQUESTS.length)];
                stream.append(request);
                fast += scannerReads(HeadScanner.forRequests(LIMIT, 64), request) ? 1 : 0;
            }
            if (random.nextInt(4) == 0) {
                stream.append(BROKEN_REQUESTS[random.nextInt(BROKEN_REQUESTS.length)]).append(REQUESTS[0]);
            }
            byte[] bytes = stream.toString().getBytes(StandardCharsets.ISO_8859_1);
            List<byte[]> chunks = cut(bytes, random);
            HttpDecoderConfig config = config();
            Side ours = serve(new EmbeddedChannel(new Http1ServerCodec(config, LIMIT)), chunks);
            Side netty = serve(new EmbeddedChannel(new HttpServerCodec(config)), chunks);
            assertThat(ours.read).as("what was read of %s", stream).isEqualTo(netty.read);
            assertThat(ours.written).as("what was written back for %s", stream).isEqualTo(netty.written);
            assertThat(ours.open).as("open after %s", stream).isEqualTo(netty.open);
        }
        assertThat(fast).as("requests the scanner read").isGreaterThan(400);
    }

    private static final String[] RESPONSES_TO_POST = {
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "7\r\ndata: 1\r\n0\r\n\r\n",
        "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 204 No Content\r\n\r\n",
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        "HTTP/1.1 404 Not Here\r\nContent-Length: 3\r\nX-A: 1\r\n\r\nno!",
        "HTTP/1.0 200 OK\nContent-Length: 2\n\nok",
        "HTTP/1.1 500 Internal Server Error\r\nX-Folded: a\r\n b\r\nContent-Length: 1\r\n\r\nx",
    };
    /** To HEAD: the length is the resource's, no body follows. */
    private static final String RESPONSE_TO_HEAD = "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\nContent-Type: application/json\r\n\r\n";
    /** Ends the stream: a body to the close, or a broken head. */
    private static final String[] LAST_RESPONSES = {
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"until\":\"close\"}",
        "HTTP/1.1 2x0 OK\r\nContent-Length: 1\r\n\r\nx",
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\ncut",
        "HTTP/1.1 200 OK\r\nContent-Le",
    };

    @Test
    void readsResponseStreamsAsHttpClientCodecDoesAndWritesRequestsAlike() {
        Random random = new Random(4122026);
        int fast = 0;
        for (int round = 0; round < 400; round++) {
            List<HttpMethod> methods = new ArrayList<>();
            StringBuilder stream = new StringBuilder();
            for (int i = 1 + random.nextInt(5); i > 0; i--) {
                if (random.nextInt(5) == 0) {
                    methods.add(HttpMethod.HEAD);
                    stream.append(RESPONSE_TO_HEAD);
                } else {
                    methods.add(HttpMethod.POST);
                    String response = RESPONSES_TO_POST[random.nextInt(RESPONSES_TO_POST.length)];
                    stream.append(response);
                    fast += scannerReads(HeadScanner.forResponses(LIMIT, 64), response) ? 1 : 0;
                }
            }
            if (random.nextInt(3) == 0) {
                methods.add(HttpMethod.POST);
                stream.append(LAST_RESPONSES[random.nextInt(LAST_RESPONSES.length)]);
            }
            byte[] bytes = stream.toString().getBytes(StandardCharsets.ISO_8859_1);
            List<byte[]> chunks = cut(bytes, random);
            Side ours = fetch(new EmbeddedChannel(new Http1ClientCodec(config(), 4096)), methods, chunks, true);
            Side netty = fetch(new EmbeddedChannel(new HttpClientCodec(config(), false, false)), methods, chunks, false);
            assertThat(ours.written).as("requests written for %s", stream).isEqualTo(netty.written);
            assertThat(ours.read).as("what was read of %s after %s", stream, methods).isEqualTo(netty.read);
        }
        assertThat(fast).as("responses the scanner read").isGreaterThan(250);
    }

    private static boolean scannerReads(HeadScanner scanner, String message) {
        byte[] bytes = message.getBytes(StandardCharsets.ISO_8859_1);
        return scanner.scan(bytes, 0, bytes.length) > 0;
    }

    /**
     * A head sent a byte at a time is scanned once per line, not once per byte (each scan copies
     * what has come so far), and is read whole; so is a deferred one (chunked), by Netty's decoder.
     */
    @Test
    void aHeadSentAByteAtATimeIsScannedOncePerLine() {
        StringBuilder head = new StringBuilder("POST /mcp HTTP/1.1\r\n");
        for (int i = 0; i < 60; i++) {
            head.append("X-Field-").append(i).append(": ").append("v".repeat(40)).append("\r\n");
        }
        String fields = head.toString();
        for (String text : List.of(fields + "Content-Length: 2\r\n\r\nok",
                fields + "Transfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")) {
            byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
            Http1ServerCodec codec = new Http1ServerCodec(config(), LIMIT);
            EmbeddedChannel channel = new EmbeddedChannel(codec);
            try {
                List<String> read = new ArrayList<>();
                StringBuilder body = new StringBuilder();
                for (byte b : bytes) {
                    channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
                    drain(channel, read, body, null);
                }
                assertThat(read).as(text.contains("chunked") ? "deferred" : "scanned").hasSize(2);
                assertThat(read.get(1)).startsWith("end [ok]");
                assertThat(codec.headScans()).as("scans of a head of %d bytes and 63 lines", bytes.length)
                        .isLessThanOrEqualTo(63 + 3);
            } finally {
                channel.finishAndReleaseAll();
            }
        }
    }

    /**
     * After a CONNECT's 200 or a 101 to another protocol, what follows is bytes, however much it
     * looks like HTTP; a 101 to HTTP/1.1 stays HTTP. Cut every way, as the other streams.
     */
    @Test
    void aTunnelOrAnUpgradeIsBytesToTheEnd() {
        String lookalike = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        List<Map.Entry<List<HttpMethod>, String>> cases = List.of(
                Map.entry(List.of(HttpMethod.CONNECT), "HTTP/1.1 200 Connection Established\r\n\r\n" + lookalike),
                Map.entry(List.of(HttpMethod.POST, HttpMethod.CONNECT), RESPONSES_TO_POST[0]
                        + "HTTP/1.1 200 OK\r\n\r\n" + lookalike + lookalike),
                Map.entry(List.of(HttpMethod.CONNECT, HttpMethod.POST), "HTTP/1.1 407 Auth\r\nContent-Length: 0\r\n\r\n"
                        + lookalike),
                Map.entry(List.of(HttpMethod.GET), "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                        + "Connection: Upgrade\r\n\r\n" + lookalike),
                Map.entry(List.of(HttpMethod.GET), "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n"
                        + "Connection: Upgrade\r\n\r\n" + lookalike + lookalike),
                Map.entry(List.of(HttpMethod.GET, HttpMethod.POST), "HTTP/1.1 101 Switching Protocols\r\n"
                        + "Upgrade: HTTP/1.1\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" + lookalike));
        Random random = new Random(101);
        for (Map.Entry<List<HttpMethod>, String> c : cases) {
            byte[] bytes = c.getValue().getBytes(StandardCharsets.ISO_8859_1);
            for (int round = 0; round < 20; round++) {
                List<byte[]> chunks = cut(bytes, random);
                Side ours = fetch(new EmbeddedChannel(new Http1ClientCodec(config(), 4096)), c.getKey(), chunks, true);
                Side netty = fetch(new EmbeddedChannel(new HttpClientCodec(config(), false, false)), c.getKey(), chunks,
                        false);
                assertThat(ours.read).as("%s after %s, %d chunks", c.getValue(), c.getKey(), chunks.size())
                        .isEqualTo(netty.read);
            }
        }
    }

    /** What one codec made of a stream. */
    record Side(List<String> read, String written, boolean open) {
    }

    static Side serve(EmbeddedChannel channel, List<byte[]> chunks) {
        List<String> read = new ArrayList<>();
        StringBuilder body = new StringBuilder();
        List<HttpRequest> requests = new ArrayList<>();
        StringBuilder written = new StringBuilder();
        try {
            for (byte[] chunk : chunks) {
                channel.writeInbound(Unpooled.wrappedBuffer(chunk));
                drain(channel, read, body, requests);
            }
            // Answered as the proxy answers: a head with a length, then its body as the end.
            for (int i = 0; i < requests.size(); i++) {
                HttpRequest request = requests.get(i);
                HttpResponse response = new DefaultHttpResponse(request.protocolVersion(), HttpResponseStatus.OK);
                // Not the URI: Netty takes some that no header may hold.
                response.headers().set("Content-Length", 2).set("X-For", i + " " + request.method());
                channel.write(response);
                channel.writeAndFlush(new DefaultLastHttpContent(Unpooled.copiedBuffer("ok", StandardCharsets.US_ASCII)));
            }
            for (Object o; (o = channel.readOutbound()) != null; ) {
                written.append(((ByteBuf) o).toString(StandardCharsets.ISO_8859_1));
                ReferenceCountUtil.release(o);
            }
            boolean open = channel.isOpen();
            channel.finish();
            drain(channel, read, body, requests);
            return new Side(read, written.toString(), open);
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    static Side fetch(EmbeddedChannel channel, List<HttpMethod> methods, List<byte[]> chunks, boolean flat) {
        List<String> read = new ArrayList<>();
        StringBuilder body = new StringBuilder();
        StringBuilder written = new StringBuilder();
        try {
            for (HttpMethod method : methods) {
                String head = method + " /mcp HTTP/1.1\r\nHost: up\r\nX-Ows: kept as sent\r\nContent-Length: 2\r\n\r\n";
                HttpHeaders headers = flat ? flatHeaders(head) : nettyHeaders(head);
                channel.write(new DefaultHttpRequest(HttpVersion.HTTP_1_1, method, "/mcp", headers));
                channel.writeAndFlush(new DefaultLastHttpContent(Unpooled.copiedBuffer("hi", StandardCharsets.US_ASCII)));
            }
            for (Object o; (o = channel.readOutbound()) != null; ) {
                written.append(((ByteBuf) o).toString(StandardCharsets.ISO_8859_1));
                ReferenceCountUtil.release(o);
            }
            for (byte[] chunk : chunks) {
                channel.writeInbound(Unpooled.wrappedBuffer(chunk));
                drain(channel, read, body, null);
            }
            channel.finish();
            drain(channel, read, body, null);
            return new Side(read, written.toString(), true);
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    /** The flat headers of a scanned head. */
    private static HttpHeaders flatHeaders(String head) {
        HeadScanner scanner = HeadScanner.forRequests(LIMIT, 64);
        byte[] bytes = head.getBytes(StandardCharsets.US_ASCII);
        assertThat(scanner.scan(bytes, 0, bytes.length)).isEqualTo(bytes.length);
        return FlatHttpHeaders.of(scanner);
    }

    /** The same fields in Netty's headers, as its decoder reads them (whitespace trimmed). */
    private static HttpHeaders nettyHeaders(String head) {
        HttpHeaders headers = new io.netty.handler.codec.http.DefaultHttpHeaders();
        for (Map.Entry<String, String> field : flatHeaders(head)) {
            headers.add(field.getKey(), field.getValue());
        }
        return headers;
    }

    /**
     * Moves what the channel read into {@code read}: a line per head (with its fields and its
     * decoder result), and per message end its whole body, trailers and result.
     */
    private static void drain(EmbeddedChannel channel, List<String> read, StringBuilder body, List<HttpRequest> requests) {
        for (Object o; (o = channel.readInbound()) != null; ) {
            try {
                if (o instanceof ByteBuf) { // a tunnel's or another protocol's bytes
                    read.add("bytes [" + ((ByteBuf) o).toString(StandardCharsets.ISO_8859_1) + "]");
                    continue;
                }
                HttpObject object = (HttpObject) o;
                String result = object.decoderResult().isSuccess() ? "ok"
                        : "failed: " + object.decoderResult().cause().getClass().getSimpleName();
                if (o instanceof HttpRequest) {
                    HttpRequest request = (HttpRequest) o;
                    read.add("request " + request.method() + " " + request.uri() + " " + request.protocolVersion()
                            + " " + request.headers().entries() + " " + result);
                    if (requests != null && object.decoderResult().isSuccess()) {
                        requests.add(request);
                    }
                } else if (o instanceof HttpResponse) {
                    HttpResponse response = (HttpResponse) o;
                    read.add("response " + response.protocolVersion() + " " + response.status() + " "
                            + response.headers().entries() + " " + result);
                }
                if (o instanceof HttpContent) {
                    body.append(((HttpContent) o).content().toString(StandardCharsets.ISO_8859_1));
                    if (!(o instanceof HttpRequest || o instanceof HttpResponse) && !object.decoderResult().isSuccess()) {
                        read.add("content " + result);
                    }
                }
                if (o instanceof LastHttpContent) {
                    read.add("end [" + body + "] " + ((LastHttpContent) o).trailingHeaders().entries() + " " + result);
                    body.setLength(0);
                }
            } finally {
                ReferenceCountUtil.release(o);
            }
        }
    }

    /** The stream whole, or in pieces of 1 to 40 bytes. */
    private static List<byte[]> cut(byte[] bytes, Random random) {
        List<byte[]> chunks = new ArrayList<>();
        if (random.nextBoolean()) {
            chunks.add(bytes);
            return chunks;
        }
        for (int at = 0; at < bytes.length; ) {
            int size = Math.min(bytes.length - at, 1 + random.nextInt(40));
            chunks.add(java.util.Arrays.copyOfRange(bytes, at, at + size));
            at += size;
        }
        return chunks;
    }

    static HttpDecoderConfig config() {
        return new HttpDecoderConfig().setMaxInitialLineLength(LIMIT).setMaxHeaderSize(LIMIT).setMaxChunkSize(64 * 1024);
    }
}
