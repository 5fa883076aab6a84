package dev.mcpchaos.server.check;

import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.cli.Main;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tiny misbehaving MCP servers, each a {@code sh} script that prints fixed lines as the client's
 * lines come, each breaking one check, behind the real stdio proxy with {@code check(referee)} and
 * a recording: the check fires live with its id, the clean twin fires nothing, and the cassette of
 * the same session checked offline gives the same violations (but {@code stdio.unterminated-line},
 * which a cassette cannot show).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MisbehavingStdioServersTest {

    static final String INIT = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
            + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    static final String INIT_OK = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\","
            + "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}";
    static final String INITIALIZED = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    static final String LIST = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";
    static final String LIST_OK = "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"echo\","
            + "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"m\":{\"type\":\"string\"}}}}]}}";
    static final String CALL = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
            + "\"arguments\":{\"m\":\"hi\"}}}";
    static final String CALL_OK = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\","
            + "\"text\":\"hi\"}]}}";

    /**
     * A server and what it breaks.
     *
     * @param name       the scenario
     * @param fires      the check ids expected (empty: the clean twin)
     * @param onInit     what the server prints for initialize, then for initialized, tools/list, tools/call
     * @param callTool   the tool the client calls
     * @param awaitCall  whether the client waits for the call's answer
     */
    record Server(String name, List<String> fires, List<String> onInit, List<String> onInitialized,
                  List<String> onList, List<String> onCall, String callTool, boolean awaitCall) {
        @Override
        public String toString() {
            return name;
        }

        Server with(String newName, List<String> newFires) {
            return new Server(newName, newFires, onInit, onInitialized, onList, onCall, callTool, awaitCall);
        }
    }

    private static Server clean() {
        return new Server("clean", List.of(), List.of(INIT_OK), List.of(), List.of(LIST_OK), List.of(CALL_OK), "echo",
                true);
    }

    static Stream<Server> servers() {
        Server c = clean();
        String badList = "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[%s]}}";
        return Stream.of(
                c,
                new Server("banner", List.of("stdio.stdout-not-json"), List.of("Server listening on stdio", INIT_OK),
                        c.onInitialized(), c.onList(), c.onCall(), "echo", true),
                new Server("unterminated", List.of("stdio.unterminated-line"), c.onInit(), c.onInitialized(),
                        c.onList(), List.of("~" + CALL_OK), "echo", false), // a reader of lines sees it only at the end
                new Server("unknown-id", List.of("jsonrpc.response-unknown-id"), c.onInit(), c.onInitialized(),
                        c.onList(), List.of(CALL_OK.replace("\"id\":3", "\"id\":33"), CALL_OK), "echo", true),
                new Server("unanswered", List.of("jsonrpc.unanswered-request"), c.onInit(), c.onInitialized(),
                        c.onList(), List.of(), "echo", false),
                new Server("result-and-error", List.of("jsonrpc.result-and-error"), c.onInit(), c.onInitialized(),
                        c.onList(), List.of(CALL_OK.replace("}]}}", "}]},\"error\":{\"code\":-32603,\"message\":\"x\"}}")),
                        "echo", true),
                new Server("bad-envelope", List.of("jsonrpc.invalid-envelope"), c.onInit(), c.onInitialized(),
                        c.onList(), List.of(CALL_OK.replace("\"2.0\"", "\"1.0\"")), "echo", true),
                new Server("reserved-code", List.of("jsonrpc.error-code"), c.onInit(), c.onInitialized(), c.onList(),
                        List.of("{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32500,\"message\":\"boom\"}}"), "echo",
                        true),
                // the server's two pings with one id, which the client never answers
                new Server("duplicate-id", List.of("jsonrpc.duplicate-request-id", "jsonrpc.unanswered-request"),
                        c.onInit(), List.of("{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}",
                        "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}"), c.onList(), c.onCall(), "echo", true),
                new Server("early-request", List.of("lifecycle.before-initialize"),
                        List.of("{\"jsonrpc\":\"2.0\",\"id\":\"e\",\"method\":\"tools/list\"}".replace("tools/list",
                                "elicitation/create").replace("}", ",\"params\":{}}"), INIT_OK), c.onInitialized(),
                        c.onList(), c.onCall(), "echo", true).with("early-request", List.of(
                        "lifecycle.before-initialize", "lifecycle.undeclared-capability", "jsonrpc.unanswered-request")),
                new Server("version", List.of("lifecycle.protocol-version", "lifecycle.unsupported-version-accepted"),
                        List.of(INIT_OK.replace("2025-06-18", "1999-12-31")), c.onInitialized(), c.onList(), c.onCall(),
                        "echo", true),
                new Server("no-tools-capability", List.of("lifecycle.undeclared-capability"),
                        List.of(INIT_OK.replace("{\"tools\":{}}", "{}")), c.onInitialized(), c.onList(), c.onCall(),
                        "echo", true),
                new Server("undeclared-notification", List.of("lifecycle.undeclared-capability"), c.onInit(),
                        List.of("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}"), c.onList(),
                        c.onCall(), "echo", true),
                new Server("input-schema", List.of("tools.input-schema"), c.onInit(), c.onInitialized(),
                        List.of(badList.formatted("{\"name\":\"echo\",\"inputSchema\":{\"type\":\"array\"}}")),
                        c.onCall(), "echo", true),
                new Server("output-schema", List.of("tools.output-schema"), c.onInit(), c.onInitialized(),
                        List.of(badList.formatted("{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"},"
                                + "\"outputSchema\":{\"type\":\"object\",\"required\":\"n\"}}")), c.onCall(), "echo",
                        true),
                new Server("duplicate-tool", List.of("tools.duplicate-name"), c.onInit(), c.onInitialized(),
                        List.of(badList.formatted("{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}},"
                                + "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}")), c.onCall(), "echo", true),
                new Server("tool-name", List.of("tools.name-format"), c.onInit(), c.onInitialized(),
                        List.of(badList.formatted("{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}},"
                                + "{\"name\":\"send mail!\",\"inputSchema\":{\"type\":\"object\"}}")), c.onCall(), "echo",
                        true),
                new Server("unknown-tool", List.of("tools.unknown-tool-result"), c.onInit(), c.onInitialized(),
                        c.onList(), c.onCall(), "nope", true),
                new Server("structured-content", List.of("tools.structured-content"), c.onInit(), c.onInitialized(),
                        List.of(badList.formatted("{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"},"
                                + "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}}")),
                        c.onCall(), "echo", true),
                // the server speaks 2025-11-25 (a published revision it may choose), where -32602 is a tool result's
                new Server("error-class", List.of("tools.error-class"), List.of(INIT_OK.replace("2025-06-18",
                        "2025-11-25")), c.onInitialized(), c.onList(), List.of("{\"jsonrpc\":\"2.0\",\"id\":3,"
                        + "\"error\":{\"code\":-32602,\"message\":\"m is too short\"}}"), "echo", true),
                new Server("business-error", List.of("tools.business-error"), c.onInit(), c.onInitialized(),
                        c.onList(), List.of("{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32000,"
                        + "\"message\":\"row 7 is locked\"}}"), "echo", true),
                // the schema wants an integer m, the client sends "hi", and the server says yes anyway
                new Server("invalid-arguments-accepted", List.of("tools.call-arguments",
                        "tools.invalid-arguments-accepted"), c.onInit(), c.onInitialized(),
                        List.of(LIST_OK.replace("\"type\":\"string\"", "\"type\":\"integer\"")), c.onCall(), "echo",
                        true));
    }

    @TempDir
    Path dir;

    /** {@code printf} of each line; one that starts with {@code ~} is printed without its newline. */
    private static String print(List<String> lines) {
        StringBuilder sb = new StringBuilder();
        for (String line : lines) {
            boolean partial = line.startsWith("~");
            String text = partial ? line.substring(1) : line;
            sb.append("printf '").append(partial ? "%s" : "%s\\n").append("' '").append(text).append("'; ");
        }
        return sb.toString();
    }

    private static String script(Server s) {
        return "read l; " + print(s.onInit()) + "read l; " + print(s.onInitialized()) + "read l; " + print(s.onList())
                + "read l; " + print(s.onCall()) + "while read l; do :; done";
    }

    /** Runs the server behind the proxy, with a client that waits for each answer; returns the live report. */
    private Referee.Report converse(Server s, Path cassette) throws Exception {
        Referee referee = new Referee();
        assertThat(converse(script(s), s, cassette, Duration.ofSeconds(5), referee)).isZero();
        return referee.report();
    }

    /** Runs {@code script} as the server of {@code s}'s conversation; returns the proxy's exit code. */
    private int converse(String script, Server s, Path cassette, Duration exitTimeout, Referee referee)
            throws Exception {
        PipedOutputStream toProxy = new PipedOutputStream();
        PipedInputStream clientIn = new PipedInputStream(toProxy, 1 << 16);
        PipedInputStream fromProxy = new PipedInputStream(1 << 16);
        PipedOutputStream clientOut = new PipedOutputStream(fromProxy);
        BlockingQueue<String> lines = new ArrayBlockingQueue<>(1000);
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(fromProxy, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // the proxy closed its output
            }
        });
        reader.setDaemon(true);
        reader.start();
        McpChaosProxy.Running proxy = McpChaosProxy.stdio(List.of("sh", "-c", script))
                .clientInput(clientIn).clientOutput(clientOut).serverErrorOutput(new ByteArrayOutputStream())
                .exitTimeout(exitTimeout).check(referee).record(cassette).start();
        try {
            send(toProxy, INIT);
            await(lines, "\"id\":1,");
            send(toProxy, INITIALIZED);
            send(toProxy, LIST);
            await(lines, "\"id\":2,");
            send(toProxy, CALL.replace("\"echo\"", "\"" + s.callTool() + "\""));
            if (s.awaitCall()) {
                await(lines, "\"id\":3");
            }
            toProxy.close();
            return proxy.exitCode().get(30, TimeUnit.SECONDS);
        } finally {
            proxy.close();
        }
    }

    @Test
    void aServerThatOutlivesItsStdinNeedsSigtermAndIsAnErrorAndOneThatExitsIsNot() throws Exception {
        Server c = clean();
        Referee stubborn = new Referee();
        // exec: the shell becomes a sleep that ignores its input ending, and SIGTERM ends it
        String ignoresEof = script(c).replace("while read l; do :; done", "exec sleep 30");
        assertThat(converse(ignoresEof, c, dir.resolve("stubborn.ndjson"), Duration.ofMillis(300), stubborn))
                .as("128 + SIGTERM").isEqualTo(143);
        assertThat(stubborn.report().firedIds()).containsExactly("stdio.exit-on-stdin-close");
        assertThat(stubborn.report().violations().get(Check.EXIT_ON_STDIN_CLOSE).get(0).detail())
                .contains("the server was still running 0.3s after its stdin closed (the proxy sent SIGTERM");
        assertThat(stubborn.report().failsAt(Severity.ERROR)).isTrue();

        Referee prompt = new Referee(); // twin: the same conversation, a server that exits when its input ends
        assertThat(converse(script(c), c, dir.resolve("prompt.ndjson"), Duration.ofMillis(300), prompt)).isZero();
        assertThat(prompt.report().firedIds()).isEmpty();
    }

    private static void send(PipedOutputStream out, String line) throws IOException {
        out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    /** Waits for a line with {@code marker}: the client reads the server's answer before it goes on. */
    private static void await(BlockingQueue<String> lines, String marker) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < end) {
            String line = lines.poll(100, TimeUnit.MILLISECONDS);
            if (line != null && line.contains(marker)) {
                return;
            }
        }
        throw new AssertionError("no line with " + marker + " from the proxy in 30 s");
    }

    /** What two reports must agree on: which check, which way, which id and method, and why. */
    static List<String> keys(Referee.Report report) {
        List<String> keys = new ArrayList<>();
        for (Violation v : report.all()) {
            if (v.check() != Check.UNTERMINATED_LINE) {
                keys.add(v.check().id() + " " + v.dir() + " " + v.id() + " " + v.method() + " " + v.detail());
            }
        }
        return keys;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("servers")
    void eachServerBreaksItsCheckLiveAndTheCassetteSaysTheSame(Server s) throws Exception {
        Path cassette = dir.resolve(s.name() + ".ndjson");
        Referee.Report live = converse(s, cassette);
        assertThat(live.firedIds()).as(s.name() + ": " + live.all()).containsExactlyInAnyOrderElementsOf(s.fires());
        assertThat(live.messages()).isGreaterThanOrEqualTo(6);

        Referee offline = new Referee();
        CassetteCheck.feed(offline, cassette);
        assertThat(keys(offline.report())).as("the cassette's violations").isEqualTo(keys(live));
        assertThat(offline.report().all()).extracting(Violation::index).isEqualTo(live.all().stream()
                .filter(v -> v.check() != Check.UNTERMINATED_LINE).map(Violation::index).toList());
    }

    @Test
    void theCheckCommandReportsJsonAndJUnitXmlAndFailsOnErrors() throws Exception {
        Path bad = dir.resolve("bad.ndjson");
        Server banner = servers().filter(s -> s.name().equals("banner")).findFirst().orElseThrow();
        converse(banner, bad);
        Path good = dir.resolve("good.ndjson");
        converse(clean(), good);
        Path warned = dir.resolve("warned.ndjson");
        converse(servers().filter(s -> s.name().equals("tool-name")).findFirst().orElseThrow(), warned);

        Path json = dir.resolve("report.json");
        Path junit = dir.resolve("report.xml");
        StringWriter out = new StringWriter();
        assertThat(Main.run(new PrintWriter(out), new PrintWriter(out), "check", good.toString(), bad.toString(),
                "--check-report", json.toString(), "--check-junit", junit.toString())).isEqualTo(1);
        assertThat(Files.readString(json)).contains("\"id\" : \"stdio.stdout-not-json\"")
                .contains("Server listening on stdio");

        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(junit.toFile());
        Element suite = doc.getDocumentElement();
        assertThat(suite.getTagName()).isEqualTo("testsuite");
        NodeList cases = suite.getElementsByTagName("testcase");
        assertThat(cases.getLength()).isEqualTo(Check.values().length);
        List<String> failing = new ArrayList<>();
        for (int i = 0; i < cases.getLength(); i++) {
            Element testcase = (Element) cases.item(i);
            if (testcase.getElementsByTagName("failure").getLength() > 0) {
                failing.add(testcase.getAttribute("name"));
                Element failure = (Element) testcase.getElementsByTagName("failure").item(0);
                assertThat(failure.getAttribute("type")).isEqualTo("error");
                assertThat(failure.getTextContent()).contains("Server listening on stdio");
            }
        }
        assertThat(failing).containsExactly("stdio.stdout-not-json");
        assertThat(suite.getAttribute("failures")).isEqualTo("1");
        assertThat(suite.getAttribute("tests")).isEqualTo(String.valueOf(Check.values().length));

        assertThat(Main.run(new PrintWriter(out), new PrintWriter(out), "check", good.toString())).isZero();
        assertThat(Main.run(new PrintWriter(out), new PrintWriter(out), "check", warned.toString())).isZero();
        assertThat(Main.run(new PrintWriter(out), new PrintWriter(out), "check", warned.toString(), "--fail-on",
                "warning")).isEqualTo(1);
        assertThat(Main.run(new PrintWriter(out), new PrintWriter(out), "check", dir.resolve("none.ndjson").toString()))
                .isEqualTo(2);
        assertThat(Main.run(new PrintWriter(out), new PrintWriter(out), "check", good.toString(), "--fail-on", "info"))
                .isEqualTo(2);
    }
}
