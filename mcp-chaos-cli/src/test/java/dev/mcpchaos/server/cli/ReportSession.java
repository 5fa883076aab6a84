package dev.mcpchaos.server.cli;

import dev.mcpchaos.server.it.TestPeers;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.net.InetAddress;
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
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import picocli.CommandLine;

/**
 * A real chaos session for the report's tests: {@code mcp-chaos stdio} (in this JVM) in front of
 * the built-in demo server (its own JVM), with a rule that answers {@code tools/call add} with an
 * error, {@code --events}, {@code --record}, {@code --check-report} and {@code --html}, and the
 * journal taken from {@code GET /journal} before the client leaves. The files it leaves are what
 * {@code mcp-chaos report} reads.
 *
 * @param events  the event log ({@code --events})
 * @param journal the journal as {@code GET /journal} served it, at the session's last answer
 * @param cassette the recording ({@code --record})
 * @param check   the checks' report ({@code --check-report})
 * @param html    the report {@code --html} wrote at the end of the session
 * @param code    the command's exit code
 */
record ReportSession(Path events, Path journal, Path cassette, Path check, Path html, int code) {

    /** The rule that answers {@code tools/call add} with an error. */
    static final String RULE = "add-fails";

    static final String INIT = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
            + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"report-test\",\"version\":\"1\"}}}";
    static final String INITIALIZED = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    static final String LIST = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";
    static final String ECHO = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
            + "\"arguments\":{\"text\":\"hi\"}}}";
    static final String ADD = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"add\","
            + "\"arguments\":{\"a\":2,\"b\":3}}}";
    static final String ADD_AGAIN = ADD.replace("\"id\":4", "\"id\":5");

    /** Runs the session, its files in {@code dir}. */
    static ReportSession run(Path dir) throws Exception {
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, """
                rules:
                  - name: %s
                    match: {kind: request, method: tools/call, tool: add}
                    fault: {type: error, code: -32050, message: "add unavailable (injected by the report test)"}
                """.formatted(RULE));
        ReportSession files = new ReportSession(dir.resolve("events.ndjson"), dir.resolve("journal.json"),
                dir.resolve("session.cassette.ndjson"), dir.resolve("check.json"), dir.resolve("session.html"), -1);
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        List<String> args = new ArrayList<>(List.of("stdio", "--quiet", "--rules", rules.toString(), "--seed", "38",
                "--events", files.events().toString(), "--record", files.cassette().toString(),
                "--check-report", files.check().toString(), "--html", files.html().toString(),
                "--control", "127.0.0.1:" + port, "--"));
        args.addAll(List.of(TestPeers.java().toString(), "-cp", System.getProperty("java.class.path"),
                Main.class.getName(), "demo-server"));

        PipedOutputStream toProxy = new PipedOutputStream();
        PipedInputStream clientIn = new PipedInputStream(toProxy, 1 << 16);
        PipedInputStream fromProxy = new PipedInputStream(1 << 16);
        PipedOutputStream clientOut = new PipedOutputStream(fromProxy);
        BlockingQueue<String> lines = reader(fromProxy);
        CommandLine cli = new CommandLine(new Main());
        cli.addSubcommand(new StdioCommand(clientIn, clientOut));
        cli.setDefaultValueProvider(new EnvironmentDefaults(new HashMap<>()));
        CompletableFuture<Integer> code = CompletableFuture.supplyAsync(() ->
                Main.execute(cli, args.toArray(String[]::new)));
        send(toProxy, INIT);
        await(lines, "\"id\":1,");
        send(toProxy, INITIALIZED);
        send(toProxy, LIST);
        await(lines, "\"id\":2,");
        send(toProxy, ECHO);
        await(lines, "\"id\":3,");
        send(toProxy, ADD);
        await(lines, "-32050");
        send(toProxy, ADD_AGAIN);
        await(lines, "-32050");
        HttpResponse<String> journal = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/journal")).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (journal.statusCode() != 200) {
            throw new AssertionError("GET /journal: " + journal.statusCode() + " " + journal.body());
        }
        Files.writeString(files.journal(), journal.body());
        toProxy.close(); // the client leaves: the server's input ends, it exits, and the session with it
        return new ReportSession(files.events(), files.journal(), files.cassette(), files.check(), files.html(),
                code.get(60, TimeUnit.SECONDS));
    }

    private static BlockingQueue<String> reader(PipedInputStream fromProxy) {
        BlockingQueue<String> lines = new ArrayBlockingQueue<>(1000);
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(fromProxy, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // the proxy closed its output
            }
        }, "report-client-reader");
        reader.setDaemon(true);
        reader.start();
        return lines;
    }

    private static void send(OutputStream out, String line) throws IOException {
        out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    /** The next line with {@code marker}: the client reads each answer before it goes on. */
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
