package dev.mcpchaos.core.codec.http1;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@link FlatHttpHeaders} against Netty's {@link DefaultHttpHeaders}: the same head read into
 * both, then the same random operations on both, and after each one the same answers to every
 * question, down to the bytes Netty's encoder writes for the fields.
 */
class FlatHttpHeadersTest {

    private static final String[] NAMES = {"Host", "host", "Content-Length", "content-length", "Mcp-Session-Id",
        "MCP-SESSION-ID", "X-A", "x-a", "Accept", "Connection", "X^Y", "X~Y", "A`", "Retry-After"};
    private static final String[] VALUES = {"1", "42", "-7", "70000", "abc", "a, b", "close", "keep-alive",
        "Fri, 04 Dec 2026 19:00:00 GMT", "application/json", "\"quoted\""};
    /** Names and values Netty refuses: so must the flat headers, and change nothing. */
    private static final String[] BAD_NAMES = {"A@", "A B", "", "X:Y", "caf\u00e9"};
    private static final String[] BAD_VALUES = {"x\r\ny", "x\ny", "x\u0000y"};

    @Test
    void readsWhatTheScannerFoundAndCopiesTheLinesWhileNothingChanged() {
        String lines = "Host: a\r\nX-Ows:  \t spaced  out \t\r\ncontent-length: 5\r\nX-Empty:\r\n";
        FlatHttpHeaders headers = scan("POST /mcp HTTP/1.1\r\n" + lines + "\r\n");
        assertThat(headers.get("X-OWS")).isEqualTo("spaced  out");
        assertThat(headers.getInt("Content-Length")).isEqualTo(5);
        assertThat(headers.get("X-Empty")).isEmpty();
        assertThat(headers.pristine()).isTrue();
        assertThat(encoded(headers)).isEqualTo(lines); // as received, whitespace and case
        headers.remove("X-Empty");
        assertThat(headers.pristine()).isFalse();
        assertThat(encoded(headers)).isEqualTo("Host: a\r\nX-Ows: spaced  out\r\ncontent-length: 5\r\n");
    }

    @Test
    void namesMatchWithoutCaseButOnlyLetters() {
        FlatHttpHeaders headers = scan("GET / HTTP/1.1\r\nX^Y: 1\r\nA`: 2\r\n\r\n");
        assertThat(headers.get("x^y")).isEqualTo("1");
        assertThat(headers.get("X~Y")).isNull(); // '^' | 0x20 is '~': not the same name
        assertThat(headers.get("A@")).isNull();
        assertThat(headers.contains("a`")).isTrue();
    }

    @Test
    void refusesWhatNettyRefuses() {
        FlatHttpHeaders headers = scan("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        for (String bad : BAD_NAMES) {
            assertThatThrownBy(() -> headers.add(bad, "v")).as(bad).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> new DefaultHttpHeaders().add(bad, "v")).as(bad)
                    .isInstanceOf(IllegalArgumentException.class);
        }
        for (String bad : BAD_VALUES) {
            assertThatThrownBy(() -> headers.set("X-A", bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(headers.entries()).containsExactly(Map.entry("Host", "a"));
        assertThat(headers.pristine()).isTrue();
    }

    /**
     * 600 heads of random fields, 25 random operations each, on both; every answer compared
     * after every operation. Seeded.
     */
    @Test
    void answersAsNettysHeadersDoUnderRandomOperations() {
        Random random = new Random(1604);
        int changed = 0;
        for (int round = 0; round < 600; round++) {
            StringBuilder head = new StringBuilder("POST /mcp HTTP/1.1\r\n");
            DefaultHttpHeaders netty = new DefaultHttpHeaders();
            boolean length = false;
            for (int i = random.nextInt(8); i > 0; i--) {
                String name = pick(random, NAMES);
                String value = pick(random, VALUES);
                if (name.equalsIgnoreCase("content-length")) {
                    if (length) {
                        continue; // the scanner defers a second one
                    }
                    length = true;
                    value = "42";
                }
                head.append(name).append(": ").append(value).append("\r\n");
                netty.add(name, value);
            }
            FlatHttpHeaders flat = scan(head.append("\r\n").toString());
            compare(flat, netty, "as read: " + head);
            for (int op = 0; op < 25; op++) {
                String what = apply(random, flat, netty);
                compare(flat, netty, what + " on " + head);
            }
            if (!flat.pristine()) {
                changed++;
            }
        }
        assertThat(changed).as("heads changed by the operations").isGreaterThan(400);
    }

    /** One random operation on both; returns what it was. */
    private static String apply(Random random, FlatHttpHeaders flat, DefaultHttpHeaders netty) {
        String name = random.nextInt(10) == 0 ? pick(random, BAD_NAMES) : pick(random, NAMES);
        String value = random.nextInt(10) == 0 ? pick(random, BAD_VALUES) : pick(random, VALUES);
        int op = random.nextInt(12);
        String what = "op " + op + " " + name + " = " + value;
        Throwable flatFailure = catchThrowable(() -> operate(op, flat, name, value));
        Throwable nettyFailure = catchThrowable(() -> operate(op, netty, name, value));
        if (nettyFailure == null) {
            assertThat(flatFailure).as(what).isNull();
        } else {
            assertThat(flatFailure).as(what).isNotNull().hasSameClassAs(nettyFailure);
        }
        return what;
    }

    private static void operate(int op, HttpHeaders headers, String name, String value) {
        switch (op) {
            case 0, 1 -> headers.add(name, value);
            case 2, 3 -> headers.set(name, value);
            case 4, 5 -> headers.remove(name);
            case 6 -> headers.setInt(name, value.length());
            case 7 -> headers.addInt(name, -value.length());
            case 8 -> headers.set(name, List.of(value, value + "2"));
            case 9 -> headers.add(name, List.of(value));
            case 10 -> headers.setShort(name, (short) value.length());
            default -> {
                if (value.length() % 4 == 0) {
                    headers.clear();
                }
            }
        }
    }

    private static void compare(FlatHttpHeaders flat, DefaultHttpHeaders netty, String what) {
        assertThat(flat.entries()).as(what).isEqualTo(netty.entries());
        assertThat(flat.size()).as(what).isEqualTo(netty.size());
        assertThat(flat.isEmpty()).as(what).isEqualTo(netty.isEmpty());
        assertThat(flat.names()).as(what).containsExactlyElementsOf(netty.names());
        List<String> flatSequence = new ArrayList<>();
        flat.iteratorCharSequence().forEachRemaining(e -> flatSequence.add(e.getKey() + "=" + e.getValue()));
        List<String> nettySequence = new ArrayList<>();
        netty.iteratorCharSequence().forEachRemaining(e -> nettySequence.add(e.getKey() + "=" + e.getValue()));
        assertThat(flatSequence).as(what).isEqualTo(nettySequence);
        List<String> visited = new ArrayList<>();
        flat.forEachField((name, value) -> visited.add(name + "=" + value));
        assertThat(visited).as("forEachField after %s", what).isEqualTo(nettySequence);
        for (String name : NAMES) {
            assertThat(flat.get(name)).as("get %s after %s", name, what).isEqualTo(netty.get(name));
            assertThat(flat.getAll(name)).as("getAll %s after %s", name, what).isEqualTo(netty.getAll(name));
            assertThat(flat.contains(name)).as("contains %s after %s", name, what).isEqualTo(netty.contains(name));
            assertThat(flat.getInt(name)).as("getInt %s after %s", name, what).isEqualTo(netty.getInt(name));
            assertThat(flat.getShort(name)).as("getShort %s after %s", name, what).isEqualTo(netty.getShort(name));
            // Netty's throws (a ParseException, unchecked) for a value that is no date; the flat one says null.
            Long nettyTime = null;
            try {
                nettyTime = netty.getTimeMillis(name);
            } catch (Exception e) {
                assertThat(e).hasMessageContaining("can't be parsed into a Date");
            }
            assertThat(flat.getTimeMillis(name)).as("getTimeMillis %s after %s", name, what).isEqualTo(nettyTime);
            assertThat(flat.containsValue(name, "close", true)).as(what).isEqualTo(netty.containsValue(name, "close", true));
        }
        assertThat(encoded(flat)).as("encoded after %s", what).isEqualTo(nettyEncoded(netty));
    }

    private static FlatHttpHeaders scan(String head) {
        HeadScanner scanner = HeadScanner.forRequests(8192, 64);
        byte[] bytes = head.getBytes(StandardCharsets.ISO_8859_1);
        assertThat(scanner.scan(bytes, 0, bytes.length)).as(head).isEqualTo(bytes.length);
        return FlatHttpHeaders.of(scanner);
    }

    private static String encoded(FlatHttpHeaders headers) {
        ByteBuf out = Unpooled.buffer();
        try {
            headers.encodeTo(out);
            return out.toString(StandardCharsets.ISO_8859_1);
        } finally {
            out.release();
        }
    }

    /** The field lines Netty's response encoder writes for {@code headers}. */
    private static String nettyEncoded(HttpHeaders headers) {
        EmbeddedChannel channel = new EmbeddedChannel(new HttpResponseEncoder());
        try {
            channel.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                    Unpooled.EMPTY_BUFFER, headers.copy(), EmptyHttpHeaders.INSTANCE));
            StringBuilder written = new StringBuilder();
            for (ByteBuf b; (b = channel.readOutbound()) != null; ) {
                written.append(b.toString(StandardCharsets.ISO_8859_1));
                b.release();
            }
            String all = written.toString();
            int start = all.indexOf("\r\n") + 2;
            return all.substring(start, all.length() - 2);
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    private static String pick(Random random, String[] from) {
        return from[random.nextInt(from.length)];
    }
}
