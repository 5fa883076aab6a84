package dev.mcpchaos.server.it;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@code mcp-chaos replay --timing} and {@code --match} from the command line (#17), the jar as a
 * child process, the official MCP Java SDK as its client: a call recorded 300 ms after its
 * request is answered no earlier with recorded timing and at once without; sequential matching
 * refuses a call out of order naming the one expected next and answers the recorded order; bad
 * values are refused before anything starts, and a good one runs.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReplayTimingMatchIT {

    @TempDir
    Path dir;

    private static String line(int seq, double t, String dir, String message) {
        return "{\"type\":\"message\",\"seq\":" + seq + ",\"t\":" + t + ",\"dir\":\"" + dir
                + "\",\"session\":\"stdio\",\"message\":" + message + "}";
    }

    private static String call(int id, String tool) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":{\"n\":1}}}";
    }

    private static String result(int id, String text) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" + text
                + "\"}]}}";
    }

    /** initialize, then slow (answered 300 ms after it was asked), then fast (answered within 1 ms). */
    private Path cassette() throws IOException {
        Path file = dir.resolve("timed.ndjson");
        Files.writeString(file, String.join("\n",
                "{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":1,\"transport\":\"stdio\","
                        + "\"recordedAt\":\"2026-12-02T06:00:00Z\",\"recorder\":\"test\"}",
                line(0, 0, "c2s", "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                        + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"rec\",\"version\":\"1\"}}}"),
                line(1, 2, "s2c", "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-06-18\","
                        + "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"recorded\",\"version\":\"1\"}}}"),
                line(2, 3, "c2s", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"),
                line(3, 10, "c2s", call(1, "slow")),
                line(4, 310, "s2c", result(1, "slow done")),
                line(5, 400, "c2s", call(2, "fast")),
                line(6, 401, "s2c", result(2, "fast done"))) + "\n");
        return file;
    }

    private McpSyncClient client(String... options) throws IOException {
        List<String> command = new ArrayList<>(List.of(TestPeers.java().toString(), "-jar",
                TestPeers.mcpChaosJar().toString(), "replay", cassette().toString(), "--journal=off"));
        command.addAll(List.of(options));
        McpSyncClient client = TestPeers.stdioClient(command, line -> { }).build();
        client.initialize();
        return client;
    }

    private static McpSchema.CallToolRequest request(String tool) {
        return McpSchema.CallToolRequest.builder(tool).arguments(Map.of("n", 1)).build();
    }

    private record Timed(String text, Duration took) {
    }

    private static Timed call(McpSyncClient client, String tool) {
        long sent = System.nanoTime();
        McpSchema.CallToolResult result = client.callTool(request(tool));
        return new Timed(HttpPeers.text(result), Duration.ofNanos(System.nanoTime() - sent));
    }

    @Test
    void recordedTimingAnswersTheSlowCallNoEarlierThanRecordedAndNoneAtOnce() throws IOException {
        McpSyncClient recorded = client("--timing", "recorded");
        try {
            Timed slow = call(recorded, "slow");
            assertThat(slow.text()).isEqualTo("slow done");
            assertThat(slow.took()).isGreaterThanOrEqualTo(Duration.ofMillis(290));
            Timed fast = call(recorded, "fast");
            assertThat(fast.text()).isEqualTo("fast done");
            assertThat(fast.took()).isLessThan(Duration.ofMillis(250));
        } finally {
            recorded.closeGracefully();
        }
        McpSyncClient none = client();
        try {
            assertThat(call(none, "fast").text()).isEqualTo("fast done"); // a first call warms the fresh JVM's path
            Timed slow = call(none, "slow");
            assertThat(slow.text()).isEqualTo("slow done");
            assertThat(slow.took()).isLessThan(Duration.ofMillis(250));
        } finally {
            none.closeGracefully();
        }
    }

    @Test
    void sequentialMatchingRefusesACallOutOfOrderAndAnswersTheRecordedOrder() throws IOException {
        McpSyncClient client = client("--match", "sequential");
        try {
            assertThat(catchThrowableOfType(McpError.class, () -> client.callTool(request("fast"))))
                    .hasMessageContaining("not the next recorded request: tools/call {\"arguments\":{\"n\":1},"
                            + "\"name\":\"fast\"} (expected next, recorded request 2: tools/call "
                            + "{\"arguments\":{\"n\":1},\"name\":\"slow\"}; match: sequential)");
            assertThat(call(client, "slow").text()).isEqualTo("slow done");
            assertThat(call(client, "fast").text()).isEqualTo("fast done");
        } finally {
            client.closeGracefully();
        }
    }

    private record Run(int code, String out, String err) {
    }

    private Run run(String input, String... options) throws Exception {
        List<String> command = new ArrayList<>(List.of(TestPeers.java().toString(), "-jar",
                TestPeers.mcpChaosJar().toString(), "replay", cassette().toString(), "--journal=off", "--quiet"));
        command.addAll(List.of(options));
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process process = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        process.getOutputStream().write(input.getBytes(StandardCharsets.UTF_8));
        process.getOutputStream().close();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("replay " + List.of(options) + " did not end within 60 s");
        }
        return new Run(process.exitValue(), Files.readString(out), Files.readString(err));
    }

    @Test
    void badTimingAndMatchValuesAreRefusedNamingWhatIsExpectedAndAGoodOneRuns() throws Exception {
        Run timing = run("", "--timing", "scaled:0");
        assertThat(timing.code()).isEqualTo(2);
        assertThat(timing.err()).contains("mcp-chaos: --timing: 'scaled:0' (expected: none, recorded or scaled:F "
                + "with F a number > 0, such as scaled:0.5)");
        assertThat(timing.out()).isEmpty();

        Run match = run("", "--match", "loose");
        assertThat(match.code()).isEqualTo(2);
        assertThat(match.err()).contains("mcp-chaos: --match: 'loose' (expected: default, method, sequential or strict)");

        Run ignore = run("", "--match-ignore", "params..at");
        assertThat(ignore.code()).isEqualTo(2);
        assertThat(ignore.err()).contains("mcp-chaos: --match-ignore: 'params..at' (expected: a JSON pointer such as "
                + "/params/arguments/time, or a dotted glob such as params.arguments.* or params.**.time)");

        // The twin: good values start the replay, which answers as recorded.
        Run good = run(call(9, "slow") + "\n", "--timing", "scaled:0.5", "--match", "strict",
                "--match-ignore", "/jsonrpc");
        assertThat(good.code()).as(good.err()).isZero();
        assertThat(good.out().lines().toList()).containsExactly(result(9, "slow done"));
    }
}
