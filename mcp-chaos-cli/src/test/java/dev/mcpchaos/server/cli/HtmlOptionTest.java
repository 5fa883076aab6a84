package dev.mcpchaos.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --html FILE} on {@code replay} and {@code http} (on {@code stdio}: {@link ReportCommandTest}):
 * at the session's end, one HTML file with the session's journal, its faults and the checks'
 * report; a file that cannot be written is said on stderr and changes no exit code, its twin is
 * written.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HtmlOptionTest {

    private static final Pattern DATA = Pattern.compile(
            "<script id=\"mcp-chaos-data\" type=\"application/json\">(.*?)</script>", Pattern.DOTALL);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String INIT_OK = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\","
            + "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}";
    private static final String LIST_OK = "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"add\","
            + "\"inputSchema\":{\"type\":\"object\"}}]}}";
    private static final String RULES = """
            rules:
              - name: list-fails
                match: {kind: request, method: tools/list}
                fault: {type: error, code: -32050, message: "injected by HtmlOptionTest"}
            """;

    @TempDir
    Path dir;

    private final PrintStream savedErr = System.err;

    @AfterEach
    void restoreStderr() {
        System.setErr(savedErr);
    }

    private static JsonNode data(Path html) throws Exception {
        Matcher m = DATA.matcher(Files.readString(html));
        assertThat(m.find()).as("the data block of " + html).isTrue();
        return JSON.readTree(m.group(1));
    }

    private static int execute(Object command, List<String> args) {
        CommandLine cli = new CommandLine(new Main());
        cli.addSubcommand(command);
        cli.setDefaultValueProvider(new EnvironmentDefaults(new HashMap<>()));
        return Main.execute(cli, args.toArray(String[]::new));
    }

    private ByteArrayOutputStream captureStderr() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setErr(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes;
    }

    /** The faults and the session in the file: the journal's messages, the rule's one fault, the checks. */
    private static void assertTheSession(JsonNode data, String transport) {
        assertThat(data.path("title").asText()).isEqualTo("mcp-chaos " + transport + " --check");
        JsonNode entries = data.path("journal").path("entries");
        List<String> seen = new ArrayList<>();
        entries.forEach(e -> seen.add(e.path("kind").asText() + " " + e.path("method").asText()
                + e.path("faults").findValuesAsText("rule")));
        assertThat(seen).contains("request initialize[]", "request tools/list[list-fails]");
        assertThat(data.path("events")).hasSize(1);
        assertThat(data.path("events").get(0).path("rule").asText()).isEqualTo("list-fails");
        assertThat(data.path("check").path("checks").size()).isPositive();
    }

    private static String cassette() {
        String init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
        return String.join("\n",
                "{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":1,\"transport\":\"stdio\","
                        + "\"recordedAt\":\"2026-12-02T06:00:00Z\",\"recorder\":\"test\"}",
                "{\"type\":\"message\",\"seq\":0,\"t\":0,\"dir\":\"c2s\",\"session\":\"stdio\",\"message\":" + init + "}",
                "{\"type\":\"message\",\"seq\":1,\"t\":1,\"dir\":\"s2c\",\"session\":\"stdio\",\"message\":" + INIT_OK + "}")
                + "\n";
    }

    private int replay(Path html) throws Exception {
        Path file = dir.resolve("c.ndjson");
        Files.writeString(file, cassette());
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, RULES);
        String input = ReportSession.INIT + "\n" + ReportSession.INITIALIZED + "\n" + ReportSession.LIST + "\n";
        return execute(new ReplayCommand(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)),
                new ByteArrayOutputStream()), List.of("replay", file.toString(), "--quiet", "--rules", rules.toString(),
                "--html", html.toString()));
    }

    @Test
    void replayWritesTheSessionAtItsEnd() throws Exception {
        Path html = dir.resolve("replay.html");
        ByteArrayOutputStream err = captureStderr();
        int code = replay(html);
        System.setErr(savedErr);
        assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isZero();
        assertTheSession(data(html), "stdio");
    }

    @Test
    void aFileThatCannotBeWrittenIsSaidAndChangesNoExitCode() throws Exception {
        Path html = dir.resolve("no-such-dir").resolve("replay.html");
        ByteArrayOutputStream err = captureStderr();
        int code = replay(html);
        System.setErr(savedErr);
        assertThat(code).isZero();
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("mcp-chaos: --html: '" + html
                + "' cannot be written: ");
        assertThat(html).doesNotExist();
    }

    @Test
    void httpWritesTheSessionAtItsEnd() throws Exception {
        HttpServer upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        upstream.createContext("/mcp", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String answer = body.contains("\"initialize\"") ? INIT_OK : body.contains("tools/list") ? LIST_OK : null;
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
        upstream.start();
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, RULES);
        Path html = dir.resolve("http.html");
        HttpCommand command = new HttpCommand();
        List<String> args = List.of("http", "--quiet", "--control", "off", "--listen", "127.0.0.1:" + port,
                "--upstream", "http://127.0.0.1:" + upstream.getAddress().getPort() + "/mcp", "--rules",
                rules.toString(), "--html", html.toString());
        ByteArrayOutputStream err = captureStderr();
        CompletableFuture<Integer> code = CompletableFuture.supplyAsync(() -> execute(command, args));
        try {
            URI mcp = URI.create("http://127.0.0.1:" + port + "/mcp");
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true) { // until the proxy listens
                try {
                    post(client, mcp, ReportSession.INIT);
                    break;
                } catch (java.net.ConnectException e) {
                    assertThat(System.nanoTime()).as("the proxy listens within 30 s").isLessThan(deadline);
                    assertThat(code).as("the command is still running").isNotDone();
                    Thread.sleep(50);
                }
            }
            post(client, mcp, ReportSession.INITIALIZED);
            assertThat(post(client, mcp, ReportSession.LIST)).contains("-32050");
            command.stop.countDown(); // as SIGINT does
            assertThat(code.get(60, TimeUnit.SECONDS)).as(err.toString(StandardCharsets.UTF_8)).isZero();
        } finally {
            command.stop.countDown();
            upstream.stop(0);
            System.setErr(savedErr);
        }
        assertTheSession(data(html), "http");
    }

    private static String post(HttpClient client, URI mcp, String json) throws Exception {
        HttpResponse<String> response = client.send(HttpRequest.newBuilder(mcp).timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(json + " -> " + response.body()).isIn(200, 202);
        return response.body();
    }
}
