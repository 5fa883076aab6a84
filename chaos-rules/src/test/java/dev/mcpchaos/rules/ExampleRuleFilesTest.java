package dev.mcpchaos.rules;

import dev.mcpchaos.core.transport.TransportKind;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Every rule file under {@code examples/} loads, fits the stdio transport and does what it says. */
class ExampleRuleFilesTest {

    /** The repository's examples directory; Surefire runs with the module as {@code basedir}. */
    static Path examplesDir() {
        return Path.of(System.getProperty("basedir", ".")).toAbsolutePath().getParent().resolve("examples");
    }

    static List<Path> exampleFiles() throws IOException {
        try (Stream<Path> files = Files.list(examplesDir())) {
            return files.filter(p -> p.toString().endsWith(".yaml") || p.toString().endsWith(".json")).sorted()
                    .toList();
        }
    }

    @Test
    void everyExampleLoadsAndFitsStdio() throws IOException {
        List<Path> files = exampleFiles();
        assertThat(files).extracting(p -> p.getFileName().toString()).contains("slow-tool.yaml", "flaky-tool.yaml",
                "malformed-answer.yaml", "schema-drift.yaml", "crash-on-third-call.yaml");
        for (Path file : files) {
            RuleSet rules = RuleSet.load(file);
            assertThat(rules.rules()).as(file.toString()).isNotEmpty();
            rules.checkTransport(TransportKind.STDIO);
            RuleEngine engine = RuleEngine.builder(rules).transport(TransportKind.STDIO).build();
            rules.seed().ifPresent(seed -> assertThat(engine.seed()).isEqualTo(seed));
        }
    }

    @Test
    void slowToolHoldsGetSumCallsOnly() {
        // The tool names are server-everything's: the examples are shown in front of it.
        try (ChainHarness h = new ChainHarness(RuleSet.load(examplesDir().resolve("slow-tool.yaml")), 1)) {
            h.fromClient(Msg.call(1, "get-sum"));
            h.fromClient(Msg.call(2, "echo"));
            assertThat(h.toServer()).isEmpty(); // echo waits behind the held get-sum call
            h.advanceMillis(30_000);
            assertThat(h.toServer()).containsExactly(Msg.call(1, "get-sum"), Msg.call(2, "echo"));
            assertThat(h.events).singleElement().satisfies(e -> assertThat(e.rule()).isEqualTo("slow-sum"));
        }
    }

    @Test
    void flakyToolFailsAboutOneCallInFive() {
        try (ChainHarness h = new ChainHarness(RuleSet.load(examplesDir().resolve("flaky-tool.yaml")), 7)) {
            for (int id = 0; id < 500; id++) {
                h.fromClient(Msg.call(id, "echo"));
                h.fromServer(Msg.textResult(id, "Echo: " + id));
            }
            assertThat(h.events).hasSizeBetween(70, 130);
            assertThat(h.events).extracting(FaultEvent::rule).contains("flaky-echo-protocol-error",
                    "flaky-echo-tool-error");
        }
    }

    /** The first tools of server-everything's tools/list, in its order; get-sum is the seventh. */
    private static final List<String> EVERYTHING_TOOLS = List.of("echo", "get-annotated-message", "get-env",
            "get-resource-links", "get-resource-reference", "get-structured-content", "get-sum", "get-tiny-image");

    private static String toolList(List<String> names) {
        return "{\"tools\":[" + String.join(",", names.stream().map(n -> "{\"name\":\"" + n + "\"}").toList()) + "]}";
    }

    @Test
    void schemaDriftRemovesGetSumFromServerEverythingsListAndLeavesAnotherListWhole() {
        try (ChainHarness h = new ChainHarness(RuleSet.load(examplesDir().resolve("schema-drift.yaml")), 1)) {
            h.fromClient(Msg.request(1, "tools/list"));
            h.fromServer(Msg.result(1, toolList(EVERYTHING_TOOLS)));
            List<String> without = EVERYTHING_TOOLS.stream().filter(n -> !n.equals("get-sum")).toList();
            // The twin: a list whose seventh tool is another keeps it (the patch's test guards the removal).
            List<String> other = List.of("a", "b", "c", "d", "e", "f", "g", "h");
            h.fromClient(Msg.request(2, "tools/list"));
            h.fromServer(Msg.result(2, toolList(other)));
            assertThat(h.toClient()).containsExactly(
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":" + toolList(without) + "}",
                    "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":" + toolList(other) + "}");
        }
    }

    @Test
    void crashOnTheThirdCall() {
        try (ChainHarness h = new ChainHarness(RuleSet.load(examplesDir().resolve("crash-on-third-call.yaml")), 1)) {
            for (int id = 1; id <= 4; id++) {
                h.fromClient(Msg.call(id, "echo"));
            }
            assertThat(h.connectionActions).containsExactly("killServer");
            assertThat(h.events).singleElement().satisfies(e -> assertThat(e.id()).isEqualTo(3L));
        }
    }

    @Test
    void malformedAnswerBreaksTheFirstAndThirdResults() {
        try (ChainHarness h = new ChainHarness(RuleSet.load(examplesDir().resolve("malformed-answer.yaml")), 1)) {
            for (int id = 1; id <= 3; id++) {
                h.fromClient(Msg.call(id, "echo"));
                h.fromServer(Msg.textResult(id, "ok"));
            }
            assertThat(h.events).extracting(FaultEvent::rule).containsExactly("first-result-truncated",
                    "third-result-bad-escape");
        }
    }
}
