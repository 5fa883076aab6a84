package dev.mcpchaos.server.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mcpchaos.server.cli.Main;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code mcp-chaos demo-server --http} as a real process: it prints its endpoint on stderr,
 * serves MCP there, keeps stdout empty, and exits 0 on SIGTERM.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DemoHttpServerProcessTest {

    private static final Pattern ENDPOINT = Pattern.compile("(http://127\\.0\\.0\\.1:\\d+/mcp)");

    @Test
    void servesOnTheAnnouncedEndpointAndExitsZeroOnSigterm() throws Exception {
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process process = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"),
                "-cp", classPath, Main.class.getName(), "demo-server", "--http", "127.0.0.1:0", "--keep-alive", "1s")
                .start();
        try {
            BlockingQueue<String> stderr = new LinkedBlockingQueue<>();
            CompletableFuture.runAsync(() -> readLines(process.getErrorStream(), stderr));
            CompletableFuture<String> stdout = CompletableFuture.supplyAsync(() -> readAll(process.getInputStream()));

            URI endpoint = null;
            StringBuilder seen = new StringBuilder();
            while (endpoint == null) {
                String line = stderr.poll(30, TimeUnit.SECONDS);
                assertThat(line).as("a stderr line naming the endpoint; so far:%n%s", seen).isNotNull();
                seen.append(line).append('\n');
                Matcher matcher = ENDPOINT.matcher(line);
                if (matcher.find()) {
                    endpoint = URI.create(matcher.group(1));
                }
            }

            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            HttpResponse<String> response = client.send(HttpRequest.newBuilder(endpoint)
                    .timeout(Duration.ofSeconds(20))
                    .header("Accept", "application/json, text/event-stream")
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                            + "\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                            + "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("Mcp-Session-Id")).isPresent();
            assertThat(response.body()).contains("\"protocolVersion\":\"2025-06-18\"");

            process.destroy(); // SIGTERM
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("process exited").isTrue();
            assertThat(process.exitValue()).isZero();
            assertThat(stdout.get(10, TimeUnit.SECONDS)).isEmpty();
        } finally {
            process.destroyForcibly();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"3001", "127.0.0.1", "127.0.0.1:", "127.0.0.1:70000", "::1:3001", "127.0.0.1:x"})
    void aBadAddressIsAUsageError(String address) {
        assertThat(Main.run("demo-server", "--http", address)).isEqualTo(2);
    }

    private static void readLines(InputStream in, BlockingQueue<String> lines) {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                lines.add(line);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String readAll(InputStream in) {
        try {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
