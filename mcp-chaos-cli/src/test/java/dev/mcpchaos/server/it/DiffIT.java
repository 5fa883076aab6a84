package dev.mcpchaos.server.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.cli.Main;
import dev.mcpchaos.server.diff.DiffPeerServer;
import dev.mcpchaos.server.record.Cassette;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code mcp-chaos diff} between real peers: SDK servers ({@link DiffPeerServer}) that differ from
 * a base in exactly one way each, live over stdio and as cassettes recorded from them through the
 * proxy's {@code --record}; and server-everything live against a cassette of itself.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class DiffIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path tempDir;

    private static Path baseCassette;

    @BeforeAll
    static void recordBase() {
        baseCassette = record(peer("base"), tempDir.resolve("base.ndjson"));
    }

    private static List<String> peer(String variant) {
        return List.of(TestPeers.java().toString(), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"), DiffPeerServer.class.getName(), variant);
    }

    /** Records a session with {@code server} through the proxy: tools/list and one failing call. */
    private static Path record(List<String> server, Path file) {
        return record(server, file, client -> { });
    }

    /** {@link #record(List, Path)}, then {@code more} calls made with the same client. */
    private static Path record(List<String> server, Path file, java.util.function.Consumer<McpSyncClient> more) {
        List<String> command = Tee.mcpChaosStdio("--record", file.toString()).apply(server);
        McpSyncClient client = TestPeers.stdioClient(command, line -> { }).build();
        try {
            client.initialize();
            assertThat(client.listTools().tools()).isNotEmpty();
            try {
                McpSchema.CallToolResult failed = client.callTool(McpSchema.CallToolRequest.builder("fetch_page")
                        .arguments(Map.of("url", "http://127.0.0.1:9/none")).build());
                assertThat(failed.isError()).isTrue();
            } catch (McpError expectedInOneVariant) {
                // the error-class variant answers with a JSON-RPC error
            }
            more.accept(client);
        } finally {
            client.closeGracefully();
        }
        awaitAnswered(file, "tools/call");
        return file;
    }

    /** Waits until the recorder has written an answer to every request of {@code method}: it writes on its own thread. */
    private static void awaitAnswered(Path file, String method) {
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(100)).until(() -> {
            try {
                if (!Files.exists(file)) {
                    return false;
                }
                Cassette cassette = Cassette.read(file);
                List<JsonNode> ids = new ArrayList<>();
                cassette.entries().stream().filter(e -> method.equals(e.method()))
                        .forEach(e -> ids.add(e.message().get("id")));
                List<JsonNode> answered = new ArrayList<>();
                cassette.entries().stream().filter(e -> e.method() == null && e.message() != null)
                        .forEach(e -> answered.add(e.message().get("id")));
                return !ids.isEmpty() && answered.containsAll(ids);
            } catch (RuntimeException | IOException e) {
                return false; // a line half written
            }
        });
    }

    private record Run(int exit, String out, String err, JsonNode json, Path junit) {
    }

    private static Run diff(String... args) throws IOException {
        Path json = Files.createTempFile(tempDir, "diff", ".json");
        Path junit = Files.createTempFile(tempDir, "diff", ".xml");
        List<String> argv = new ArrayList<>(List.of("diff", "--json", json.toString(), "--junit", junit.toString()));
        argv.addAll(List.of(args));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), argv.toArray(String[]::new));
        JsonNode report = Files.size(json) > 0 ? JSON.readTree(json.toFile()) : null;
        return new Run(exit, out.toString(), err.toString(), report, junit);
    }

    @Test
    void theSameServerAsCassetteAndLiveHasNoChange() throws IOException {
        Run same = diffCassetteAgainst("base");
        assertThat(same.exit()).as(same.out() + same.err()).isZero();
        assertThat(same.json().path("changes").asInt()).isZero();
        assertThat(same.out()).contains("no changes");
    }

    private static Run diffCassetteAgainst(String variant) throws IOException {
        List<String> argv = new ArrayList<>(List.of(baseCassette.toString(), "--new-server", "--"));
        argv.addAll(peer(variant));
        return diff(argv.toArray(String[]::new));
    }

    @ParameterizedTest(name = "{0}: {1} {2}, exit {3}")
    @CsvSource({
        "tool-removed,   tool.removed,            true,  1, tool delete_item",
        "required-added, param.added.required,    true,  1, tool search / param region",
        "optional-added, param.added,             false, 0, tool search / param highlight",
        "description,    description,             false, 0, tool search",
        "enum-narrowed,  param.enum.narrowed,     true,  1, tool search / param sort",
        "minimum-raised, param.minimum.tightened, true,  1, tool search / param limit",
    })
    void aServerThatDiffersInOneWayGivesThatOneChange(String variant, String kind, boolean breaking, int exit,
                                                      String subject) throws IOException {
        Run run = diffCassetteAgainst(variant);
        assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(exit);
        JsonNode items = run.json().path("items");
        assertThat(items).as(run.out()).hasSize(1);
        assertThat(items.get(0).path("kind").asText()).isEqualTo(kind);
        assertThat(items.get(0).path("subject").asText()).isEqualTo(subject);
        assertThat(items.get(0).path("classification").asText()).isEqualTo(breaking ? "breaking" : "compatible");
        assertThat(run.out()).contains(kind).contains(subject);
    }

    @Test
    void failOnCompatibleMakesACompatibleChangeFail() throws IOException {
        List<String> argv = new ArrayList<>(List.of("--fail-on", "compatible", baseCassette.toString(),
                "--new-server", "--"));
        argv.addAll(peer("optional-added"));
        Run run = diff(argv.toArray(String[]::new));
        assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(1);
        assertThat(run.json().path("breaking").asInt()).isZero();
    }

    @Test
    void aFailingCallAnsweredWithAnotherErrorClassIsBreakingAndAFailedJunitTestcase() throws Exception {
        Path other = record(peer("error-class"), tempDir.resolve("error-class.ndjson"));
        Run run = diff(baseCassette.toString(), other.toString());
        assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(1);
        JsonNode items = run.json().path("items");
        assertThat(items).as(run.out()).hasSize(1);
        assertThat(items.get(0).path("kind").asText()).isEqualTo("call.error-class");
        assertThat(items.get(0).path("detail").asText()).isEqualTo("answered with isError, now error -32602");

        // One failed testcase for the change, and one skipped for each list neither recording asked
        // for (resources, resource templates, prompts): not compared is never passed.
        Document junit = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(run.junit().toFile());
        Element suite = junit.getDocumentElement();
        assertThat(suite.getTagName()).isEqualTo("testsuite");
        assertThat(suite.getAttribute("tests")).isEqualTo("4");
        assertThat(suite.getAttribute("failures")).isEqualTo("1");
        assertThat(suite.getAttribute("skipped")).isEqualTo("3");
        NodeList failures = suite.getElementsByTagName("failure");
        assertThat(failures.getLength()).isEqualTo(1);
        assertThat(((Element) failures.item(0)).getAttribute("type")).isEqualTo("call.error-class");
        assertThat(suite.getElementsByTagName("skipped").getLength()).isEqualTo(3);

        // Its twin: the same cassette on both sides is no change, and the JUnit suite fails nothing.
        Run same = diff(other.toString(), other.toString());
        assertThat(same.exit()).isZero();
        Element empty = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(same.junit().toFile())
                .getDocumentElement();
        assertThat(empty.getAttribute("failures")).isEqualTo("0");
        assertThat(empty.getElementsByTagName("failure").getLength()).isZero();
        assertThat(empty.getElementsByTagName("testcase").getLength())
                .isEqualTo(empty.getElementsByTagName("skipped").getLength());
    }

    @Test
    void serverEverythingLiveAgainstACassetteOfItselfHasNoBreakingChange() throws IOException {
        Path file = tempDir.resolve("everything.ndjson");
        List<String> command = Tee.mcpChaosStdio("--record", file.toString())
                .apply(TestPeers.serverEverythingStdioCommand());
        McpSyncClient client = TestPeers.stdioClient(command, line -> { }).build();
        int tools;
        int prompts;
        try {
            client.initialize();
            tools = client.listTools().tools().size();
            client.listResources();
            client.listResourceTemplates();
            prompts = client.listPrompts().prompts().size();
        } finally {
            client.closeGracefully();
        }
        awaitAnswered(file, "prompts/list");
        List<String> argv = new ArrayList<>(List.of(file.toString(), "--new-server", "--"));
        argv.addAll(TestPeers.serverEverythingStdioCommand());
        Run run = diff(argv.toArray(String[]::new));
        System.out.println(run.out());
        assertThat(run.exit()).as(run.out() + run.err()).isZero();
        assertThat(run.json().path("breaking").asInt()).isZero();
        assertThat(run.json().path("changes").asInt()).isZero();
        // The live side was really asked: it found the tools and prompts the SDK client saw.
        assertThat(tools).isPositive();
        assertThat(run.out()).contains("new: " + tools + " tools, ").contains(", " + prompts + " prompt");
    }

    @Test
    void serverEverythingOverStreamableHttpAndOverStdioHasTheSameContract() throws IOException {
        try (HttpPeers.ServerEverything everything = HttpPeers.ServerEverything.start(
                Files.createDirectories(tempDir.resolve("http-everything")))) {
            List<String> argv = new ArrayList<>(List.of("--new-url", everything.endpoint().toString(),
                    "--old-server", "--"));
            argv.addAll(TestPeers.serverEverythingStdioCommand());
            Run run = diff(argv.toArray(String[]::new));
            System.out.println(run.out());
            assertThat(run.exit()).as(run.out() + run.err()).isZero();
            assertThat(run.json().path("changes").asInt()).isZero();
            // Not two empty contracts: the HTTP side was asked and answered.
            assertThat(run.out()).containsPattern("new: [1-9][0-9]* tools, [1-9][0-9]* resources");
        }
    }

    @Test
    void aUrlWhereNoServerListensIsBadInputNamingIt() throws IOException {
        Run run = diff(baseCassette.toString(), "--new-url", "http://127.0.0.1:9/mcp");
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains("http://127.0.0.1:9/mcp").contains("does not answer initialize");
    }

    @Test
    void aServerThatDoesNotStartIsBadInputNamingIt() throws IOException {
        Run run = diff(baseCassette.toString(), "--new-server", "--", tempDir.resolve("no-such-server").toString());
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains("no-such-server").contains("does not start");
    }

    @Test
    void aRecordedCallAgainstALiveSideIsSaidNotComparedAndReplayedOnlyWhenAsked() throws IOException {
        // The error-class variant answers the recorded failing call with a JSON-RPC error where the
        // base answered isError. Asked for lists only, the live side cannot show it: the output says
        // the call was not compared instead of a bare "no changes" (issue #34).
        Run asked = diffCassetteAgainst("error-class");
        assertThat(asked.exit()).as(asked.out() + asked.err()).isZero();
        assertThat(asked.json().path("changes").asInt()).isZero();
        assertThat(asked.out()).contains("not compared: recorded calls: 1 call recorded in " + baseCassette
                + ", not sent to the new side, a live server (--replay-calls sends them)");
        assertThat(asked.json().path("notCompared").toString()).contains("recorded calls");

        List<String> argv = new ArrayList<>(List.of("--replay-calls", baseCassette.toString(), "--new-server", "--"));
        argv.addAll(peer("error-class"));
        Run replayed = diff(argv.toArray(String[]::new));
        assertThat(replayed.exit()).as(replayed.out() + replayed.err()).isEqualTo(1);
        JsonNode items = replayed.json().path("items");
        assertThat(items).as(replayed.out()).hasSize(1);
        assertThat(items.get(0).path("kind").asText()).isEqualTo("call.error-class");
        assertThat(items.get(0).path("detail").asText()).isEqualTo("answered with isError, now error -32602");
        assertThat(replayed.out()).contains("new: 3 tools, 0 resources, 0 resource templates, 0 prompts, 1 call replayed")
                .doesNotContain("not compared: recorded calls");

        // Its twin: the base replayed on itself answers as recorded.
        argv = new ArrayList<>(List.of("--replay-calls", baseCassette.toString(), "--new-server", "--"));
        argv.addAll(peer("base"));
        Run same = diff(argv.toArray(String[]::new));
        assertThat(same.exit()).as(same.out() + same.err()).isZero();
        assertThat(same.json().path("changes").asInt()).isZero();
    }

    @Test
    void aReplayNeverCallsAToolTheLiveSideDoesNotList() throws IOException {
        Path file = record(peer("base"), tempDir.resolve("with-delete.ndjson"), client -> client.callTool(
                McpSchema.CallToolRequest.builder("delete_item").arguments(Map.of("id", "7")).build()));
        List<String> argv = new ArrayList<>(List.of("--replay-calls", file.toString(), "--new-server", "--"));
        argv.addAll(peer("tool-removed"));
        Run run = diff(argv.toArray(String[]::new));
        assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(1);
        JsonNode items = run.json().path("items");
        assertThat(items).as(run.out()).hasSize(1);
        assertThat(items.get(0).path("kind").asText()).isEqualTo("tool.removed");
        assertThat(run.out()).contains("not compared: recorded calls: 1 call not sent to the new side: "
                + "it does not list tool delete_item");
    }

    @Test
    void aCassetteThatNeverListedResourcesAgainstTheSameServerLiveHasNoChange() throws IOException {
        // Recorded with tools/list only: server-everything's resources, templates and prompts are
        // not "added" on the live side, they are what the recording cannot tell (issue #34).
        Path file = tempDir.resolve("everything-tools-only.ndjson");
        List<String> command = Tee.mcpChaosStdio("--record", file.toString())
                .apply(TestPeers.serverEverythingStdioCommand());
        McpSyncClient client = TestPeers.stdioClient(command, line -> { }).build();
        try {
            client.initialize();
            client.listTools();
        } finally {
            client.closeGracefully();
        }
        awaitAnswered(file, "tools/list");
        List<String> argv = new ArrayList<>(List.of(file.toString(), "--new-server", "--"));
        argv.addAll(TestPeers.serverEverythingStdioCommand());
        Run run = diff(argv.toArray(String[]::new));
        assertThat(run.exit()).as(run.out() + run.err()).isZero();
        assertThat(run.json().path("changes").asInt()).as(run.out()).isZero();
        assertThat(run.out()).contains("not compared: resources: " + file + " never listed them")
                .contains("not compared: prompts: " + file + " never listed them");
    }

    @Test
    void recordedCallsReplayOnAStreamableHttpSide() throws IOException {
        Path file = tempDir.resolve("everything-echo.ndjson");
        List<String> command = Tee.mcpChaosStdio("--record", file.toString())
                .apply(TestPeers.serverEverythingStdioCommand());
        McpSyncClient client = TestPeers.stdioClient(command, line -> { }).build();
        try {
            client.initialize();
            client.listTools();
            client.callTool(McpSchema.CallToolRequest.builder("echo").arguments(Map.of("text", "hi")).build());
            client.callTool(McpSchema.CallToolRequest.builder("no-such-tool").arguments(Map.of()).build());
        } finally {
            client.closeGracefully();
        }
        awaitAnswered(file, "tools/call");
        try (HttpPeers.ServerEverything everything = HttpPeers.ServerEverything.start(
                Files.createDirectories(tempDir.resolve("http-everything-replay")))) {
            Run run = diff("--replay-calls", file.toString(), "--new-url", everything.endpoint().toString());
            assertThat(run.exit()).as(run.out() + run.err()).isZero();
            assertThat(run.json().path("changes").asInt()).as(run.out()).isZero();
            assertThat(run.out()).contains(", 1 call replayed")
                    .contains("1 call not sent to the new side: it does not list tool no-such-tool");
        }
    }
}
