package dev.mcpchaos.core.codec.http1;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link HeadScanner} against Netty's decoder, which the proxy reads heads with today: every head
 * the scanner accepts must mean to Netty exactly what it means to the scanner (start line, fields
 * in order, body length, where the next message starts); the heads request smuggling is made of
 * must be deferred; a head cut short is incomplete, never accepted or deferred.
 */
class HeadScannerTest {

    private static final String POST = "POST /mcp HTTP/1.1\r\n"
            + "Host: 127.0.0.1:8080\r\n"
            + "Content-Type: application/json\r\n"
            + "Accept: application/json, text/event-stream\r\n"
            + "Mcp-Session-Id: 3f2a\r\n"
            + "Content-Length: 5\r\n"
            + "\r\n";
    private static final String GET = "GET /mcp?x=1 HTTP/1.0\r\nAccept: text/event-stream\r\n\r\n";
    private static final String OK = "HTTP/1.1 200 OK\r\n"
            + "Content-Type: application/json\r\n"
            + "Content-Length: 5\r\n"
            + "Date: Fri, 04 Dec 2026 19:00:00 GMT\r\n"
            + "\r\n";

    private static final int LIMIT = 8192;

    @Test
    void readsARequestHeadInPlace() {
        HeadScanner scanner = HeadScanner.forRequests(LIMIT, 64);
        byte[] bytes = ascii("junk" + POST + "hello");
        assertThat(scanner.scan(bytes, 4, bytes.length - 4)).isEqualTo(POST.length());
        assertThat(scanner.start()).isEqualTo(4);
        assertThat(scanner.method()).isEqualTo("POST");
        assertThat(scanner.target()).isEqualTo("/mcp");
        assertThat(scanner.http11()).isTrue();
        assertThat(scanner.contentLength()).isEqualTo(5);
        assertThat(fields(scanner)).containsExactly(
                Map.entry("Host", "127.0.0.1:8080"),
                Map.entry("Content-Type", "application/json"),
                Map.entry("Accept", "application/json, text/event-stream"),
                Map.entry("Mcp-Session-Id", "3f2a"),
                Map.entry("Content-Length", "5"));
    }

    @Test
    void theMethodAndTheStatusAreNettysConstantsWhereTheyAreUsualAndTheSameValuesOtherwise() {
        HeadScanner requests = HeadScanner.forRequests(LIMIT, 64);
        for (String method : List.of("GET", "PUT", "POST", "HEAD", "DELETE", "OPTIONS", "PATCH", "TRACE", "PUSH",
                "GOT", "POSTS", "DELETED", "X")) {
            byte[] head = ascii(method + " /mcp HTTP/1.1\r\nHost: a\r\n\r\n");
            assertThat(requests.scan(head, 0, head.length)).as(method).isEqualTo(head.length);
            HttpMethod expected = HttpMethod.valueOf(method);
            assertThat(requests.httpMethod()).as(method).isEqualTo(expected).hasToString(method);
            if (List.of("GET", "PUT", "POST", "HEAD", "DELETE", "OPTIONS").contains(method)) {
                assertThat(requests.httpMethod()).as(method).isSameAs(expected);
            }
        }
        HeadScanner responses = HeadScanner.forResponses(LIMIT, 64);
        for (String line : List.of("200 OK", "200 Fine", "200 O", "200 OKAY", "404 Not Found", "404 Not Fount", "202 ",
                "299 Whatever", "503 Service Unavailable")) {
            byte[] head = ascii("HTTP/1.1 " + line + "\r\nContent-Length: 0\r\n\r\n");
            assertThat(responses.scan(head, 0, head.length)).as(line).isEqualTo(head.length);
            HttpResponseStatus expected = HttpResponseStatus.valueOf(responses.status(), responses.reason());
            HttpResponseStatus status = responses.responseStatus();
            assertThat(status.code()).as(line).isEqualTo(expected.code());
            assertThat(status.reasonPhrase()).as(line).isEqualTo(expected.reasonPhrase());
        }
        byte[] ok = ascii("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        responses.scan(ok, 0, ok.length);
        assertThat(responses.responseStatus()).isSameAs(HttpResponseStatus.OK);
    }

    @Test
    void aReasonPhraseIsReadWithoutTheBlanksAroundItAsNettyReadsIt() {
        // The fuzz test found "HTTP/1.1 200 : " read as ": " where Netty's decoder reads ":".
        HeadScanner responses = HeadScanner.forResponses(LIMIT, 64);
        Map<String, String> phrases = Map.of("200  OK \t", "OK", "200 :\t", ":", "200 \ta  b ", "a  b", "200  ", "",
                "200 OK", "OK");
        phrases.forEach((line, phrase) -> {
            byte[] head = ascii("HTTP/1.1 " + line + "\r\nContent-Length: 0\r\n\r\n");
            assertThat(responses.scan(head, 0, head.length)).as(line).isEqualTo(head.length);
            assertThat(responses.reason()).as(line).isEqualTo(phrase);
        });
        byte[] spacedOk = ascii("HTTP/1.1 200  OK \r\nContent-Length: 0\r\n\r\n");
        responses.scan(spacedOk, 0, spacedOk.length);
        assertThat(responses.responseStatus()).isSameAs(HttpResponseStatus.OK);
    }

    @Test
    void aRequestWithoutALengthHasNoBodyAndAResponseWithoutOneIsDeferred() {
        HeadScanner requests = HeadScanner.forRequests(LIMIT, 64);
        assertThat(requests.scan(ascii(GET), 0, GET.length())).isEqualTo(GET.length());
        assertThat(requests.contentLength()).isZero();
        assertThat(requests.http11()).isFalse();

        HeadScanner responses = HeadScanner.forResponses(LIMIT, 64);
        assertThat(responses.scan(ascii(OK), 0, OK.length())).isEqualTo(OK.length());
        assertThat(responses.status()).isEqualTo(200);
        assertThat(responses.reason()).isEqualTo("OK");
        String untilClose = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n";
        assertThat(responses.scan(ascii(untilClose), 0, untilClose.length())).isEqualTo(HeadScanner.DEFER);
    }

    @Test
    void scansAByteBufWithoutMovingIt() {
        HeadScanner scanner = HeadScanner.forRequests(LIMIT, 64);
        ByteBuf direct = Unpooled.directBuffer().writeBytes(ascii(POST + "hello"));
        try {
            assertThat(scanner.scan(direct)).isEqualTo(POST.length());
            assertThat(direct.readerIndex()).isZero();
            assertThat(scanner.value(4)).isEqualTo("5");
        } finally {
            direct.release();
        }
    }

    @Test
    void aHeadLongerThanTheFirstWindowIsReadWholeFromAByteBuf() {
        String head = "POST /mcp HTTP/1.1\r\nX-Long: " + "v".repeat(3000) + "\r\nContent-Length: 5\r\n\r\n";
        HeadScanner scanner = HeadScanner.forRequests(LIMIT, 64);
        ByteBuf buffer = Unpooled.directBuffer().writeBytes(ascii(head + "hello"));
        try {
            assertThat(scanner.scan(buffer)).isEqualTo(head.length());
            assertThat(scanner.value(0)).hasSize(3000);
            assertThat(scanner.contentLength()).isEqualTo(5);
            buffer.writerIndex(head.length() - 1);
            assertThat(scanner.scan(buffer)).isEqualTo(HeadScanner.INCOMPLETE);
            assertThat(HeadScanner.forRequests(2048, 64).scan(buffer)).isEqualTo(HeadScanner.DEFER);
        } finally {
            buffer.release();
        }
    }

    @Test
    void everyHeadCutShortIsIncomplete() {
        for (String head : List.of(POST, GET)) {
            HeadScanner scanner = HeadScanner.forRequests(LIMIT, 64);
            byte[] bytes = ascii(head);
            for (int cut = 0; cut < bytes.length; cut++) {
                assertThat(scanner.scan(bytes, 0, cut)).as("%d bytes of %s", cut, head).isEqualTo(HeadScanner.INCOMPLETE);
            }
        }
        HeadScanner scanner = HeadScanner.forResponses(LIMIT, 64);
        byte[] bytes = ascii(OK);
        for (int cut = 0; cut < bytes.length; cut++) {
            assertThat(scanner.scan(bytes, 0, cut)).as("%d bytes of the response", cut).isEqualTo(HeadScanner.INCOMPLETE);
        }
    }

    /** Heads that parsers have been made to read differently, each deferred to the full decoder. */
    @ParameterizedTest
    @ValueSource(strings = {
        "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked\r\n",
        "transfer-ENCODING: identity\r\n",
        "Content-Length: 5\r\nContent-Length: 5\r\n",
        "Content-Length: 5\r\ncontent-length: 6\r\n",
        "Content-Length: 5, 5\r\n",
        "Content-Length: +5\r\n",
        "Content-Length: -1\r\n",
        "Content-Length: 5 5\r\n",
        "Content-Length: 0x5\r\n",
        "Content-Length:\r\n",
        "Content-Length: 1234567890123456789\r\n",
        "Content-Length : 5\r\n",
        "Content-Length\t: 5\r\n",
        " Content-Length: 5\r\n",
        "X-A: a\r\n b\r\n",
        "X-A: a\r\n\tb\r\n",
        "X-A: a\nContent-Length: 5\r\n",
        "X-A: a\rContent-Length: 5\r\n",
        "X-A: a\u0000b\r\n",
        "X-A: a\u000bb\r\n",
        "X-\u007fA: a\r\n",
        "X(A): a\r\n",
        ": a\r\n",
        "X-A a\r\n",
        "X-A: caf\u00e9\r\n",
    })
    void smugglingMaterialIsDeferred(String fields) {
        String head = "POST /mcp HTTP/1.1\r\nHost: a\r\n" + fields + "\r\n";
        HeadScanner scanner = HeadScanner.forRequests(LIMIT, 64);
        byte[] bytes = head.getBytes(StandardCharsets.ISO_8859_1);
        assertThat(scanner.scan(bytes, 0, bytes.length)).as(head).isEqualTo(HeadScanner.DEFER);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "\r\nPOST /mcp HTTP/1.1\r\n\r\n",
        "POST  /mcp HTTP/1.1\r\n\r\n",
        "POST /mcp  HTTP/1.1\r\n\r\n",
        "POST /mcp HTTP/1.1 \r\n\r\n",
        "POST\t/mcp HTTP/1.1\r\n\r\n",
        "POST /m\u0000cp HTTP/1.1\r\n\r\n",
        "POST /mcp HTTP/1.2\r\n\r\n",
        "POST /mcp HTTP/2.0\r\n\r\n",
        "POST /mcp http/1.1\r\n\r\n",
        "POST /mcp HTTP/1.1\n\r\n",
        "POST /mcp\r\n\r\n",
        "P(ST /mcp HTTP/1.1\r\n\r\n",
    })
    void oddRequestLinesAreDeferred(String head) {
        HeadScanner scanner = HeadScanner.forRequests(LIMIT, 64);
        byte[] bytes = head.getBytes(StandardCharsets.ISO_8859_1);
        assertThat(scanner.scan(bytes, 0, bytes.length)).as(head).isEqualTo(HeadScanner.DEFER);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "HTTP/1.1 100 Continue\r\n\r\n",
        "HTTP/1.1 101 Switching Protocols\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n",
        "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n",
        "HTTP/1.1 200\r\nContent-Length: 5\r\n\r\n",
        "HTTP/1.1 2000 OK\r\nContent-Length: 5\r\n\r\n",
        "HTTP/1.1 700 Odd\r\nContent-Length: 5\r\n\r\n",
        "HTTP/1.1  200 OK\r\nContent-Length: 5\r\n\r\n",
        "HTTP/1.1 200 OK\rX\r\nContent-Length: 5\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
    })
    void oddResponsesAreDeferred(String head) {
        HeadScanner scanner = HeadScanner.forResponses(LIMIT, 64);
        byte[] bytes = head.getBytes(StandardCharsets.ISO_8859_1);
        assertThat(scanner.scan(bytes, 0, bytes.length)).as(head).isEqualTo(HeadScanner.DEFER);
    }

    @Test
    void limitsDeferAndBelowThemTheSameHeadIsAccepted() {
        byte[] bytes = ascii(POST);
        assertThat(HeadScanner.forRequests(POST.length(), 64).scan(bytes, 0, bytes.length)).isEqualTo(POST.length());
        assertThat(HeadScanner.forRequests(POST.length() - 1, 64).scan(bytes, 0, bytes.length))
                .isEqualTo(HeadScanner.DEFER);
        assertThat(HeadScanner.forRequests(LIMIT, 5).scan(bytes, 0, bytes.length)).isEqualTo(POST.length());
        assertThat(HeadScanner.forRequests(LIMIT, 4).scan(bytes, 0, bytes.length)).isEqualTo(HeadScanner.DEFER);
        // A head past the limit with no end in sight is deferred too, not awaited for ever.
        byte[] endless = ascii("POST /mcp HTTP/1.1\r\nX-A: " + "a".repeat(100));
        assertThat(HeadScanner.forRequests(64, 64).scan(endless, 0, endless.length)).isEqualTo(HeadScanner.DEFER);
        // Many fields grow the scanner's table.
        StringBuilder many = new StringBuilder("POST /mcp HTTP/1.1\r\n");
        for (int i = 0; i < 40; i++) {
            many.append("X-").append(i).append(": ").append(i).append("\r\n");
        }
        byte[] manyBytes = ascii(many.append("\r\n").toString());
        HeadScanner scanner = HeadScanner.forRequests(LIMIT, 40);
        assertThat(scanner.scan(manyBytes, 0, manyBytes.length)).isEqualTo(manyBytes.length);
        assertThat(scanner.fields()).isEqualTo(40);
        assertThat(scanner.value(39)).isEqualTo("39");
    }

    @Test
    void anAcceptedRequestMeansToNettyWhatItMeansToTheScanner() {
        for (String head : List.of(POST, GET,
                "DELETE * HTTP/1.1\r\nX-Empty:\r\nX-Ows: \t a b \t\r\ncontent-length: 007\r\n\r\n",
                "PATCH http://127.0.0.1:8080/mcp?a=%20#f HTTP/1.1\r\nX-Tricky: \"Content-Length: 9\"\r\n\r\n")) {
            byte[] message = ascii(head + "hello" + POST + "hello");
            HeadScanner scanner = HeadScanner.forRequests(LIMIT, 64);
            int length = scanner.scan(message, 0, message.length);
            assertThat(length).as(head).isPositive();
            assertSameToNetty(scanner, message, length, true);
        }
    }

    @Test
    void anAcceptedResponseMeansToNettyWhatItMeansToTheScanner() {
        byte[] message = ascii(OK + "hello" + OK + "hello");
        HeadScanner scanner = HeadScanner.forResponses(LIMIT, 64);
        int length = scanner.scan(message, 0, message.length);
        assertThat(length).isEqualTo(OK.length());
        assertSameToNetty(scanner, message, length, false);
    }

    /**
     * Random damage to real heads (bytes replaced, inserted or removed, from an alphabet of the
     * characters that matter to framing): every head the scanner still accepts must mean the
     * same to Netty. Seeded, 6,000 mutants per head; both outcomes must occur often, or the
     * test would prove nothing.
     */
    @Test
    void damagedHeadsAreDeferredOrMeanTheSameToNetty() {
        byte[] alphabet = {'\r', '\n', ' ', '\t', ':', ',', ';', '"', '/', '0', '5', '9', '-', 'a', 'Z', 'H',
            0, 0x0b, 0x7f, (byte) 0x80, (byte) 0xff};
        Random random = new Random(16);
        int accepted = 0;
        int deferred = 0;
        for (String head : List.of(POST, GET, OK)) {
            boolean request = head != OK;
            for (int round = 0; round < 6000; round++) {
                byte[] mutant = mutate(ascii(head), random, alphabet);
                byte[] message = concat(mutant, ascii("helloHELLO" + (request ? POST : OK) + "hello"));
                HeadScanner scanner = request ? HeadScanner.forRequests(LIMIT, 64) : HeadScanner.forResponses(LIMIT, 64);
                int length = scanner.scan(message, 0, message.length);
                if (length > 0) {
                    accepted++;
                    assertSameToNetty(scanner, message, length, request);
                } else if (length == HeadScanner.DEFER) {
                    deferred++;
                }
            }
        }
        assertThat(accepted).as("mutants accepted").isGreaterThan(2000);
        assertThat(deferred).as("mutants deferred").isGreaterThan(2000);
    }

    private static byte[] mutate(byte[] head, Random random, byte[] alphabet) {
        byte[] out = head;
        for (int edits = 1 + random.nextInt(2); edits > 0; edits--) {
            int at = random.nextInt(out.length - 2); // the final blank line stays
            byte b = alphabet[random.nextInt(alphabet.length)];
            switch (random.nextInt(3)) {
                case 0 -> {
                    out = out.clone();
                    out[at] = b;
                }
                case 1 -> out = concat(java.util.Arrays.copyOf(out, at), new byte[] {b},
                        java.util.Arrays.copyOfRange(out, at, out.length));
                default -> out = concat(java.util.Arrays.copyOf(out, at), java.util.Arrays.copyOfRange(out, at + 1,
                        out.length));
            }
        }
        return out;
    }

    /**
     * Decodes the whole message (head, body, and the next message after it) with Netty's decoder
     * and checks it read the head as the scanner did, took exactly {@code contentLength} bytes of
     * body, and started the next message where the scanner says this one ends.
     */
    private static void assertSameToNetty(HeadScanner scanner, byte[] message, int headLength, boolean request) {
        String what = new String(message, 0, headLength, StandardCharsets.ISO_8859_1);
        HttpDecoderConfig config = new HttpDecoderConfig().setMaxInitialLineLength(LIMIT).setMaxHeaderSize(LIMIT);
        EmbeddedChannel channel = new EmbeddedChannel(request ? new HttpRequestDecoder(config) : new HttpResponseDecoder(config));
        try {
            channel.writeInbound(Unpooled.wrappedBuffer(message));
            List<HttpObject> decoded = new ArrayList<>();
            for (Object o; (o = channel.readInbound()) != null; ) {
                decoded.add((HttpObject) o);
            }
            assertThat(decoded).as(what).isNotEmpty();
            HttpMessage head = (HttpMessage) decoded.get(0);
            assertThat(head.decoderResult().isSuccess()).as("Netty decodes %s", what).isTrue();
            assertThat(head.protocolVersion()).as(what).isEqualTo(scanner.http11() ? HttpVersion.HTTP_1_1 : HttpVersion.HTTP_1_0);
            if (request) {
                assertThat(((HttpRequest) head).method().name()).as(what).isEqualTo(scanner.method());
                assertThat(((HttpRequest) head).uri()).as(what).isEqualTo(scanner.target());
            } else {
                assertThat(((HttpResponse) head).status().code()).as(what).isEqualTo(scanner.status());
            }
            List<Map.Entry<String, String>> nettyFields = new ArrayList<>();
            head.headers().forEach(e -> nettyFields.add(Map.entry(e.getKey(), e.getValue())));
            assertThat(fields(scanner)).as(what).isEqualTo(nettyFields);
            // The body: the contents up to the first LastHttpContent, exactly the scanner's length.
            long body = 0;
            int next = 1;
            for (; next < decoded.size(); next++) {
                HttpObject o = decoded.get(next);
                assertThat(o.decoderResult().isSuccess()).as(what).isTrue();
                body += ((HttpContent) o).content().readableBytes();
                if (o instanceof LastHttpContent) {
                    next++;
                    break;
                }
            }
            assertThat(body).as("body of %s", what).isEqualTo(scanner.contentLength());
            // The next message starts where the scanner says: Netty reads it as the scanner does.
            HeadScanner again = request ? HeadScanner.forRequests(LIMIT, 64) : HeadScanner.forResponses(LIMIT, 64);
            int from = headLength + (int) scanner.contentLength();
            int nextLength = again.scan(message, from, message.length - from);
            if (nextLength > 0) {
                assertThat(next).as("a second message after %s", what).isLessThan(decoded.size());
                HttpMessage second = (HttpMessage) decoded.get(next);
                assertThat(second.decoderResult().isSuccess()).as("the message after %s", what).isTrue();
                if (request) {
                    assertThat(((HttpRequest) second).method().name()).as("after %s", what).isEqualTo(again.method());
                    assertThat(((HttpRequest) second).uri()).as("after %s", what).isEqualTo(again.target());
                } else {
                    assertThat(((HttpResponse) second).status().code()).as("after %s", what).isEqualTo(again.status());
                }
            }
            decoded.forEach(io.netty.util.ReferenceCountUtil::release);
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    private static List<Map.Entry<String, String>> fields(HeadScanner scanner) {
        List<Map.Entry<String, String>> fields = new ArrayList<>();
        for (int i = 0; i < scanner.fields(); i++) {
            fields.add(Map.entry(scanner.name(i), scanner.value(i)));
        }
        return fields;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] concat(byte[]... parts) {
        int length = 0;
        for (byte[] part : parts) {
            length += part.length;
        }
        byte[] out = new byte[length];
        int at = 0;
        for (byte[] part : parts) {
            System.arraycopy(part, 0, out, at, part.length);
            at += part.length;
        }
        return out;
    }
}
