package dev.mcpchaos.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.drill.Catalogue;
import dev.mcpchaos.server.drill.Scenario;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

/** {@code mcp-chaos drill}: the options mapped onto the library's drill, --list, the reports and exit codes. */
class DrillCommandTest {

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        return Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
    }

    @Test
    void listShowsEveryScenarioAndTheNotBuiltOnesAsSuch() {
        assertThat(run("drill", "--list")).isZero();
        String listing = out.toString();
        for (Scenario s : Catalogue.all()) {
            String head = listing.lines().filter(l -> l.startsWith(s.name() + "  [")).findFirst().orElseThrow();
            if (s.built()) {
                assertThat(head).as(s.name()).contains("runnable").doesNotContain("not built yet");
            } else {
                assertThat(head).as(s.name()).contains("not built yet").doesNotContain("runnable");
            }
        }
        assertThat(listing).doesNotContain("the 2026-07-28 era over stdio")
                .contains("out-of-order  [SHOULD, runnable over stdio in the 2025 and 2026 eras]")
                .contains("answer-lost  [SHOULD, runnable over http, stdio in the 2025 and 2026 eras]")
                .contains("input-required-loop  [SHOULD, runnable over http, stdio in the 2026 era]")
                .contains("header-mismatch  [SHOULD, runnable over http in the 2026 era]");
    }

    @Test
    void aServerThatDoesNotFitTheTransportOrASecondServerIsAUsageError() {
        assertThat(run("drill", "--transport", "stdio", "--upstream", "http://127.0.0.1:1/mcp", "--", "node", "c.mjs"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("--upstream: an HTTP server is drilled over http");
        assertThat(run("drill", "--server", "node", "server.js", "--", "node", "c.mjs")).isEqualTo(2);
        assertThat(err.toString()).contains("--server: a stdio server is drilled over stdio");
        assertThat(run("drill", "--upstream", "ftp://x/mcp", "--", "node", "c.mjs")).isEqualTo(2);
        assertThat(err.toString()).contains("--upstream: 'ftp://x/mcp' (expected: an http:// or https:// URL)");
        assertThat(run("drill", "--upstream", "http://127.0.0.1:1/mcp", "--cassette", "x.ndjson", "--", "c"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("--upstream, --server, --cassette: one of them");
        assertThat(run("drill", "--cassette", "no-such.ndjson", "--", "c")).isEqualTo(2);
        assertThat(err.toString()).contains("--cassette: 'no-such.ndjson' (expected: a cassette file)");
    }

    @Test
    void theServerCommandEndsAtTheDashesBeforeTheClientCommand() {
        DrillCommand command = new DrillCommand();
        new picocli.CommandLine(command).parseArgs("--transport", "stdio", "--server", "npx", "-y",
                "@modelcontextprotocol/server-everything", "stdio", "--", "node", "client.mjs", "--stdio");
        assertThat(command.server).containsExactly("npx", "-y", "@modelcontextprotocol/server-everything", "stdio");
        assertThat(command.command).containsExactly("node", "client.mjs", "--stdio");
    }

    @Test
    void aClientThatNeverTalksIsNotExercisedNeverPassed(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("card.json");
        Path junit = dir.resolve("card.xml");
        int code = run("drill", "--scenario", "answer-lost", "--scenario", "request-dropped", "--timeout", "10s",
                "--report-json", json.toString(), "--junit", junit.toString(), "--", "sh", "-c", "exit 0");
        assertThat(code).as(err.toString()).isZero();
        assertThat(err.toString()).contains("answer-lost").contains("not exercised").doesNotContain(" pass ");
        JsonNode card = new ObjectMapper().readTree(json.toFile());
        assertThat(card.get("scenarios")).hasSize(2);
        card.get("scenarios").forEach(s -> {
            assertThat(s.get("outcome").asText()).isEqualTo("not_exercised");
            assertThat(s.get("client_exit").asInt()).isZero();
        });
        assertThat(Files.readString(junit)).contains("tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"2\"")
                .contains("<skipped message=\"not exercised: the fault never fired");
    }

    @Test
    void aClientThatOutlivesTheTimeoutIsStopped() {
        long started = System.nanoTime();
        assertThat(run("drill", "--scenario", "answer-lost", "--timeout", "500ms", "--", "sh", "-c", "sleep 30", "sh")).isZero();
        assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(10_000);
        assertThat(err.toString()).contains("not exercised").contains("was stopped at the timeout");
    }

    @Test
    void aScenarioThatCannotRunHereSaysSoAndTheClientNeverRuns(@TempDir Path dir) {
        // Every scenario of the catalogue is built (#37): one of another transport is what is not run.
        Path marker = dir.resolve("ran");
        assertThat(run("drill", "--scenario", "server-crash", "--", "touch", marker.toString())).isZero();
        assertThat(err.toString()).contains("server-crash").contains("not applicable")
                .contains("this run is http in the 2025 era");
        assertThat(marker).doesNotExist();
    }

    @Test
    void primingMissingIsBuiltAndRunsTheClient(@TempDir Path dir) {
        Path marker = dir.resolve("ran");
        assertThat(run("drill", "--scenario", "priming-missing", "--timeout", "10s", "--", "touch", marker.toString()))
                .isZero();
        assertThat(marker).as("the client ran").exists();
        assertThat(err.toString()).contains("priming-missing").contains("not exercised").doesNotContain("not built");
    }

    @Test
    void usageErrorsExit2() {
        assertThat(run("drill", "--scenario", "nope", "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("--scenario: 'nope' (expected: one of [answer-lost");
        assertThat(run("drill")).isEqualTo(2);
        assertThat(err.toString()).contains("CLIENT_COMMAND: missing");
        assertThat(run("drill", "--timeout", "soon", "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("--timeout: duration: 'soon'");
    }

    @Test
    void eraTakes2025Or2026OverEitherTransport() {
        assertThat(run("drill", "--era", "2027", "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("--era: '2027' (expected: 2025 or 2026)");
        // The 2026 era over stdio runs; an HTTP scenario of the era is not applicable there (no client is started).
        assertThat(run("drill", "--era", "2026", "--transport", "stdio", "--scenario", "header-mismatch", "--",
                "true")).isZero();
        assertThat(err.toString()).contains("header-mismatch").contains("not applicable")
                .contains("this run is stdio in the 2026 era");
    }

    @Test
    void in2026AScenarioOfTheSessionsDoesNotApplyAndOneOfTheEraRuns() {
        // A client that never talks: the era's own scenario runs (not exercised), session-404 is not applicable.
        assertThat(run("drill", "--era", "2026", "--scenario", "session-404", "--scenario", "header-mismatch",
                "--timeout", "10s", "--", "sh", "-c", "exit 0")).isZero();
        assertThat(err.toString()).contains("session-404").contains("not applicable")
                .contains("this run is http in the 2026 era").contains("header-mismatch").contains("not exercised");
    }

    @Test
    void htmlWritesTheScorecardAndTheReportCommandTakesItsJsonForTheSamePage(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("card.json");
        Path html = dir.resolve("drill.html");
        int code = run("drill", "--scenario", "answer-lost", "--scenario", "server-crash", "--timeout", "10s",
                "--report-json", json.toString(), "--html", html.toString(), "--", "sh", "-c", "exit 0");
        assertThat(code).as(err.toString()).isZero();
        JsonNode written = data(html);
        assertThat(written.path("title").asText()).isEqualTo("drill of sh -c exit 0");
        JsonNode card = written.path("drill");
        assertThat(card.path("format").asText()).isEqualTo("mcp-chaos-drill");
        assertThat(card.path("scenarios")).hasSize(2);
        assertThat(card.path("scenarios").get(0).path("outcome").asText()).isEqualTo("not_exercised");
        assertThat(card.path("scenarios").get(1).path("outcome").asText()).isEqualTo("not_applicable");
        assertThat(written.path("journal").path("entries").isArray()).isTrue();

        JsonNode scorecard = new ObjectMapper().readTree(json.toFile());
        assertThat(scorecard.path("scenarios").get(0).has("journal")).as("the scenario that ran").isTrue();
        assertThat(scorecard.path("scenarios").get(1).has("journal")).as("the one not run (stdio's)").isFalse();
        assertThat(ReportCommand.recognise(Files.readString(json))).isEqualTo(ReportCommand.Kind.DRILL);
        Path fromJson = dir.resolve("from-json.html");
        assertThat(run("report", "--out", fromJson.toString(), "--title", "drill of sh -c exit 0", json.toString()))
                .as(err.toString()).isZero();
        assertThat(err.toString()).contains("report written to " + fromJson + " (drill scorecard card.json");
        JsonNode reported = data(fromJson);
        assertThat(reported.path("drill")).isEqualTo(card);
        assertThat(reported.path("journal")).isEqualTo(written.path("journal"));

        assertThat(run("report", "--out", dir.resolve("twice.html").toString(), json.toString(), json.toString()))
                .isEqualTo(2);
        assertThat(err.toString()).contains("a second drill scorecard");
    }

    /** The data a report file holds, as the page reads it. */
    private static JsonNode data(Path html) throws Exception {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                "<script id=\"mcp-chaos-data\" type=\"application/json\">(.*?)</script>",
                java.util.regex.Pattern.DOTALL).matcher(Files.readString(html));
        assertThat(m.find()).as("the data block of " + html).isTrue();
        return new ObjectMapper().readTree(m.group(1));
    }
}
