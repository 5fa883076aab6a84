package dev.mcpchaos.core.transport.http;

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
        assertThat(facts.contentLength).isEqualTo("42");
        assertThat(facts.length).isEqualTo(42);
        assertThat(facts.transferEncoding).isFalse();
        assertThat(facts.hopByHop).isEqualTo(HeadFacts.HopByHop.NONE);
    }

    @Test
    void aHeadWithoutTheHeadersHasNoFacts() {
        HeadFacts facts = HeadFacts.of(request(HttpVersion.HTTP_1_1, "Accept", "*/*", "X-Content-Length", "3").headers());

        assertThat(facts.sessionId).isNull();
        assertThat(facts.contentType).isNull();
        assertThat(facts.contentLength).isNull();
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
        assertThat(facts.contentLength).isNull();
        assertThat(facts.sessionId).isNull();
    }

    private static HttpRequest request(HttpVersion version, String... namesAndValues) {
        HttpRequest request = new DefaultHttpRequest(version, HttpMethod.POST, "/mcp");
        for (int i = 0; i < namesAndValues.length; i += 2) {
            request.headers().add(namesAndValues[i], namesAndValues[i + 1]);
        }
        return request;
    }
}
