package dev.mcpchaos.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.it.LivePageIT;
import dev.mcpchaos.server.it.TestPeers;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The report {@code mcp-chaos report} makes from a real session's event log ({@link ReportSession}:
 * the demo server behind {@code mcp-chaos stdio}, a rule failing {@code tools/call add} twice),
 * opened from disk with the network off in each headless browser ({@code test-peers/ui/report-page.mjs}:
 * Debian's {@code chromium} driven by {@code playwright-core} and Debian's {@code firefox-esr} driven
 * by {@code puppeteer-core}, as {@code LivePageIT} does): it shows
 * the event log's faults, by count and by rule, requests nothing but the file, and logs no error.
 * So do the report of the session's cassette with its event log (every recorded message, the
 * faults on theirs) and the one {@code --html} wrote at the session's end. The screenshots are
 * kept in {@code target/ui-screenshots/<browser>/} (7-report-command, 8-report-cassette,
 * 9-report-html-option). Without the browser or its driver the test is skipped with the reason,
 * except with {@code CI=true}, where it fails.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ReportPageIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"chromium", "firefox"})
    void theCommandsReportOfARealEventLogOpensOfflineAndShowsItsFaultsByCount(String browser) throws Exception {
        Path binary = LivePageIT.requireBrowser(browser);
        Map<String, String> inBrowser = Map.of("BROWSER", browser, "BROWSER_BIN", binary.toString());
        ReportSession session = ReportSession.run(dir);
        assertThat(session.code()).isZero();

        Path screenshots = Path.of("target", "ui-screenshots", browser).toAbsolutePath();
        Files.createDirectories(screenshots);
        Path html = screenshots.resolve("report-command.html");
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), "report", "--out",
                html.toString(), "--title", "ReportPageIT", session.events().toString());
        assertThat(code).as(err.toString()).isZero();

        JsonNode opened = runNode("report-page.mjs", inBrowser, Map.of("REPORT", html.toString(), "SCREENSHOTS",
                screenshots.toString(), "SHOT", "7-report-command"));
        Files.writeString(screenshots.resolve("report-command.json"), opened.toPrettyString());

        // The event log's faults, by rule, as the file on disk says.
        Map<String, Long> logged = new TreeMap<>();
        for (String line : Files.readAllLines(session.events())) {
            JsonNode event = JSON.readTree(line);
            if (event.path("event").asText().equals("fault")) {
                logged.merge(event.path("rule").asText(), 1L, Long::sum);
            }
        }
        assertThat(logged).containsExactly(Map.entry(ReportSession.RULE, 2L));
        assertThat(byRule(opened)).as("faults on the timeline's rows, by rule").isEqualTo(logged);
        assertThat(opened.path("rulesShown").toString())
                .isEqualTo("[{\"rule\":\"" + ReportSession.RULE + "\",\"injected\":\"2\"}]");
        assertThat(opened.path("messageRows").asLong()).as("without a journal: a row per fault").isEqualTo(2);
        assertThat(opened.path("summary").asText()).contains("2 faults");
        assertThat(opened.path("title").asText()).isEqualTo("mcp-chaos report: ReportPageIT");
        assertThat(opened.path("steering").asInt()).as("buttons and the form, hidden in a report").isZero();
        assertThat(opened.path("consoleErrors")).isEmpty();
        assertThat(opened.path("requests")).isNotEmpty();
        opened.path("requests").forEach(r -> assertThat(r.asText()).matches("(file|data):.*"));
        Path png = screenshots.resolve("7-report-command.png");
        assertThat(png).exists();
        assertThat(Files.size(png)).isGreaterThan(10_000);

        // The recording with the event log: every recorded message, each of the log's faults on its own.
        Path replayed = screenshots.resolve("report-cassette.html");
        code = Main.run(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), "report", "--out",
                replayed.toString(), session.cassette().toString(), session.events().toString());
        assertThat(code).as(err.toString()).isZero();
        JsonNode withCassette = runNode("report-page.mjs", inBrowser, Map.of("REPORT", replayed.toString(),
                "SCREENSHOTS", screenshots.toString(), "SHOT", "8-report-cassette"));
        assertThat(byRule(withCassette)).isEqualTo(logged);
        assertThat(withCassette.path("messageRows").asLong())
                .isEqualTo(dev.mcpchaos.server.record.Cassette.read(session.cassette()).entries().size());
        assertThat(withCassette.path("consoleErrors")).isEmpty();

        // --html's own file, written at the session's end: its journal's messages, the same faults.
        JsonNode atTheEnd = runNode("report-page.mjs", inBrowser, Map.of("REPORT", session.html().toString(),
                "SCREENSHOTS", screenshots.toString(), "SHOT", "9-report-html-option"));
        assertThat(byRule(atTheEnd)).isEqualTo(logged);
        assertThat(atTheEnd.path("checkInfo").asText()).doesNotContain("no referee report");
        assertThat(atTheEnd.path("consoleErrors")).isEmpty();
        atTheEnd.path("requests").forEach(r -> assertThat(r.asText()).matches("(file|data):.*"));
    }

    /**
     * A real drill ({@code test-peers/drill/client.mjs} with its reuse-id flaw: request-dropped
     * fails, retry-after-503 passes, server-crash does not apply over HTTP) with {@code --html}: the file opens
     * offline and shows the scorecard's verdicts by count as the scorecard's JSON has them, each
     * scenario's row, and the scenarios' sessions on the timeline; so does the report {@code
     * mcp-chaos report} makes of the scorecard's JSON, in each browser. Screenshots 10-drill-report
     * and 11-drill-report-command.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"chromium", "firefox"})
    void aDrillsReportOpensOfflineAndShowsTheScorecardsVerdictsByCount(String browser) throws Exception {
        Path binary = LivePageIT.requireBrowser(browser);
        Map<String, String> inBrowser = Map.of("BROWSER", browser, "BROWSER_BIN", binary.toString());
        Path screenshots = Path.of("target", "ui-screenshots", browser).toAbsolutePath();
        Files.createDirectories(screenshots);
        Path html = screenshots.resolve("drill-report.html");
        Path json = dir.resolve("drill.json");
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), "drill",
                "--scenario", "request-dropped", "--scenario", "retry-after-503", "--scenario", "server-crash",
                "--timeout", "10s", "--seed", "42", "--html", html.toString(), "--report-json", json.toString(), "--",
                TestPeers.node().toString(), TestPeers.testPeersDir().resolve("drill/client.mjs").toString(),
                "--flaw", "reuse-id");
        assertThat(code).as("a MUST scenario failed\n" + err).isEqualTo(1);
        JsonNode card = JSON.readTree(json.toFile());
        Map<String, Long> byOutcome = new TreeMap<>();
        card.path("scenarios").forEach(s -> byOutcome.merge(s.path("outcome").asText(), 1L, Long::sum));
        assertThat(byOutcome).as(err.toString()).containsExactly(Map.entry("fail", 1L), Map.entry("not_applicable", 1L),
                Map.entry("pass", 1L));

        for (Path report : List.of(html, screenshots.resolve("drill-report-command.html"))) {
            if (!report.equals(html)) {
                assertThat(Main.run(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), "report",
                        "--out", report.toString(), json.toString())).as(err.toString()).isZero();
            }
            JsonNode opened = runNode("report-page.mjs", inBrowser, Map.of("REPORT", report.toString(), "SCREENSHOTS",
                    screenshots.toString(), "SHOT", report.equals(html) ? "10-drill-report" : "11-drill-report-command"));
            Files.writeString(screenshots.resolve(report.getFileName() + ".json"), opened.toPrettyString());
            Map<String, Long> shown = new TreeMap<>();
            opened.path("scorecard").fields().forEachRemaining(f -> {
                if (f.getValue().asLong() > 0) {
                    shown.put(f.getKey(), f.getValue().asLong());
                }
            });
            assertThat(shown).as(report + ": the scorecard's verdicts by count").isEqualTo(byOutcome);
            assertThat(opened.path("scorecardRows").toString()).isEqualTo("[{\"scenario\":\"request-dropped\","
                    + "\"outcome\":\"fail\",\"shown\":\"fail\"},{\"scenario\":\"retry-after-503\",\"outcome\":"
                    + "\"pass\",\"shown\":\"pass\"},{\"scenario\":\"server-crash\",\"outcome\":\"not_applicable\","
                    + "\"shown\":\"not applicable\"}]");
            long messages = 0;
            for (JsonNode s : card.path("scenarios")) {
                messages += s.path("journal").path("entries").size();
            }
            long inSessions = 0;
            for (JsonNode s : opened.path("sessionsShown")) {
                assertThat(s.path("session").asText()).matches("(request-dropped|retry-after-503): .+");
                inSessions += s.path("messages").asLong();
            }
            assertThat(inSessions).as("every scenario's messages, by session").isEqualTo(messages).isPositive();
            assertThat(opened.path("summary").asText()).contains("drill of 3 scenarios");
            assertThat(opened.path("steering").asInt()).isZero();
            assertThat(opened.path("consoleErrors")).isEmpty();
            opened.path("requests").forEach(r -> assertThat(r.asText()).matches("(file|data):.*"));
        }
    }

    /** The faults on the timeline's rows, by rule. */
    private static Map<String, Long> byRule(JsonNode opened) {
        Map<String, Long> shown = new TreeMap<>();
        opened.path("faultsByRule").fields().forEachRemaining(f -> shown.put(f.getKey(), f.getValue().asLong()));
        return shown;
    }

    /** Runs {@code test-peers/ui/<name>} with {@code browser} and {@code environment} and returns the JSON it printed. */
    private JsonNode runNode(String name, Map<String, String> browser, Map<String, String> environment)
            throws Exception {
        Map<String, String> all = new java.util.HashMap<>(browser);
        all.putAll(environment);
        return LivePageIT.runUiScript(name, dir, all);
    }
}
