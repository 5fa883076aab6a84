package dev.mcpchaos.core.transport.http;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The HTTP transport's settings: their defaults, their checks' messages, and what a proxy reads of them. */
class HttpSettingsTest {

    private static HttpSettings.Builder builder() {
        return HttpSettings.builder(URI.create("http://127.0.0.1:3001/mcp"));
    }

    @Test
    void theDefaultsAreThoseTheDocumentationGives() {
        HttpSettings settings = builder().build();
        assertThat(settings.listen()).isEqualTo(new InetSocketAddress("127.0.0.1", 0));
        assertThat(settings.rewriteHost()).isFalse();
        assertThat(settings.trustedCa()).isNull();
        assertThat(settings.trustAnyCertificate()).isFalse();
        assertThat(settings.maxRequestBody()).isEqualTo(16 * 1024 * 1024);
        assertThat(settings.maxBuffered()).as("0: half the heap, at start").isZero();
        assertThat(settings.maxJsonResponseBody()).isEqualTo(64 * 1024 * 1024);
        assertThat(settings.maxSseEventSize()).isEqualTo(16 * 1024 * 1024);
        assertThat(settings.maxHeaderSize()).isEqualTo(16 * 1024);
        assertThat(settings.maxConnections()).isEqualTo(10_000);
        assertThat(settings.connectTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(settings.responseTimeout()).isEqualTo(Duration.ofMinutes(5));
        assertThat(settings.responseBodyTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(settings.idleTimeout()).isEqualTo(Duration.ofMinutes(5));
        assertThat(settings.sessionIdleTimeout()).isEqualTo(Duration.ofMinutes(30));
        assertThat(settings.maxSessions()).isEqualTo(10_000);
        assertThat(settings.requestHeadTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(settings.requestBodyTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(settings.minRequestBodyRate()).isEqualTo(500);
        assertThat(settings.sendTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(settings.ioThreads()).isZero();
    }

    @Test
    void aValueThatCannotBeUsedIsRefusedNamingTheSettingAndWhatWasExpected() {
        assertThatThrownBy(() -> builder().maxRequestBody(0)).hasMessage("maxRequestBody: 0 (expected: >= 1)");
        assertThatThrownBy(() -> builder().maxBuffered(0)).hasMessage("maxBuffered: 0 (expected: >= 1)");
        assertThatThrownBy(() -> builder().maxJsonResponseBody(-1)).hasMessage("maxJsonResponseBody: -1 (expected: >= 1)");
        assertThatThrownBy(() -> builder().maxSseEventSize(0)).hasMessage("maxSseEventSize: 0 (expected: >= 1)");
        assertThatThrownBy(() -> builder().maxHeaderSize(0)).hasMessage("maxHeaderSize: 0 (expected: >= 1)");
        assertThatThrownBy(() -> builder().maxConnections(0)).hasMessage("maxConnections: 0 (expected: >= 1)");
        assertThatThrownBy(() -> builder().maxSessions(0)).hasMessage("maxSessions: 0 (expected: >= 1)");
        assertThatThrownBy(() -> builder().responseBodyTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("responseBodyTimeout: PT0S (expected: > 0)");
        assertThatThrownBy(() -> builder().sendTimeout(Duration.ofSeconds(-1)))
                .hasMessage("sendTimeout: PT-1S (expected: > 0)");
        assertThatThrownBy(() -> builder().connectTimeout(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("connectTimeout");
        assertThatThrownBy(() -> builder().minRequestBodyRate(-1)).hasMessage("minRequestBodyRate: -1 (expected: >= 0)");
        assertThatThrownBy(() -> builder().ioThreads(-1)).hasMessage("ioThreads: -1 (expected: >= 0)");
        assertThatThrownBy(() -> HttpSettings.builder(URI.create("http://127.0.0.1:3001/mcp?key=1")))
                .hasMessage("upstream: http://127.0.0.1:3001/mcp?key=1 (expected: no query or fragment; the client's "
                        + "request line passes unchanged)");
        // The twins: the least values taken.
        assertThat(builder().minRequestBodyRate(0).ioThreads(0).maxRequestBody(1).build().maxRequestBody()).isEqualTo(1);
    }

    @Test
    void aProxyReadsTheSettingsItWasGivenAndTheUpstreamsAddressFromThem() throws Exception {
        HttpSettings settings = HttpSettings.builder(URI.create("https://mcp.example.com/mcp"))
                .responseBodyTimeout(Duration.ofMillis(1500)).connectTimeout(Duration.ofDays(365)).build();
        HttpProxyConfig config = HttpProxy.builder(settings).config();
        assertThat(config.settings).isSameAs(settings);
        assertThat(config.settings.responseBodyTimeoutMillis).isEqualTo(1500);
        assertThat(config.settings.connectTimeoutMillis).as("capped for Netty's int option").isEqualTo(Integer.MAX_VALUE);
        assertThat(config.upstream).isEqualTo(InetSocketAddress.createUnresolved("mcp.example.com", 443));
        assertThat(config.upstreamLabel).isEqualTo("https://mcp.example.com:443");
        assertThat(config.upstreamHostHeader).isEqualTo("mcp.example.com");
        assertThat(config.upstreamTls).isNotNull();
        HttpProxyConfig plain = HttpProxy.builder(URI.create("http://127.0.0.1:3001/mcp")).config();
        assertThat(plain.upstreamTls).isNull();
        assertThat(plain.upstreamHostHeader).isEqualTo("127.0.0.1:3001");
    }
}
