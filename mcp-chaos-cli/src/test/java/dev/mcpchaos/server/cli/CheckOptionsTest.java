package dev.mcpchaos.server.cli;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --check-fail-on error|warning} on {@code stdio}, {@code http} and {@code replay}: after a
 * real session the exit code is {@link CheckOptions#CHECK_FAILED} when a check of that severity
 * fired, and the session's own otherwise (the server's, 0, the replay's); without the option the
 * proxy stays transparent. Each misbehaving session has its clean twin. Also: {@code --check} turns
 * the journal on for the client.* checks, unless {@code --journal} says otherwise.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CheckOptionsTest {

    static final String INIT = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
            + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    static final String INIT_OK = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\","
            + "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}";
    static final String INITIALIZED = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    static final String LIST = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";
    static final String LIST_OK = "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"echo\","
            + "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"m\":{\"type\":\"string\"}}}}]}}";
    /** A tool name with a space and a '!': tools.name-format, a warning. */
    static final String LIST_WARNS = LIST_OK.replace("}]}}", "},{\"name\":\"send mail!\",\"inputSchema\":"
            + "{\"type\":\"object\"}}]}}");
    static final String CALL = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
            + "\"arguments\":{\"m\":\"hi\"}}}";
    static final String CALL_OK = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\","
            + "\"text\":\"hi\"}]}}";
    /** An answer with both result and error: jsonrpc.result-and-error, an error. */
    static final String CALL_BROKEN = CALL_OK.replace("}]}}", "}]},\"error\":{\"code\":-32603,\"message\":\"x\"}}");
    static final String BANNER = "Server listening on stdio"; // stdio.stdout-not-json, an error

    @TempDir
    Path dir;

    private final PrintStream savedOut = System.out;
    private final PrintStream savedErr = System.err;

    @AfterEach
    void restoreStreams() {
        System.setOut(savedOut);
        System.setErr(savedErr);
    }

    /** A run of a command: its exit code, what it printed on stderr, and the lines its client got. */
    private record Run(int code, String err, List<String> out) {
    }

    // ---- stdio ----

    /** A sh server printing {@code banner} (if any) before its answers, then exiting with {@code exit} when its input ends. */
    private static List<String> server(String banner, String list, String call, int exit) {
        String script = "read l; " + (banner == null ? "" : "printf '%s\\n' '" + banner + "'; ")
                + "printf '%s\\n' '" + INIT_OK + "'; read l; read l; printf '%s\\n' '" + list + "'; read l; "
                + "printf '%s\\n' '" + call + "'; while read l; do :; done; exit " + exit;
        return List.of("sh", "-c", script);
    }

    /** The stdio command in this JVM, with a client that waits for each answer and then closes its input. */
    private Run stdio(List<String> server, String... options) throws Exception {
        PipedOutputStream toProxy = new PipedOutputStream();
        PipedInputStream clientIn = new PipedInputStream(toProxy, 1 << 16);
        PipedInputStream fromProxy = new PipedInputStream(1 << 16);
        PipedOutputStream clientOut = new PipedOutputStream(fromProxy);
        BlockingQueue<String> lines = reader(fromProxy);
        List<String> args = new ArrayList<>(List.of("stdio", "--quiet"));
        args.addAll(List.of(options));
        args.add("--");
        args.addAll(server);
        ByteArrayOutputStream err = captureStderr();
        CompletableFuture<Integer> code = CompletableFuture.supplyAsync(() ->
                execute(new StdioCommand(clientIn, clientOut), args));
        send(toProxy, INIT);
        List<String> got = new ArrayList<>();
        got.add(await(lines, "\"id\":1,"));
        send(toProxy, INITIALIZED);
        send(toProxy, LIST);
        got.add(await(lines, "\"id\":2,"));
        send(toProxy, CALL);
        got.add(await(lines, "\"id\":3,"));
        toProxy.close();
        int exit = code.get(60, TimeUnit.SECONDS);
        System.setErr(savedErr);
        return new Run(exit, err.toString(StandardCharsets.UTF_8), got);
    }

    @Test
    void stdioExitsWithTheCheckCodeOnAnErrorAndTheServersOnItsCleanTwin() throws Exception {
        Run banner = stdio(server(BANNER, LIST_OK, CALL_OK, 0), "--check-fail-on", "error");
        assertThat(banner.out()).as("the client's session is relayed as ever").containsExactly(INIT_OK, LIST_OK,
                CALL_OK);
        assertThat(banner.err()).contains("check error stdio.stdout-not-json: 1 violation")
                .contains("mcp-chaos: --check-fail-on error: 1 error found; exit code 80 (the session's own: 0)");
        assertThat(banner.code()).isEqualTo(80).isEqualTo(CheckOptions.CHECK_FAILED);

        Run clean = stdio(server(null, LIST_OK, CALL_OK, 0), "--check-fail-on", "error");
        assertThat(clean.err()).contains("check: 7 messages, 0 errors, 0 warnings").doesNotContain("--check-fail-on");
        assertThat(clean.code()).isZero();
    }

    @Test
    void stdioWithoutTheOptionKeepsTheServersCodeWhateverTheChecksFound() throws Exception {
        Run banner = stdio(server(BANNER, LIST_OK, CALL_OK, 0), "--check");
        assertThat(banner.err()).contains("check error stdio.stdout-not-json: 1 violation");
        assertThat(banner.code()).as("off by default: the proxy stays transparent").isZero();

        Run exits3 = stdio(server(null, LIST_OK, CALL_OK, 3), "--check-fail-on", "error");
        assertThat(exits3.code()).as("a clean session keeps the server's code").isEqualTo(3);

        Run both = stdio(server(BANNER, LIST_OK, CALL_OK, 3), "--check-fail-on", "error");
        assertThat(both.code()).isEqualTo(80);
        assertThat(both.err()).contains("exit code 80 (the session's own: 3)");
    }

    @Test
    void stdioFailsOnAWarningOnlyWhenAskedTo() throws Exception {
        Run atError = stdio(server(null, LIST_WARNS, CALL_OK, 0), "--check-fail-on", "error");
        assertThat(atError.err()).contains("check warning tools.name-format: 1 violation");
        assertThat(atError.code()).isZero();

        Run atWarning = stdio(server(null, LIST_WARNS, CALL_OK, 0), "--check-fail-on", "WARNING");
        assertThat(atWarning.err()).contains("mcp-chaos: --check-fail-on warning: 0 errors, 1 warning found; "
                + "exit code 80 (the session's own: 0)");
        assertThat(atWarning.code()).isEqualTo(80);

        Run clean = stdio(server(null, LIST_OK, CALL_OK, 0), "--check-fail-on", "warning");
        assertThat(clean.code()).isZero();
    }

    @Test
    void checkFailOnImpliesCheckAndRefusesOtherSeverities() throws Exception {
        Run implied = stdio(server(BANNER, LIST_OK, CALL_OK, 0), "--check-fail-on", "error");
        assertThat(implied.err()).as("the summary of --check").contains("check: 8 messages, 1 error, 0 warnings");

        ByteArrayOutputStream err = captureStderr();
        StringWriter picocliErr = new StringWriter();
        CommandLine cli = commandLine(new StdioCommand(new ByteArrayInputStream(new byte[0]),
                new ByteArrayOutputStream()));
        cli.setErr(new PrintWriter(picocliErr, true));
        int code = Main.execute(cli, "stdio", "--quiet", "--check-fail-on", "info", "--", "cat");
        System.setErr(savedErr);
        assertThat(code).isEqualTo(2);
        assertThat(picocliErr.toString() + err.toString(StandardCharsets.UTF_8))
                .contains("mcp-chaos: --check-fail-on: 'info' (expected: error or warning)");
    }

    // ---- http ----

    /** An upstream that answers initialize, tools/list and tools/call with {@code call}, as JSON. */
    private static HttpServer upstream(String call) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/mcp", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String answer = body.contains("\"initialize\"") ? INIT_OK : body.contains("tools/list") ? LIST_OK
                    : body.contains("tools/call") ? call : null;
            if (answer == null) {
                exchange.sendResponseHeaders(202, -1);
            } else {
                byte[] bytes = answer.getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("Content-Type", "application/json");
                exchange.sendResponseHeaders(200, bytes.length);
                exchange.getResponseBody().write(bytes);
            }
            exchange.close();
        });
        server.start();
        return server;
    }

    private Run http(String call, String... options) throws Exception {
        HttpServer upstream = upstream(call);
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        HttpCommand command = new HttpCommand();
        List<String> args = new ArrayList<>(List.of("http", "--quiet", "--control", "off", "--listen",
                "127.0.0.1:" + port, "--upstream", "http://127.0.0.1:" + upstream.getAddress().getPort() + "/mcp"));
        args.addAll(List.of(options));
        ByteArrayOutputStream err = captureStderr();
        CompletableFuture<Integer> code = CompletableFuture.supplyAsync(() -> execute(command, args));
        try {
            URI mcp = URI.create("http://127.0.0.1:" + port + "/mcp");
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
            List<String> got = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true) { // until the proxy listens
                try {
                    got.add(post(client, mcp, INIT));
                    break;
                } catch (java.net.ConnectException e) {
                    assertThat(System.nanoTime()).as("the proxy listens within 30 s").isLessThan(deadline);
                    assertThat(code).as("the command is still running").isNotDone();
                    Thread.sleep(50);
                }
            }
            post(client, mcp, INITIALIZED);
            got.add(post(client, mcp, LIST));
            got.add(post(client, mcp, CALL));
            command.stop.countDown(); // as SIGINT does
            int exit = code.get(60, TimeUnit.SECONDS);
            System.setErr(savedErr);
            return new Run(exit, err.toString(StandardCharsets.UTF_8), got);
        } finally {
            command.stop.countDown();
            upstream.stop(0);
        }
    }

    private static String post(HttpClient client, URI mcp, String json) throws Exception {
        HttpResponse<String> response = client.send(HttpRequest.newBuilder(mcp).timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(json + " -> " + response.body()).isIn(200, 202);
        return response.body();
    }

    @Test
    void httpExitsWithTheCheckCodeOnAnErrorAndZeroOnItsCleanTwin() throws Exception {
        Run broken = http(CALL_BROKEN, "--check-fail-on", "error");
        assertThat(broken.out()).containsExactly(INIT_OK, LIST_OK, CALL_BROKEN);
        assertThat(broken.err()).contains("check error jsonrpc.result-and-error: 1 violation")
                .contains("mcp-chaos: --check-fail-on error: 1 error found; exit code 80 (the session's own: 0)");
        assertThat(broken.code()).isEqualTo(80);

        Run clean = http(CALL_OK, "--check-fail-on", "error");
        assertThat(clean.out()).containsExactly(INIT_OK, LIST_OK, CALL_OK);
        assertThat(clean.err()).contains("0 errors").doesNotContain("--check-fail-on");
        assertThat(clean.code()).isZero();

        Run transparent = http(CALL_BROKEN, "--check");
        assertThat(transparent.err()).contains("check error jsonrpc.result-and-error: 1 violation");
        assertThat(transparent.code()).as("without --check-fail-on").isZero();
    }

    // ---- replay ----

    private static String cassette(String listAnswer) {
        return String.join("\n",
                "{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":1,\"transport\":\"stdio\","
                        + "\"recordedAt\":\"2026-12-02T06:00:00Z\",\"recorder\":\"test\"}",
                "{\"type\":\"message\",\"seq\":0,\"t\":0,\"dir\":\"c2s\",\"session\":\"stdio\",\"message\":" + INIT + "}",
                "{\"type\":\"message\",\"seq\":1,\"t\":1,\"dir\":\"s2c\",\"session\":\"stdio\",\"message\":" + INIT_OK + "}",
                "{\"type\":\"message\",\"seq\":2,\"t\":2,\"dir\":\"c2s\",\"session\":\"stdio\",\"message\":" + LIST + "}",
                "{\"type\":\"message\",\"seq\":3,\"t\":3,\"dir\":\"s2c\",\"session\":\"stdio\",\"message\":" + listAnswer
                        + "}") + "\n";
    }

    private Run replay(String cassette, String... options) throws Exception {
        Path file = dir.resolve("c" + System.nanoTime() + ".ndjson");
        Files.writeString(file, cassette);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        String input = INIT + "\n" + INITIALIZED + "\n" + LIST + "\n";
        List<String> args = new ArrayList<>(List.of("replay", file.toString(), "--quiet"));
        args.addAll(List.of(options));
        ByteArrayOutputStream err = captureStderr();
        int code = execute(new ReplayCommand(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)), out),
                args);
        System.setErr(savedErr);
        return new Run(code, err.toString(StandardCharsets.UTF_8), out.toString(StandardCharsets.UTF_8).lines().toList());
    }

    @Test
    void replayExitsWithTheCheckCodeOnAnErrorAndItsOwnOnItsCleanTwin() throws Exception {
        String badSchema = LIST_OK.replace("{\"type\":\"object\",\"properties\"", "{\"type\":\"array\",\"properties\"");
        Run broken = replay(cassette(badSchema), "--check-fail-on", "error");
        assertThat(broken.out()).containsExactly(INIT_OK, badSchema);
        assertThat(broken.err()).contains("check error tools.input-schema: 1 violation")
                .contains("exit code 80 (the session's own: 0)");
        assertThat(broken.code()).isEqualTo(80);

        Run clean = replay(cassette(LIST_OK), "--check-fail-on", "error");
        assertThat(clean.out()).containsExactly(INIT_OK, LIST_OK);
        assertThat(clean.code()).isZero();

        String noList = cassette(LIST_OK).lines().limit(3).map(l -> l + "\n").reduce("", String::concat);
        Run unmatched = replay(noList, "--check-fail-on", "error", "--fail-on-unmatched");
        assertThat(unmatched.out()).hasSize(2);
        assertThat(unmatched.out().get(1)).contains("\"code\":-32601");
        assertThat(unmatched.code()).as("replay's own code, no check having fired").isEqualTo(1);
        Run transparent = replay(cassette(badSchema), "--check");
        assertThat(transparent.code()).isZero();
    }

    // ---- --check turns the journal on ----

    /** The options of a stdio command line, parsed with the environment {@code env}. */
    private static ChaosOptions parsed(Map<String, String> env, String... args) {
        StdioCommand command = new StdioCommand();
        CommandLine cli = new CommandLine(command);
        cli.setDefaultValueProvider(new EnvironmentDefaults(env));
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--", "cat"));
        cli.parseArgs(all.toArray(String[]::new));
        return command.chaos;
    }

    /** What deciding the journal's capacity printed; the capacity goes in {@code got[0]}. */
    private static String journalLine(ChaosOptions options, int[] got) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        got[0] = options.journalCapacity(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void checkTurnsTheJournalOnUnlessTheJournalOptionSaysOtherwise() {
        String said = "mcp-chaos: --check turns the journal on (10000 entries) for the client.* checks; --journal off "
                + "to do without\n";
        int[] capacity = new int[1];
        assertThat(journalLine(parsed(Map.of(), "--check"), capacity)).isEqualTo(said);
        assertThat(capacity[0]).isEqualTo(dev.mcpchaos.rules.journal.JournalRing.DEFAULT_CAPACITY);
        assertThat(journalLine(parsed(Map.of(), "--check-fail-on", "error"), capacity)).isEqualTo(said);
        assertThat(capacity[0]).isEqualTo(10_000);
        assertThat(journalLine(parsed(Map.of(), "--check-report", "r.json"), capacity)).isEqualTo(said);
        assertThat(capacity[0]).isEqualTo(10_000);

        assertThat(journalLine(parsed(Map.of(), "--check", "--journal", "off"), capacity)).isEmpty();
        assertThat(capacity[0]).as("--journal off, given").isZero();
        assertThat(journalLine(parsed(Map.of("MCP_CHAOS_JOURNAL", "off"), "--check"), capacity)).isEmpty();
        assertThat(capacity[0]).as("off from the environment, given too").isZero();
        assertThat(journalLine(parsed(Map.of(), "--check", "--journal", "50"), capacity)).isEmpty();
        assertThat(capacity[0]).isEqualTo(50);
        assertThat(journalLine(parsed(Map.of()), capacity)).isEmpty();
        assertThat(capacity[0]).as("without --check, off as before").isZero();
        assertThat(journalLine(parsed(Map.of(), "--journal", "7"), capacity)).isEmpty();
        assertThat(capacity[0]).isEqualTo(7);
    }

    /**
     * The case of issue #33: a client that resends a tools/call whose answer a fault dropped. With
     * --check alone the client.* checks now see it; with --journal off they cannot (as before).
     */
    @Test
    void aNaiveResendIsReportedWithCheckAloneAndNotWithTheJournalOff() throws Exception {
        Path rules = Files.writeString(dir.resolve("drop.yaml"), """
                rules:
                  - name: lose-answer
                    match: {kind: response, method: tools/call}
                    times: 1
                    fault: {type: drop}
                """);
        String script = "read l; printf '%s\\n' '" + INIT_OK + "'; read l; read l; printf '%s\\n' '" + LIST_OK + "'; "
                + "while read l; do case \"$l\" in *'\"id\":3'*) printf '%s\\n' '" + CALL_OK + "';; *'\"id\":4'*) "
                + "printf '%s\\n' '" + CALL_OK.replace("\"id\":3", "\"id\":4") + "';; esac; done";
        Run on = resend(List.of("sh", "-c", script), "--check", "--rules", rules.toString());
        assertThat(on.err()).contains("mcp-chaos: --check turns the journal on (10000 entries)")
                .contains("check warning client.duplicate-call: 1 violation");

        Run off = resend(List.of("sh", "-c", script), "--check", "--journal", "off", "--rules", rules.toString());
        assertThat(off.err()).doesNotContain("turns the journal on").doesNotContain("client.duplicate-call: 1");
    }

    /** A session whose call (id 3) gets no answer (a rule drops it): after a while the client sends it again as id 4. */
    private Run resend(List<String> server, String... options) throws Exception {
        PipedOutputStream toProxy = new PipedOutputStream();
        PipedInputStream clientIn = new PipedInputStream(toProxy, 1 << 16);
        PipedInputStream fromProxy = new PipedInputStream(1 << 16);
        PipedOutputStream clientOut = new PipedOutputStream(fromProxy);
        BlockingQueue<String> lines = reader(fromProxy);
        List<String> args = new ArrayList<>(List.of("stdio", "--quiet", "--no-watch"));
        args.addAll(List.of(options));
        args.add("--");
        args.addAll(server);
        ByteArrayOutputStream err = captureStderr();
        CompletableFuture<Integer> code = CompletableFuture.supplyAsync(() ->
                execute(new StdioCommand(clientIn, clientOut), args));
        send(toProxy, INIT);
        await(lines, "\"id\":1,");
        send(toProxy, INITIALIZED);
        send(toProxy, LIST);
        await(lines, "\"id\":2,");
        send(toProxy, CALL);
        assertThat(lines.poll(500, TimeUnit.MILLISECONDS)).as("the answer the rule dropped").isNull();
        send(toProxy, CALL.replace("\"id\":3", "\"id\":4")); // the naive resend: same tool, same arguments
        await(lines, "\"id\":4,");
        toProxy.close();
        int exit = code.get(60, TimeUnit.SECONDS);
        System.setErr(savedErr);
        assertThat(exit).isZero();
        return new Run(exit, err.toString(StandardCharsets.UTF_8), List.of());
    }

    // ---- helpers ----

    /** Picocli with only {@code command}, as Main builds it, with an empty environment. */
    private static CommandLine commandLine(Object command) {
        CommandLine cli = new CommandLine(new Main());
        cli.addSubcommand(command);
        cli.setDefaultValueProvider(new EnvironmentDefaults(new HashMap<>()));
        return cli;
    }

    private static int execute(Object command, List<String> args) {
        return Main.execute(commandLine(command), args.toArray(String[]::new));
    }

    /** Points System.err at a buffer (the commands print their summary there) and returns it. */
    private static ByteArrayOutputStream captureStderr() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setErr(new PrintStream(new TeeStream(bytes, System.err), true, StandardCharsets.UTF_8));
        return bytes;
    }

    /** Writes to both: the test's log keeps what the command said. */
    private static final class TeeStream extends OutputStream {
        private final OutputStream a;
        private final OutputStream b;

        TeeStream(OutputStream a, OutputStream b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public synchronized void write(int c) throws IOException {
            a.write(c);
            b.write(c);
        }

        @Override
        public synchronized void write(byte[] bytes, int off, int len) throws IOException {
            a.write(bytes, off, len);
            b.write(bytes, off, len);
        }
    }

    private static BlockingQueue<String> reader(InputStream fromProxy) {
        BlockingQueue<String> lines = new ArrayBlockingQueue<>(1000);
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(fromProxy, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // the proxy closed its output
            }
        }, "client-reader");
        reader.setDaemon(true);
        reader.start();
        return lines;
    }

    private static void send(OutputStream out, String line) throws IOException {
        out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    /** The next line with {@code marker}: the client reads the server's answer before it goes on. */
    private static String await(BlockingQueue<String> lines, String marker) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < end) {
            String line = lines.poll(100, TimeUnit.MILLISECONDS);
            if (line != null && line.contains(marker)) {
                return line;
            }
        }
        throw new AssertionError("no line with " + marker + " from the proxy in 30 s");
    }
}
