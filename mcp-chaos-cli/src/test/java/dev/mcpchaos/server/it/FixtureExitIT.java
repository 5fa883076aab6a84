package dev.mcpchaos.server.it;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The exit codes a client sees when it spawns {@code mcp-chaos stdio} or {@code mcp-chaos replay}
 * as its server, one process per test, and keeps the process's stdin open as an MCP client does
 * (so the proxy never ends because its input did): the server's own code when it exits by itself,
 * 137 after a {@code crash} rule, for both commands (docs/cli.md, docs/record-replay.md). Each
 * test also checks that what the server wrote before it went reached the client, and that stdout
 * ended. How soon the process exits is measured by bench/fixture-spawn.sh, not asserted here.
 */
class FixtureExitIT {

    private static final long BOUND_SECONDS = 30;

    private static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
            + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"it\",\"version\":\"0\"}}}";
    private static final String ANSWER = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\","
            + "\"capabilities\":{},\"serverInfo\":{\"name\":\"sh\",\"version\":\"0\"}}}";
    private static final String CALL = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"n\"}}";
    private static final String CRASH_ON_CALL = "rules:\n  - name: crash-on-call\n"
            + "    match: {direction: client_to_server, kind: request, method: tools/call}\n"
            + "    fault: {type: crash, signal: KILL}\n";

    @TempDir
    Path dir;

    private final List<Process> processes = new CopyOnWriteArrayList<>();
    private final List<CompletableFuture<String>> stderrs = new CopyOnWriteArrayList<>();

    @AfterEach
    void killLeftoversAndCheckForLeaks() throws Exception {
        for (Process process : processes) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly().waitFor(BOUND_SECONDS, TimeUnit.SECONDS);
        }
        for (CompletableFuture<String> stderr : stderrs) {
            assertThat(stderr.get(BOUND_SECONDS, TimeUnit.SECONDS)).as("Netty paranoid leak detection")
                    .doesNotContain("LEAK:");
        }
    }

    @Test
    void stdioExitsWithTheServersOwnCodeWhenTheServerExitsByItself() throws Exception {
        Session session = start("stdio", "--quiet", "--", "/bin/sh", "-c", "read line; echo '" + ANSWER + "'; exit 70");

        session.send(INITIALIZE);

        assertThat(session.readLine()).isEqualTo(ANSWER);
        assertThat(session.readLine()).as("stdout ends with the server").isNull();
        assertThat(session.awaitExit()).isEqualTo(70);
    }

    @Test
    void stdioExitsWith137AfterACrashRule() throws Exception {
        Path rules = Files.writeString(dir.resolve("crash.yaml"), CRASH_ON_CALL);
        Session session = start("stdio", "--quiet", "--rules", rules.toString(), "--no-watch", "--",
                "/bin/sh", "-c", "while read line; do echo '" + ANSWER + "'; done");

        session.send(INITIALIZE);
        assertThat(session.readLine()).isEqualTo(ANSWER);
        session.send(CALL);

        assertThat(session.readLine()).as("the call went nowhere; stdout ends with the server").isNull();
        assertThat(session.awaitExit()).isEqualTo(137);
    }

    @Test
    void replayExitsWith137AfterACrashRuleAsStdioDoes() throws Exception {
        Path rules = Files.writeString(dir.resolve("crash.yaml"), CRASH_ON_CALL);
        Session session = start("replay", cassette().toString(), "--quiet", "--rules", rules.toString(), "--no-watch");

        session.send(INITIALIZE);
        assertThat(session.readLine()).contains("\"id\":1", "\"serverInfo\"");
        session.send(CALL);

        assertThat(session.readLine()).as("the call went nowhere; stdout ends with the server").isNull();
        assertThat(session.awaitExit()).isEqualTo(137);
    }

    @Test
    void replayExitsWith0WhenTheClientsInputEnds() throws Exception {
        Session session = start("replay", cassette().toString(), "--quiet");

        session.send(INITIALIZE);
        assertThat(session.readLine()).contains("\"id\":1", "\"serverInfo\"");
        session.send(CALL);
        assertThat(session.readLine()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[]}}");
        session.closeStdin();

        assertThat(session.readLine()).isNull();
        assertThat(session.awaitExit()).isZero();
    }

    private Path cassette() throws IOException {
        return Files.writeString(dir.resolve("fixture.ndjson"), String.join("\n",
                "{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":1,\"transport\":\"stdio\","
                        + "\"recordedAt\":\"2026-12-02T06:00:00Z\",\"recorder\":\"test\"}",
                "{\"type\":\"message\",\"seq\":0,\"t\":0,\"dir\":\"c2s\",\"session\":\"stdio\",\"message\":"
                        + "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}}",
                "{\"type\":\"message\",\"seq\":1,\"t\":1,\"dir\":\"s2c\",\"session\":\"stdio\",\"message\":" + ANSWER + "}",
                "{\"type\":\"message\",\"seq\":2,\"t\":2,\"dir\":\"c2s\",\"session\":\"stdio\",\"message\":" + CALL + "}",
                "{\"type\":\"message\",\"seq\":3,\"t\":3,\"dir\":\"s2c\",\"session\":\"stdio\",\"message\":"
                        + "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[]}}}") + "\n");
    }

    /** {@code java -Dio.netty.leakDetection.level=paranoid -jar mcp-chaos.jar args...}, stdin a pipe left open. */
    private Session start(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(TestPeers.java().toString(),
                "-Dio.netty.leakDetection.level=paranoid", "-jar", TestPeers.mcpChaosJar().toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().remove("JAVA_TOOL_OPTIONS");
        builder.environment().remove("MCP_CHAOS_LOG_LEVEL");
        Process process = builder.start();
        processes.add(process);
        stderrs.add(CompletableFuture.supplyAsync(() -> {
            try (var err = process.getErrorStream()) {
                return new String(err.readAllBytes(), UTF_8);
            } catch (IOException e) {
                return "stderr: " + e;
            }
        }));
        return new Session(process);
    }

    /** The client's side of one spawned process; every wait is bounded. */
    private static final class Session {
        private final Process process;
        private final OutputStream stdin;
        private final BufferedReader stdout;

        Session(Process process) {
            this.process = process;
            this.stdin = process.getOutputStream();
            this.stdout = new BufferedReader(new InputStreamReader(process.getInputStream(), UTF_8));
        }

        void send(String line) throws IOException {
            stdin.write((line + "\n").getBytes(UTF_8));
            stdin.flush();
        }

        void closeStdin() throws IOException {
            stdin.close();
        }

        /** The next line on stdout, or null at its end. */
        String readLine() throws Exception {
            return CompletableFuture.supplyAsync(() -> {
                try {
                    return stdout.readLine();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }).get(BOUND_SECONDS, TimeUnit.SECONDS);
        }

        int awaitExit() throws InterruptedException {
            assertThat(process.waitFor(BOUND_SECONDS, TimeUnit.SECONDS)).as("exited within %d s", BOUND_SECONDS).isTrue();
            return process.exitValue();
        }
    }
}
