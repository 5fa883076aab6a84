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
    void slowToolHoldsSearchCallsOnly() {
        try (ChainHarness h = new ChainHarness(RuleSet.load(examplesDir().resolve("slow-tool.yaml")), 1)) {
            h.fromClient(Msg.call(1, "search_web"));
            h.fromClient(Msg.call(2, "fetch"));
            assertThat(h.toServer()).isEmpty(); // fetch waits behind the held search call
            h.advanceMillis(30_000);
            assertThat(h.toServer()).containsExactly(Msg.call(1, "search_web"), Msg.call(2, "fetch"));
            assertThat(h.events).singleElement().satisfies(e -> assertThat(e.rule()).isEqualTo("slow-search"));
        }
    }

    @Test
    void flakyToolFailsAboutOneCallInFive() {
        try (ChainHarness h = new ChainHarness(RuleSet.load(examplesDir().resolve("flaky-tool.yaml")), 7)) {
            for (int id = 0; id < 500; id++) {
                h.fromClient(Msg.call(id, "fetch"));
                h.fromServer(Msg.textResult(id, "page"));
            }
            assertThat(h.events).hasSizeBetween(70, 130);
            assertThat(h.events).extracting(FaultEvent::rule).contains("flaky-fetch-protocol-error",
                    "flaky-fetch-tool-error");
        }
    }

    @Test
    void schemaDriftRemovesTheAddTool() {
        try (ChainHarness h = new ChainHarness(RuleSet.load(examplesDir().resolve("schema-drift.yaml")), 1)) {
            h.fromClient(Msg.request(1, "tools/list"));
            h.fromServer(Msg.result(1, "{\"tools\":[{\"name\":\"echo\"},{\"name\":\"add\"}]}"));
            assertThat(h.toClient()).containsExactly("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"echo\"}]}}");
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
