package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.codec.http1.FlatHttpHeaders;
import dev.mcpchaos.core.codec.http1.HeadScanner;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class HeadFactsTest {

    @Test
    void theFactsAreTheFirstValuesWhateverTheCaseOfTheNames() {
        HttpRequest request = request(HttpVersion.HTTP_1_1, "content-TYPE", "application/json", "MCP-Session-Id", "s1",
                "Content-Length", "42", "mcp-session-id", "s2", "Content-Type", "text/plain");

        HeadFacts facts = HeadFacts.of(request.headers());

        assertThat(facts.sessionId).isEqualTo("s1");
        assertThat(facts.contentType).isEqualTo("application/json");
        assertThat(facts.lengthGiven).isTrue();
        assertThat(facts.length).isEqualTo(42);
        assertThat(facts.transferEncoding).isFalse();
        assertThat(facts.hopByHop).isEqualTo(HeadFacts.HopByHop.NONE);
    }

    @Test
    void aHeadWithoutTheHeadersHasNoFacts() {
        HeadFacts facts = HeadFacts.of(request(HttpVersion.HTTP_1_1, "Accept", "*/*", "X-Content-Length", "3").headers());

        assertThat(facts.sessionId).isNull();
        assertThat(facts.contentType).isNull();
        assertThat(facts.lengthGiven).isFalse();
        assertThat(facts.length).isEqualTo(-1);
    }

    @Test
    void aLengthThatIsNoNumberCountsAsNone() {
        assertThat(HeadFacts.of(request(HttpVersion.HTTP_1_1, "Content-Length", "12x").headers()).length)
                .isEqualTo(-1);
        assertThat(HeadFacts.of(request(HttpVersion.HTTP_1_1, "Content-Length", "-3").headers()).length)
                .isEqualTo(-1);
    }

    @Test
    void lengthsAreReadAsLongParseLongReadTheTrimmedValue() {
        for (String value : List.of("0", "42", " 42 ", "\t7", "+5", "007", "9223372036854775807", "9223372036854775808",
                "99999999999999999999", "", " ", "+", "-0", "-00", "-3", "--1", "4 2", "0x10", "1e3", "+-1")) {
            long expected;
            try {
                expected = Long.parseLong(value.trim());
                expected = expected >= 0 ? expected : -1; // what the exchange read before
            } catch (NumberFormatException e) {
                expected = -1;
            }
            assertThat(HeadFacts.parseLength(value)).as("'%s'", value).isEqualTo(expected);
        }
    }

    @Test
    void keepAliveIsDecidedAsNettyDecidesIt() {
        List<String[]> connections = List.of(new String[0], new String[] {"keep-alive"}, new String[] {"close"},
                new String[] {"Keep-Alive"}, new String[] {"CLOSE"}, new String[] {"keep-alive , X-Hop"},
                new String[] {"X-Hop, close"}, new String[] {"upgrade"}, new String[] {""}, new String[] {","},
                new String[] {"keep-alive", "close"}, new String[] {"X-Hop", "keep-alive"},
                new String[] {"closed"}, new String[] {"keep-alive-ish"}, new String[] {"X-Hop ,close"});
        int compared = 0;
        for (HttpVersion version : List.of(HttpVersion.HTTP_1_0, HttpVersion.HTTP_1_1)) {
            for (String[] values : connections) {
                for (boolean response : new boolean[] {false, true}) {
                    HttpMessage head = response ? new DefaultHttpResponse(version, HttpResponseStatus.OK)
                            : new DefaultHttpRequest(version, HttpMethod.POST, "/mcp");
                    HttpHeaders headers = head.headers();
                    for (String value : values) {
                        headers.add("Connection", value);
                    }
                    assertThat(HeadFacts.of(headers).keepAlive(head))
                            .as("%s %s %s", version, response ? "response" : "request", String.join(" | ", values))
                            .isEqualTo(HttpUtil.isKeepAlive(head));
                    compared++;
                }
            }
        }
        assertThat(compared).isEqualTo(2 * connections.size() * 2);
    }

    @Test
    void aConnectionOfKeepAliveOrCloseOnlyNamesNoOtherHeader() {
        assertThat(HeadFacts.of(request(HttpVersion.HTTP_1_1, "Connection", "keep-alive", "connection", "Close")
                .headers()).hopByHop).isEqualTo(HeadFacts.HopByHop.CONNECTION_ONLY);
        assertThat(HeadFacts.of(request(HttpVersion.HTTP_1_1, "Connection", "keep-alive", "Connection", "X-Hop")
                .headers()).hopByHop).isEqualTo(HeadFacts.HopByHop.OTHERS);
        assertThat(HeadFacts.of(request(HttpVersion.HTTP_1_1, "Connection", "X-Hop", "Connection", "close")
                .headers()).hopByHop).isEqualTo(HeadFacts.HopByHop.OTHERS);
    }

    @Test
    void everyOtherHopByHopHeaderIsFoundInAnyCase() {
        for (String name : List.of("Keep-Alive", "PROXY-CONNECTION", "te", "Trailer", "upgrade", "Transfer-Encoding",
                "Proxy-Authenticate", "proxy-authorization")) {
            HeadFacts facts = HeadFacts.of(request(HttpVersion.HTTP_1_1, "Accept", "*/*", name, "x", "Host", "h")
                    .headers());

            assertThat(facts.hopByHop).as(name).isEqualTo(HeadFacts.HopByHop.OTHERS);
            assertThat(facts.transferEncoding).as(name).isEqualTo(name.equalsIgnoreCase("transfer-encoding"));
        }
    }

    @Test
    void namesOfTheSameLengthAsAHopByHopHeaderAreNotTakenForOne() {
        // Each has the length of one the scan looks for, so only the comparison tells them apart.
        HeadFacts facts = HeadFacts.of(request(HttpVersion.HTTP_1_1, "Xe", "1", "X-Trail", "1", "Connectio2", "1",
                "Transfer-Encodin2", "1", "X-Content-Leng", "1", "Mcp-Session-I2", "1", "Proxy-Connectio2", "1", "Proxy-Authenticat2", "1",
                "Proxy-Authorizatio2", "1", "Content-Typ2", "1").headers());

        assertThat(facts.hopByHop).isEqualTo(HeadFacts.HopByHop.NONE);
        assertThat(facts.transferEncoding).isFalse();
        assertThat(facts.contentType).isNull();
        assertThat(facts.lengthGiven).isFalse();
        assertThat(facts.sessionId).isNull();
    }

    /**
     * A head read in place ({@link FlatHttpHeaders}, its fields as received or set since) gives
     * the facts its fields give in Netty's headers.
     */
    @Test
    void aHeadReadInPlaceHasTheFactsOfTheSameFieldsInNettysHeaders() {
        List<String[]> heads = List.of(
                new String[] {"Host", "a", "Content-Type", "application/json", "Content-Length", "12",
                    "mcp-session-id", "s-1", "Connection", "keep-alive"},
                new String[] {"MCP-SESSION-ID", "s-2", "content-type", "text/event-stream", "Connection", "close"},
                new String[] {"Connection", "keep-alive , X-Hop", "X-Hop", "1"},
                new String[] {"Connection", "keep-alive", "connection", "Close"},
                new String[] {"Keep-Alive", "timeout=5", "TE", "trailers", "Upgrade", "h2c", "Trailer", "X"},
                new String[] {"Proxy-Connection", "x", "Proxy-Authenticate", "x", "Proxy-Authorization", "x"},
                new String[] {"Xe", "1", "X-Trail", "1", "Connectio2", "1", "Content-Lengt2", "1", "Content-Typ2", "1"},
                new String[] {"Content-Length", "007", "Content-Type", "application/json; charset=utf-8"},
                new String[] {});
        int compared = 0;
        for (HttpVersion version : List.of(HttpVersion.HTTP_1_0, HttpVersion.HTTP_1_1)) {
            for (String[] fields : heads) {
                HttpRequest netty = request(version, fields);
                StringBuilder text = new StringBuilder("POST /mcp ").append(version).append("\r\n");
                for (int i = 0; i < fields.length; i += 2) {
                    text.append(fields[i]).append(": ").append(fields[i + 1]).append("\r\n");
                }
                byte[] bytes = text.append("\r\n").toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
                HeadScanner scanner = HeadScanner.forRequests(8192, 64);
                assertThat(scanner.scan(bytes, 0, bytes.length)).as("%s", text).isEqualTo(bytes.length);
                FlatHttpHeaders asReceived = FlatHttpHeaders.of(scanner);
                FlatHttpHeaders setSince = new FlatHttpHeaders();
                for (int i = 0; i < fields.length; i += 2) {
                    setSince.add(fields[i], fields[i + 1]);
                }
                for (FlatHttpHeaders flat : List.of(asReceived, setSince)) {
                    HttpRequest request = new DefaultHttpRequest(version, HttpMethod.POST, "/mcp", flat);
                    assertThat(facts(HeadFacts.of(flat), request)).as("%s", text)
                            .isEqualTo(facts(HeadFacts.of(netty.headers()), netty));
                    compared++;
                }
            }
        }
        assertThat(compared).isEqualTo(2 * heads.size() * 2);
    }

    private static List<Object> facts(HeadFacts facts, HttpMessage head) {
        return java.util.Arrays.asList(facts.sessionId, facts.contentType, facts.lengthGiven, facts.length,
                facts.transferEncoding, facts.hopByHop, facts.keepAlive(head));
    }

    private static HttpRequest request(HttpVersion version, String... namesAndValues) {
        HttpRequest request = new DefaultHttpRequest(version, HttpMethod.POST, "/mcp");
        for (int i = 0; i < namesAndValues.length; i += 2) {
            request.headers().add(namesAndValues[i], namesAndValues[i + 1]);
        }
        return request;
    }
}
