package dev.mcpchaos.core.transport.http;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class HttpMessagesTest {

    @Test
    void aHeadWithNoHopByHopHeaderIsLeftAsItIsAndKeepsNothing() {
        HttpHeaders headers = head("Host", "a", "Content-Type", "application/json", "Content-Length", "12");

        assertThat(HttpMessages.removeHopByHop(headers, null, true)).isNull();
        assertThat(lines(headers)).containsExactly("Host: a", "Content-Type: application/json", "Content-Length: 12");
    }

    @Test
    void aConnectionThatNamesNoHeaderIsRemovedAndKeptInAnyCase() {
        for (String value : new String[] {"keep-alive", "close", "KEEP-ALIVE", "Close"}) {
            HttpHeaders headers = head("Server", "s", "connection", value, "Content-Length", "2");

            HttpHeaders kept = HttpMessages.removeHopByHop(headers, null, true);

            assertThat(lines(headers)).as(value).containsExactly("Server: s", "Content-Length: 2");
            assertThat(lines(kept)).as(value).containsExactly("connection: " + value);
        }
    }

    @Test
    void theHeadersAConnectionNamesGoWithIt() {
        HttpHeaders headers = head("Connection", "keep-alive, X-Hop", "Keep-Alive", "timeout=5", "X-Hop", "1",
                "X-Custom", "c");

        HttpHeaders kept = HttpMessages.removeHopByHop(headers, null, true);

        assertThat(lines(headers)).containsExactly("X-Custom: c");
        assertThat(lines(kept)).containsExactlyInAnyOrder("connection: keep-alive, X-Hop", "X-Hop: 1",
                "keep-alive: timeout=5");
    }

    @Test
    void aSecondConnectionHeaderThatNamesAHeaderIsHonouredToo() {
        HttpHeaders headers = head("Connection", "keep-alive", "Connection", "X-Hop", "X-Hop", "1", "Accept", "*/*");

        HttpMessages.removeHopByHop(headers);

        assertThat(lines(headers)).containsExactly("Accept: */*");
    }

    @Test
    void everyHopByHopHeaderIsRemovedWithoutAConnectionHeader() {
        HttpHeaders headers = head("Transfer-Encoding", "chunked", "TE", "trailers", "Upgrade", "h2c", "Trailer",
                "X-T", "Proxy-Authorization", "Basic x", "Proxy-Authenticate", "Basic", "Proxy-Connection", "close",
                "Keep-Alive", "timeout=1", "Accept", "*/*");

        HttpMessages.removeHopByHop(headers);

        assertThat(lines(headers)).containsExactly("Accept: */*");
    }

    @Test
    void aHeaderAlreadyKeptIsNotKeptTwice() {
        HttpHeaders kept = head("Connection", "close");
        HttpHeaders headers = head("Connection", "keep-alive", "Host", "h");

        assertThat(HttpMessages.removeHopByHop(headers, kept, true)).isSameAs(kept);

        assertThat(lines(kept)).containsExactly("Connection: close");
        assertThat(lines(headers)).containsExactly("Host: h");
    }

    private static HttpHeaders head(String... namesAndValues) {
        HttpHeaders headers = new DefaultHttpHeaders();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            headers.add(namesAndValues[i], namesAndValues[i + 1]);
        }
        return headers;
    }

    private static List<String> lines(HttpHeaders headers) {
        List<String> lines = new ArrayList<>();
        for (Map.Entry<String, String> header : headers) {
            lines.add(header.getKey() + ": " + header.getValue());
        }
        return lines;
    }
}
