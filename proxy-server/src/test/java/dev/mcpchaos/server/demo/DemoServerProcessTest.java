package dev.mcpchaos.server.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link DemoServer#main} as a real process: stdout must carry nothing but protocol lines, and the
 * process must exit 0 once its stdin closes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DemoServerProcessTest {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    @Test
    void stdoutIsOnlyProtocolAndTheProcessExitsZeroWhenStdinCloses() throws Exception {
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process process = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"),
                "-cp", classPath, DemoServer.class.getName())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        try {
            // Read stdout concurrently so a full pipe can never stall the child.
            CompletableFuture<byte[]> stdout = CompletableFuture.supplyAsync(() -> readAll(process.getInputStream()));
            try (OutputStream stdin = process.getOutputStream()) {
                stdin.write(("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\"}}\n"
                        + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                        + "not json\r\n"
                        + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\",\"arguments\":{\"ms\":200}}}\n")
                        .getBytes(StandardCharsets.UTF_8));
            }

            assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("process exited").isTrue();
            assertThat(process.exitValue()).isZero();

            String output = new String(stdout.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8);
            assertThat(output).endsWith("\n");
            List<JsonNode> messages = new ArrayList<>();
            for (String line : output.split("\n")) {
                messages.add(MAPPER.readTree(line)); // throws, failing the test, on any non-JSON line
            }
            assertThat(messages).hasSize(3);
            assertThat(messages.get(0).at("/result/protocolVersion").asText()).isEqualTo("2025-06-18");
            assertThat(messages.get(1).at("/error/code").intValue()).isEqualTo(-32700);
            assertThat(messages.get(2).get("id").intValue()).isEqualTo(2);
            assertThat(messages.get(2).at("/result/content/0/text").asText()).isEqualTo("slept 200 ms");
        } finally {
            process.destroyForcibly();
        }
    }

    private static byte[] readAll(InputStream in) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            in.transferTo(bytes);
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
