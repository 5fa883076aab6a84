package dev.mcpchaos.server.it;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.cli.Main;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The {@code mcp-chaos} command line as a user meets it: the packaged jar run as a real process
 * ({@code java -Dio.netty.leakDetection.level=paranoid -jar mcp-chaos.jar ...}), with real child
 * processes behind {@code mcp-chaos stdio}.
 *
 * <p>It proves, for issue 2:
 * <ul>
 *   <li>{@code --version} and {@code --help} (with the subcommands {@code stdio}, {@code demo},
 *       {@code demo-server});</li>
 *   <li>a command that cannot start gives exit code 127, exactly one line on stderr and nothing on
 *       stdout;</li>
 *   <li>the shutdown contract: stdin EOF ends the child (which got every byte first) and the proxy
 *       with the child's code; a child that exits on its own while stdin is still open ends the
 *       proxy with its code, with nothing it wrote to stdout or stderr lost and no hang; a child
 *       that ignores SIGTERM is SIGKILLed (137); SIGTERM and SIGINT sent to the proxy reach the
 *       child;</li>
 *   <li>stdout carries the protocol bytes and nothing else, even with {@code --log-traffic}; all
 *       logs go to stderr;</li>
 *   <li>a line over {@code --max-line-length} is skipped, reported on stderr with its size and
 *       direction, and relaying goes on, in both directions;</li>
 *   <li>{@code mcp-chaos demo} runs to completion;</li>
 *   <li>Netty's paranoid leak detector reports no {@code LEAK:} in any proxy's stderr (checked after
 *       every test; one test relays enough data on a small heap that the collector runs, so the
 *       detector has collected buffers to look at).</li>
 * </ul>
 *
 * <p>Every process has its stdout and stderr redirected to files (no pipe can fill up and block
 * it) and every wait is bounded; whatever is still alive after a test is killed.
 */
class StdioCliIT {

    /** Bound for a whole proxy run in these tests; none needs more than a few seconds. */
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(30);

    private static final String LEAK_DETECTION = "-Dio.netty.leakDetection.level=paranoid";

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tempDir;

    private final List<Run> runs = new CopyOnWriteArrayList<>();

    /** One {@code java -jar mcp-chaos.jar ...} process and the files its output goes to. */
    private static final class Run {
        final Process process;
        final Path stdout;
        final Path stderr;
        final List<String> command;

        Run(Process process, Path stdout, Path stderr, List<String> command) {
            this.process = process;
            this.stdout = stdout;
            this.stderr = stderr;
            this.command = command;
        }

        /** Waits (bounded) for the process to exit and returns its exit code. */
        int awaitExit() {
            try {
                if (!process.waitFor(RUN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                    fail("mcp-chaos did not exit within " + RUN_TIMEOUT + ": " + command
                            + "\nstderr so far:\n" + stderr());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + command, e);
            }
            return process.exitValue();
        }

        /** The bytes the process wrote to stdout so far. */
        byte[] stdoutBytes() {
            try {
                return Files.readAllBytes(stdout);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        String stdout() {
            return new String(stdoutBytes(), UTF_8);
        }

        String stderr() {
            try {
                return Files.readString(stderr, UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        List<String> stderrLines() {
            return stderr().lines().collect(Collectors.toList());
        }

        /** The proxy's stdin; closing it is the client's EOF. */
        OutputStream stdin() {
            return process.getOutputStream();
        }

        void closeStdin() {
            try {
                process.getOutputStream().close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Starts {@code java [jvmOptions] -Dio.netty...=paranoid -jar mcp-chaos.jar args...}; stdin is a pipe left open. */
    private Run start(List<String> jvmOptions, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(TestPeers.java().toString());
        command.addAll(jvmOptions);
        command.add(LEAK_DETECTION);
        command.add("-jar");
        command.add(TestPeers.mcpChaosJar().toString());
        command.addAll(args);
        int n = runs.size();
        Path stdout = tempDir.resolve("run" + n + ".stdout");
        Path stderr = tempDir.resolve("run" + n + ".stderr");
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectOutput(stdout.toFile())
                .redirectError(stderr.toFile());
        // "Picked up JAVA_TOOL_OPTIONS: ..." would be a stderr line the proxy did not write.
        Map<String, String> env = builder.environment();
        env.remove("JAVA_TOOL_OPTIONS");
        env.remove("JDK_JAVA_OPTIONS");
        env.remove("_JAVA_OPTIONS");
        env.remove("MCP_CHAOS_LOG_LEVEL");
        try {
            Run run = new Run(builder.start(), stdout, stderr, List.copyOf(command));
            runs.add(run);
            return run;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command, e);
        }
    }

    private Run start(String... args) {
        return start(List.of(), List.of(args));
    }

    @AfterEach
    void killLeftoversAndCheckForLeaks() {
        for (Run run : runs) {
            run.process.descendants().forEach(ProcessHandle::destroyForcibly);
            run.process.destroyForcibly();
        }
        for (Run run : runs) {
            try {
                run.process.waitFor(RUN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (Run run : runs) {
            assertThat(run.stderr())
                    .as("stderr of %s (Netty paranoid leak detection)", run.command)
                    .doesNotContain("LEAK:");
        }
    }

    // ---------------------------------------------------------------- --version, --help

    @Test
    void versionPrintsTheBuildVersion() {
        Run run = start("--version");
        run.closeStdin();

        assertThat(run.awaitExit()).isZero();
        assertThat(Main.version()).as("version.properties of the build").isNotEqualTo("unknown");
        assertThat(run.stdout()).isEqualTo("mcp-chaos " + Main.version() + "\n");
        assertThat(run.stderr()).isEmpty();
    }

    @Test
    void helpListsTheSubcommands() {
        Run run = start("--help");
        run.closeStdin();

        assertThat(run.awaitExit()).isZero();
        List<String> lines = run.stdout().lines().collect(Collectors.toList());
        assertThat(lines.get(0)).startsWith("Usage: mcp-chaos");
        List<String> commands = lines.subList(lines.indexOf("Commands:") + 1, lines.size()).stream()
                .filter(line -> line.matches("^  \\S.*"))
                .map(line -> line.trim().split("\\s+")[0])
                .collect(Collectors.toList());
        assertThat(commands).contains("stdio", "demo", "demo-server");
        assertThat(run.stdout()).contains("--version", "--help");
        assertThat(run.stderr()).isEmpty();
    }

    // ---------------------------------------------------------------- control endpoint

    @Test
    void controlServesHealthAndTheMetricsOfTheTrafficSoFar() throws Exception {
        Run run = start("stdio", "--control", "127.0.0.1:0", "--",
                TestPeers.java().toString(), "-jar", TestPeers.mcpChaosJar().toString(), "demo-server");
        Pattern announced = Pattern.compile("control API on (http://\\S+?)/ ");
        String base = await().atMost(RUN_TIMEOUT).until(() -> {
            Matcher m = announced.matcher(run.stderr());
            return m.find() ? m.group(1) : null;
        }, Objects::nonNull);
        assertThat(base).startsWith("http://127.0.0.1:");

        run.stdin().write("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n".getBytes(UTF_8));
        run.stdin().flush();
        await().atMost(RUN_TIMEOUT).until(() -> run.stdout().contains("\"id\":1"));

        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> health = http.send(HttpRequest.newBuilder(
                URI.create(base + "/health")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).isEqualTo(200);
        HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(
                URI.create(base + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(metrics.body())
                .contains("mcp_chaos_messages_total{direction=\"client_to_server\",kind=\"request\",method=\"ping\","
                        + "transport=\"stdio\"} 1.0")
                .contains("mcp_chaos_messages_total{direction=\"server_to_client\",kind=\"response\",method=\"ping\","
                        + "transport=\"stdio\"} 1.0")
                .contains("mcp_chaos_sessions_active{transport=\"stdio\"} 1.0");

        run.closeStdin();
        assertThat(run.awaitExit()).isZero();
        assertThat(run.stdout()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
    }

    // ---------------------------------------------------------------- start failure

    @Test
    void aCommandThatCannotStartGivesOneStderrLineAndExit127() {
        Run run = start("stdio", "--", "/nonexistent/cmd", "--flag");

        assertThat(run.awaitExit()).isEqualTo(127);
        assertThat(run.stdoutBytes()).isEmpty();
        assertThat(run.stderrLines()).singleElement().satisfies(line -> assertThat(line)
                .startsWith("mcp-chaos: cannot start the server command")
                .contains("/nonexistent/cmd"));
    }

    @Test
    void aWorkingDirectoryThatDoesNotExistIsNamedWithExitCode2AndAnExistingOneIsWhereTheServerRuns()
            throws IOException {
        Path missing = tempDir.resolve("missing");
        Run refused = start("stdio", "--quiet", "--cwd", missing.toString(), "--", "cat");
        refused.closeStdin();
        assertThat(refused.awaitExit()).isEqualTo(2);
        assertThat(refused.stdoutBytes()).isEmpty();
        assertThat(refused.stderrLines()).containsExactly("mcp-chaos: --cwd: '" + missing + "' does not exist "
                + "(expected: the directory to start the server in)");

        Path there = Files.createDirectory(tempDir.resolve("there"));
        Run run = start("stdio", "--quiet", "--cwd", there.toString(), "--", "/bin/sh", "-c",
                "printf '{\"cwd\":\"%s\"}\\n' \"$(pwd)\"");
        run.closeStdin();
        assertThat(run.awaitExit()).isZero();
        assertThat(run.stdout()).isEqualTo("{\"cwd\":\"" + there.toRealPath() + "\"}\n");
    }

    // ---------------------------------------------------------------- shutdown

    @Test
    void stdinEofEndsTheChildAndTheProxyWithTheChildsExitCode() throws IOException {
        Path received = tempDir.resolve("child-received.bin");
        Run run = start("stdio", "--", "/bin/sh", "-c", "cat > \"$1\"; exit 3", "child", received.toString());
        byte[] sent = ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
                + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").getBytes(UTF_8);

        run.stdin().write(sent);
        run.stdin().flush();
        run.closeStdin();

        assertThat(run.awaitExit()).isEqualTo(3);
        // Everything the client wrote reached the child before its stdin was closed.
        assertThat(received).hasBinaryContent(sent);
        assertThat(run.stdoutBytes()).isEmpty();
    }

    @Test
    void aChildThatExitsOnItsOwnEndsTheProxyWithItsCodeAndNothingItWroteIsLost() {
        int lines = 5000;
        // About 300 KB: several times a pipe buffer, so the child blocks unless the proxy keeps reading.
        int errLines = 500;
        Run run = start("stdio", "--", "/bin/sh", "-c",
                "i=0; while [ $i -lt " + lines + " ]; do "
                        + "printf '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"i\":%d}}\\n' $i; "
                        + "if [ $i -lt " + errLines + " ]; then echo \"child stderr $i\" >&2; fi; "
                        + "i=$((i+1)); done; exit 7");
        // The proxy's stdin stays open: the child's exit alone must end the proxy.

        assertThat(run.awaitExit()).isEqualTo(7);
        StringBuilder expected = new StringBuilder();
        List<String> expectedErr = new ArrayList<>();
        for (int i = 0; i < lines; i++) {
            expected.append("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"i\":")
                    .append(i).append("}}\n");
            if (i < errLines) {
                expectedErr.add("child stderr " + i);
            }
        }
        assertThat(run.stdout()).isEqualTo(expected.toString());
        // The child's stderr was copied whole, in order, to the proxy's.
        assertThat(run.stderrLines()).filteredOn(l -> l.startsWith("child stderr ")).isEqualTo(expectedErr);
    }

    @Test
    void aChildThatIgnoresSigtermIsKilled() {
        Run run = start("stdio", "--exit-timeout", "100ms", "--terminate-timeout", "200ms", "--",
                "/bin/sh", "-c", "trap '' TERM; cat >/dev/null; exec sleep 30");
        ProcessHandle child = awaitChild(run);

        run.closeStdin();

        assertThat(run.awaitExit()).isEqualTo(128 + 9);
        await("the child to be gone").atMost(RUN_TIMEOUT).until(() -> !child.isAlive());
        assertThat(run.stderr()).contains("SIGTERM").contains("SIGKILL");
        assertThat(run.stdoutBytes()).isEmpty();
    }

    @Test
    void sigtermToTheProxyIsPassedToTheChild() {
        Run run = start("stdio", "--", "/bin/sh", "-c",
                // The sleep before "ready" gives the proxy time to install its signal handlers after
                // starting the child; a SIGTERM before that would hit the JVM's default handler.
                "trap 'exit 42' TERM; sleep 0.5; echo ready; while :; do sleep 0.05; done");
        ProcessHandle child = awaitChild(run);
        await("the child to print ready").atMost(RUN_TIMEOUT).until(() -> run.stdout().equals("ready\n"));

        run.process.destroy(); // SIGTERM to the proxy (Process.destroy on Unix)

        assertThat(run.awaitExit()).isEqualTo(42);
        await("the child to be gone").atMost(RUN_TIMEOUT).until(() -> !child.isAlive());
        assertThat(run.stdout()).isEqualTo("ready\n");
    }

    @Test
    void sigintToTheProxyIsPassedToTheChild() throws Exception {
        Run run = start("stdio", "--", "/bin/sh", "-c",
                "trap 'exit 43' INT; sleep 0.5; echo ready; while :; do sleep 0.05; done");
        ProcessHandle child = awaitChild(run);
        await("the child to print ready").atMost(RUN_TIMEOUT).until(() -> run.stdout().equals("ready\n"));

        Process kill = new ProcessBuilder("kill", "-INT", Long.toString(run.process.pid())).inheritIO().start();
        assertThat(kill.waitFor(RUN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(kill.exitValue()).isZero();

        assertThat(run.awaitExit()).isEqualTo(43);
        await("the child to be gone").atMost(RUN_TIMEOUT).until(() -> !child.isAlive());
    }

    /** Waits (bounded) until the proxy has started its child, and returns it. */
    private static ProcessHandle awaitChild(Run run) {
        return await("the proxy to start its child").atMost(RUN_TIMEOUT)
                .until(() -> run.process.children().findFirst().orElse(null), h -> h != null);
    }

    // ---------------------------------------------------------------- stdout is the protocol

    @Test
    void stdoutCarriesOnlyTheProtocolEvenWithLogTraffic() throws IOException {
        List<String> messages = List.of(
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
                        + "\"capabilities\":{},\"clientInfo\":{\"name\":\"cli-it\",\"version\":\"1\"}}}",
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                        + "\"arguments\":{\"text\":\"line\\nbreak \\\"quoted\\\" \u00e9\u4e2d\ud83d\ude00\"}}}",
                "{\"params\":{\"nested\":{\"a\":[1,2,{\"b\":null}]}},\"method\":\"x/y\",\"id\":3,\"jsonrpc\":\"2.0\"}",
                "[{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}]");
        byte[] sent = messages.stream().map(m -> m + "\n").collect(Collectors.joining()).getBytes(UTF_8);
        // cat answers every message with itself, so what the proxy prints is exactly what it was sent.
        Run run = start("stdio", "--log-traffic", "--", "/bin/cat");

        run.stdin().write(sent);
        run.stdin().flush();
        run.closeStdin();

        assertThat(run.awaitExit()).isZero();
        assertThat(run.stdoutBytes()).isEqualTo(sent);
        List<String> out = run.stdout().lines().collect(Collectors.toList());
        assertThat(out).hasSameSizeAs(messages);
        for (int i = 0; i < messages.size(); i++) {
            JsonNode parsed = JSON.readTree(out.get(i));
            assertThat(parsed).as("stdout line %d", i).isEqualTo(JSON.readTree(messages.get(i)));
        }
        // The traffic log went to stderr, both directions, one line per message each way.
        List<String> traffic = run.stderrLines().stream().filter(l -> l.contains("traffic:")).collect(Collectors.toList());
        assertThat(traffic).filteredOn(l -> l.contains("c->s")).hasSize(messages.size());
        assertThat(traffic).filteredOn(l -> l.contains("s->c")).hasSize(messages.size());
        assertThat(traffic).anySatisfy(l -> assertThat(l).contains("c->s").contains("initialize"));
        assertThat(traffic).anySatisfy(l -> assertThat(l).contains("c->s").contains("tools/call").contains("echo"));
    }

    @Test
    void bulkRelayIsExactAndLeakFreeWhileTheCollectorRuns() throws IOException {
        // ~8 MB of JSON lines of assorted sizes through cat, on a small heap, so that garbage
        // collections happen and the paranoid leak detector sees the buffers the proxy dropped.
        Random random = new Random(20240611L);
        ByteArrayOutputStream input = new ByteArrayOutputStream();
        for (int i = 0; i < 4000; i++) {
            StringBuilder text = new StringBuilder();
            int size = 10 + random.nextInt(4000);
            for (int k = 0; k < size; k++) {
                text.append((char) ('a' + random.nextInt(26)));
            }
            input.writeBytes(("{\"jsonrpc\":\"2.0\",\"id\":" + i + ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                    + "\"arguments\":{\"text\":\"" + text + "\"}}}\n").getBytes(UTF_8));
        }
        Path in = tempDir.resolve("bulk.in");
        Files.write(in, input.toByteArray());
        Path gcLog = tempDir.resolve("gc.log");
        Run run = start(List.of("-Xmx32m", "-Xlog:gc:file=" + gcLog), List.of("stdio", "--log-traffic=40", "--", "/bin/cat"));

        try (OutputStream stdin = run.stdin()) {
            Files.copy(in, stdin);
        }

        assertThat(run.awaitExit()).isZero();
        assertThat(run.stdout).hasSameBinaryContentAs(in);
        // Leaks are reported when the collector has found a dropped buffer and the next one is
        // allocated: at least two collections mean the detector had something to look at.
        assertThat(Files.readAllLines(gcLog)).as("the proxy JVM's GC log")
                .filteredOn(l -> l.contains("Pause")).hasSizeGreaterThanOrEqualTo(2);
        assertThat(run.stderr()).doesNotContain("LEAK:");
    }

    // ---------------------------------------------------------------- --max-line-length

    @Test
    void aClientLineOverTheLimitIsSkippedAndReportedAndTheNextIsRelayed() throws IOException {
        String first = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
        String big = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                + "\"arguments\":{\"text\":\"" + "x".repeat(3000) + "\"}}}";
        String next = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}";
        int bigSize = big.getBytes(UTF_8).length;
        Run run = start("stdio", "--max-line-length", "1KiB", "--", "/bin/cat");

        run.stdin().write((first + "\n" + big + "\n" + next + "\n").getBytes(UTF_8));
        run.stdin().flush();
        run.closeStdin();

        assertThat(run.awaitExit()).isZero();
        assertThat(run.stdout()).isEqualTo(first + "\n" + next + "\n");
        assertThat(run.stderrLines()).singleElement().satisfies(line -> assertThat(line)
                .contains("c->s")
                .contains(Integer.toString(bigSize))
                .contains("1024"));
    }

    @Test
    void aServerLineOverTheLimitIsSkippedAndReportedAndTheNextIsRelayed() throws IOException {
        String first = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"n\":1}}";
        String big = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\""
                + "y".repeat(5000) + "\"}]}}";
        String next = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"n\":2}}";
        int bigSize = big.getBytes(UTF_8).length;
        Path serverOutput = tempDir.resolve("server-output.jsonl");
        Files.writeString(serverOutput, first + "\n" + big + "\n" + next + "\n", UTF_8);
        Run run = start("stdio", "--max-line-length", "1KiB", "--", "/bin/cat", serverOutput.toString());

        assertThat(run.awaitExit()).isZero();
        assertThat(run.stdout()).isEqualTo(first + "\n" + next + "\n");
        assertThat(run.stderrLines()).singleElement().satisfies(line -> assertThat(line)
                .contains("s->c")
                .contains(Integer.toString(bigSize))
                .contains("1024"));
    }

    // ---------------------------------------------------------------- demo

    @Test
    void demoRunsToCompletionAndShowsWhatWasInjectedBesideWhatTheClientExperienced() {
        Run run = start("demo", "--seed", "7");
        run.closeStdin();

        assertThat(run.awaitExit()).isZero();
        assertThat(run.stdout())
                .contains("demo: chaos profile dev/mcpchaos/server/demo-rules.yaml with seed 7 (given)")
                .contains("demo: initialized: mcp-chaos-demo, protocol 2025-11-25")
                .contains("demo: tools: echo, add, slow, large")
                .contains("demo: echo -> hello through mcp-chaos")
                .contains("demo:   injected error (rule echo-goes-down)")
                .contains("demo: echo again -> JSON-RPC error -32603: echo is down (injected)")
                .contains("demo: add 2 + 3 -> no answer within 2000 ms (timed out)")
                .contains("demo: add 2 + 3 again -> 5")
                .contains("demo: slow 600 ms with progress -> tool error result: slow broke halfway (injected)")
                .contains("demo:   the client could not parse a line:")
                .contains("demo: large again -> 100000 characters")
                .contains("demo: ping -> no answer within 2000 ms (timed out)")
                .contains("demo: ping again -> ok")
                .contains("the server exited with code 0")
                .contains("demo: repeat this run: mcp-chaos demo --seed 7");
        assertThat(run.stderr()).contains("seed 7 (given)");
        // The command line's own logging set-up (StderrLoggingProvider): its layout, and no note from SLF4J.
        assertThat(run.stderrLines()).anyMatch(line -> line.matches(
                "\\d{2}:\\d{2}:\\d{2}\\.\\d{3} mcp-chaos INFO  .*seed 7 \\(given\\).*"));
        assertThat(run.stderr()).doesNotContain("SLF4J");
        assertThat(run.stderr()).contains("traffic:");
        assertThat(run.stderrLines()).filteredOn(l -> l.contains("traffic: c->s")).isNotEmpty();
        assertThat(run.stderrLines()).filteredOn(l -> l.contains("traffic: s->c")).isNotEmpty();
    }

    @Test
    void demoWithoutASeedSaysItsSeedWasGeneratedAndHowToRepeatTheRun() {
        Run run = start("demo");
        run.closeStdin();

        assertThat(run.awaitExit()).isZero();
        Matcher announced = Pattern.compile("demo: chaos profile dev/mcpchaos/server/demo-rules\\.yaml with seed "
                + "(\\d+) \\(generated\\)\n").matcher(run.stdout());
        assertThat(announced.find()).as("stdout:%n%s", run.stdout()).isTrue();
        String seed = announced.group(1);
        assertThat(run.stdout()).contains("demo: repeat this run: mcp-chaos demo --seed " + seed + " ");
        assertThat(run.stderr()).contains("seed " + seed + " (generated; give it as the seed to repeat this run)")
                .doesNotContain("(given)");
    }
}
