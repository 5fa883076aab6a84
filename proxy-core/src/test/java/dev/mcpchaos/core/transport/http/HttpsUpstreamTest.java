package dev.mcpchaos.core.transport.http;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An {@code https://} upstream: its certificate is verified by default, a private CA can be
 * trusted, and trusting anything is an explicit choice. The certificate is made by the JDK's
 * keytool for 127.0.0.1, so the test needs nothing else.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HttpsUpstreamTest {

    @TempDir
    static Path dir;
    private static Path caPem;
    private static HttpsServer upstream;
    private HttpProxy proxy;
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeAll
    static void startUpstream() throws Exception {
        Path keystore = dir.resolve("upstream.p12");
        caPem = dir.resolve("upstream.pem");
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        run(keytool, "-genkeypair", "-alias", "upstream", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=127.0.0.1", "-ext", "SAN=ip:127.0.0.1", "-validity", "2",
                "-storetype", "PKCS12", "-keystore", keystore.toString(), "-storepass", "changeit");
        run(keytool, "-exportcert", "-rfc", "-alias", "upstream", "-keystore", keystore.toString(),
                "-storepass", "changeit", "-file", caPem.toString());

        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = new FileInputStream(keystore.toFile())) {
            store.load(in, "changeit".toCharArray());
        }
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(store, "changeit".toCharArray());
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(keys.getKeyManagers(), null, null);
        upstream = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        upstream.setHttpsConfigurator(new HttpsConfigurator(tls));
        upstream.createContext("/mcp", exchange -> {
            byte[] body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}".getBytes(StandardCharsets.UTF_8);
            exchange.getRequestBody().readAllBytes();
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        upstream.start();
    }

    @AfterAll
    static void stopUpstream() {
        upstream.stop(0);
    }

    @AfterEach
    void stopProxy() {
        if (proxy != null) {
            proxy.close();
        }
    }

    /** A proxy in front of the test's https upstream, with these settings. */
    private HttpProxy.Builder proxyBuilder(UnaryOperator<HttpSettings.Builder> settings) {
        return HttpProxy.builder(settings.apply(HttpSettings.builder(
                URI.create("https://127.0.0.1:" + upstream.getAddress().getPort() + "/mcp"))).build());
    }

    private HttpResponse<String> ping() throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + proxy.address().getPort() + "/mcp"))
                .timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"))
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void unknownCertificateIsRefusedWithA502() throws Exception {
        proxy = proxyBuilder(settings -> settings).start();
        HttpResponse<String> response = ping();
        assertThat(response.statusCode()).isEqualTo(502);
        assertThat(response.body()).contains("\"id\":1").contains("cannot reach the upstream https://127.0.0.1:")
                // The cause is named: the client can tell a certificate problem from a server that is down.
                .containsIgnoringCase("certification path");
    }

    @Test
    void aPlainHttpUpstreamBehindAnHttpsUrlIsSaidNotToAnswerTls() throws Exception {
        // What a user gets who wrote https:// for a plain HTTP server (Node's, nginx): it answers the
        // ClientHello with an HTTP 400, which Netty reports as a NotSslRecordException holding a hex
        // dump of those bytes.
        try (java.net.ServerSocket plain = new java.net.ServerSocket(0, 50, java.net.InetAddress.getByName("127.0.0.1"))) {
            Thread server = new Thread(() -> answerEverythingWith400(plain), "plain-http-upstream");
            server.setDaemon(true);
            server.start();
            int port = plain.getLocalPort();
            proxy = HttpProxy.builder(URI.create("https://127.0.0.1:" + port + "/mcp")).start();
            HttpResponse<String> response = ping();
            assertThat(response.statusCode()).isEqualTo(502);
            assertThat(response.body()).contains("\"id\":1")
                    .contains("the upstream at 127.0.0.1:" + port + " did not answer TLS (is it plain http?)")
                    .doesNotContain("NotSslRecordException").doesNotContain("cannot reach")
                    .doesNotContainPattern("[0-9a-f]{16}"); // no hex dump of what it sent
        }
    }

    /** A plain HTTP server's answer to bytes that are not HTTP, such as a TLS ClientHello. */
    private static void answerEverythingWith400(java.net.ServerSocket plain) {
        while (!plain.isClosed()) {
            try (java.net.Socket socket = plain.accept()) {
                socket.getInputStream().read(new byte[4096]);
                socket.getOutputStream().write("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
                socket.getOutputStream().flush();
            } catch (IOException e) {
                // closed at the test's end
            }
        }
    }

    @Test
    void certificateOfATrustedCaIsAccepted() throws Exception {
        proxy = proxyBuilder(s -> s.trustedCa(caPem)).start();
        HttpResponse<String> response = ping();
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
    }

    @Test
    void anyCertificateIsAcceptedWhenAskedExplicitly() throws Exception {
        proxy = proxyBuilder(s -> s.trustAnyCertificate(true)).start();
        assertThat(ping().statusCode()).isEqualTo(200);
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
    }
}
