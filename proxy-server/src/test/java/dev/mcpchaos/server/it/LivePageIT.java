package dev.mcpchaos.server.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.rules.journal.JournalEntry;
import dev.mcpchaos.server.HttpProxyBuilder.RunningHttp;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.check.Referee;
import dev.mcpchaos.server.control.HtmlReport;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The live page ({@code /ui}) as a person uses it, in each real headless browser: Debian's
 * {@code chromium} driven by {@code playwright-core} and Debian's {@code firefox-esr} driven by
 * {@code puppeteer-core} over WebDriver BiDi, from the one script {@code test-peers/ui/live-page.mjs}
 * ({@code BROWSER} chooses, see {@code test-peers/ui/browser.mjs}),
 * against a real HTTP proxy with a control token in front of server-everything: the page asks for
 * the token; a client's {@code tools/call} that a rule answers with an error shows that rule on
 * that very message (the journal's) within a second; disabling the rule on the page disables it
 * ({@code GET /rules} agrees) and the next call, the twin, reaches the server and is answered; a
 * bad rule in the form shows the parser's own error. The page loads nothing from another host.
 * The same run written as a report ({@link HtmlReport}: the journal, the events and the referee's
 * report) opens from disk with the network off and shows the event log's faults, by count.
 *
 * <p>Screenshots of each state are kept in {@code target/ui-screenshots/<browser>/}, with what the
 * script saw ({@code live-page.json}: the fault's delay on the page, the rows, the error texts).
 * Without the browser or its driver the test is skipped with the reason, except with
 * {@code CI=true}, where it fails (the rule for missing engines, as in {@link DeployTools}).
 */
public class LivePageIT {

    private static final String TOKEN = "live-page-token";
    private static final String RULE = "sum-fails";
    private static final String FAULTED_TOOL = "get-sum";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tempDir;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"chromium", "firefox"})
    void thePageShowsTheFaultOnItsMessageDisablesTheRuleAndShowsTheParsersError(String browser) throws Exception {
        Path binary = requireBrowser(browser);
        Path screenshots = Path.of("target", "ui-screenshots", browser).toAbsolutePath();
        String rules = """
                rules:
                  - name: %s
                    match: {kind: request, method: tools/call, tool: %s}
                    fault: {type: error, code: -32050, message: "sum unavailable (injected by the live page test)"}
                """.formatted(RULE, FAULTED_TOOL);
        try (HttpPeers.ServerEverything everything = HttpPeers.ServerEverything.start(tempDir);
             RunningHttp proxy = McpChaosProxy.http(everything.endpoint())
                     .rules(RuleSet.parse(rules, "live-page-it.yaml"))
                     .control(new InetSocketAddress("127.0.0.1", 0))
                     .controlToken(TOKEN)
                     .check(new Referee())
                     .seed(38)
                     .start()) {
            URI control = URI.create("http://127.0.0.1:" + proxy.controlAddress().getPort());
            JsonNode seen = runBrowser(browser, binary, control, HttpPeers.endpoint(proxy.address()), screenshots);
            Files.writeString(screenshots.resolve("live-page.json"), seen.toPrettyString()); // what the page showed

            // The page, served without the token, asked for it and kept it in the tab only.
            assertThat(seen.path("url").asText()).isEqualTo(control + "/ui/");
            assertThat(seen.path("tokenInSessionStorage").asText()).isEqualTo(TOKEN);
            assertThat(seen.path("tokenInLocalStorage").asInt()).isZero();
            assertThat(seen.path("foreignRequests")).as("requests to another host").isEmpty();
            assertThat(seen.path("consoleErrors")).as("errors in the page").isEmpty();

            // The fault, on the message the journal says it hit, within a second of the answer.
            List<JournalEntry> calls = proxy.journal().filter(e -> e.direction() == Direction.CLIENT_TO_SERVER
                    && e.kind() == MessageKind.REQUEST && FAULTED_TOOL.equals(e.tool()));
            assertThat(calls).hasSize(2);
            JournalEntry faulted = calls.get(0);
            assertThat(faulted.faults()).extracting(JournalEntry.FaultAction::rule).containsExactly(RULE);
            assertThat(faulted.delivered()).isFalse();
            assertThat(seen.path("faultedAnswer").path("error").path("code").asInt()).isEqualTo(-32050);
            JsonNode row = seen.path("faultedRow");
            assertThat(row.path("seq").asLong()).isEqualTo(faulted.sequence());
            assertThat(row.path("fault").asText()).isEqualTo("error");
            assertThat(row.path("effect").asText()).isEqualTo("made");
            assertThat(seen.path("madeRow").asInt()).as("the answer the proxy made, shown as such").isEqualTo(1);
            assertThat(seen.path("echoRowBadges").asInt()).as("the echo call no rule touched").isZero();
            assertThat(seen.path("echoText").asText()).isEqualTo("Echo: before the fault");
            assertThat(seen.path("injectedShown").asText()).isEqualTo("1");
            // The referee's verdicts so far: none, on a client that did nothing wrong.
            assertThat(seen.path("verdicts").path("totals").toString()).contains("\"0 errors\",\"0 warnings\"");
            assertThat(seen.path("faultShownMs").asLong()).as("ms from the answer to the fault on the page")
                    .isBetween(0L, 1000L);

            // Disabled on the page: the API agrees, and the twin reached the server and was answered.
            assertThat(seen.path("ruleAfterDisable").path("enabled").asBoolean(true)).isFalse();
            JsonNode rule = getJson(control.resolve("/rules/" + RULE));
            assertThat(rule.path("enabled").asBoolean(true)).isFalse();
            JournalEntry twin = calls.get(1);
            assertThat(twin.faults()).isEmpty();
            assertThat(twin.delivered()).isTrue();
            assertThat(seen.path("twinAnswer").path("result").path("content").get(0).path("text").asText())
                    .contains("5");
            assertThat(seen.path("twinRows").toString()).contains("\"seq\":" + twin.sequence() + ",\"kind\":\"request\","
                    + "\"synthetic\":null,\"badges\":0");

            // A bad rule: the page shows what the proxy's parser says, word for word.
            String formError = seen.path("formError").asText();
            assertThat(formError).contains("latency").contains("soon");
            assertThat(formError).isEqualTo(seen.path("apiError").path("error").asText());
            assertThat(getJson(control.resolve("/rules")).toString()).doesNotContain("bad-latency");

            // The same run as a report file, opened from disk with the network off: the same faults, by count.
            JsonNode events = getJson(control.resolve("/events"));
            List<String> eventLines = new java.util.ArrayList<>();
            events.path("events").forEach(e -> eventLines.add(e.toString()));
            Path report = screenshots.resolve("report.html");
            HtmlReport.builder("LivePageIT").journal(getJson(control.resolve("/journal")).toString())
                    .events(eventLines).check(getJson(control.resolve("/check")).toString()).write(report);
            JsonNode opened = runNode("report-page.mjs", Map.of("REPORT", report.toString(),
                    "SCREENSHOTS", screenshots.toString(), "BROWSER", browser, "BROWSER_BIN", binary.toString()));
            Files.writeString(screenshots.resolve("report-page.json"), opened.toPrettyString());
            long faultEvents = 0;
            for (JsonNode e : events.path("events")) {
                if ("fault".equals(e.path("event").asText())) {
                    assertThat(e.path("rule").asText()).isEqualTo(RULE);
                    faultEvents++;
                }
            }
            assertThat(faultEvents).isEqualTo(1);
            assertThat(opened.path("faultsByRule").path(RULE).asLong()).isEqualTo(faultEvents);
            assertThat(opened.path("faultsByRule").size()).isEqualTo(1);
            assertThat(opened.path("rulesShown").toString()).isEqualTo("[{\"rule\":\"" + RULE + "\",\"injected\":\"1\"}]");
            assertThat(opened.path("messageRows").asLong()).isEqualTo(proxy.journal().entries().size());
            assertThat(opened.path("steering").asInt()).as("buttons and the form, hidden in a report").isZero();
            assertThat(opened.path("title").asText()).isEqualTo("mcp-chaos report: LivePageIT");
            assertThat(opened.path("consoleErrors")).isEmpty();
            opened.path("requests").forEach(r -> assertThat(r.asText()).matches("(file|data):.*"));

            for (String name : List.of("1-token-asked", "2-ready", "3-fault-shown", "4-rule-disabled", "5-bad-rule",
                    "6-report-offline")) {
                Path png = screenshots.resolve(name + ".png");
                assertThat(png).exists();
                assertThat(Files.size(png)).isGreaterThan(10_000);
            }
        }
    }

    /**
     * The binary of {@code browser} ({@code chromium} or {@code firefox}) and its driver in
     * test-peers: each missing one fails with CI=true and skips otherwise. ReportPageIT uses it too.
     */
    public static Path requireBrowser(String browser) {
        boolean firefox = browser.equals("firefox");
        Path binary = firefox
                ? DeployTools.requireTool("firefox-esr", "Debian's firefox-esr: apt-get install firefox-esr; see .ci/run")
                : DeployTools.requireTool("chromium", "Debian's chromium: apt-get install chromium; see .ci/run");
        String driver = firefox ? "puppeteer-core" : "playwright-core";
        requireInstalled(TestPeers.testPeersDir().resolve("node_modules/" + driver + "/package.json"), driver
                + " is not installed in test-peers (run: cd " + TestPeers.testPeersDir() + " && npm ci --no-audit --no-fund)");
        return binary;
    }

    /** Fails with CI=true, skips otherwise: the project's rule for a missing engine. */
    private static void requireInstalled(Path file, String reason) {
        if (Files.isRegularFile(file)) {
            return;
        }
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new IllegalStateException("CI=true and " + reason);
        }
        Assumptions.abort("Skipped, " + reason + "; with CI=true this fails instead");
    }

    private JsonNode runBrowser(String browser, Path binary, URI control, URI mcp, Path screenshots) throws Exception {
        return runNode("live-page.mjs", Map.of("CONTROL", control.toString(), "MCP", mcp.toString(), "TOKEN", TOKEN,
                "RULE", RULE, "FAULTED_TOOL", FAULTED_TOOL, "SCREENSHOTS", screenshots.toString(),
                "BROWSER", browser, "BROWSER_BIN", binary.toString()));
    }

    /** Runs {@code test-peers/ui/<name>} with {@code environment} and returns the JSON it printed. */
    private JsonNode runNode(String name, Map<String, String> environment) throws Exception {
        return runUiScript(name, tempDir, environment);
    }

    /**
     * Runs the browser script {@code test-peers/ui/<name>} with {@code environment} (its output kept
     * in {@code workDir}), bounded to 120 s, asserts it exited 0 and returns the JSON it printed;
     * {@code ReportPageIT} runs its scripts the same way.
     */
    public static JsonNode runUiScript(String name, Path workDir, Map<String, String> environment) throws Exception {
        Path script = TestPeers.testPeersDir().resolve("ui").resolve(name);
        Path out = workDir.resolve(name + ".out");
        Path err = workDir.resolve(name + ".err");
        ProcessBuilder builder = new ProcessBuilder(TestPeers.node().toString(), script.toString())
                .directory(TestPeers.testPeersDir().toFile())
                .redirectOutput(out.toFile())
                .redirectError(err.toFile());
        builder.environment().putAll(environment);
        Process process = builder.start();
        try {
            if (!process.waitFor(120, TimeUnit.SECONDS)) {
                throw new AssertionError(name + " did not end within 120 s; stderr:\n" + read(err));
            }
        } finally {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
        String stdout = read(out);
        assertThat(process.exitValue()).as("%s exit code; stdout:\n%s\nstderr:\n%s", name, stdout, read(err))
                .isZero();
        return JSON.readTree(stdout);
    }

    private static String read(Path file) throws java.io.IOException {
        return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    }

    private static JsonNode getJson(URI uri) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(uri)
                .header("Authorization", "Bearer " + TOKEN).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("GET %s: %s", uri, response.body()).isEqualTo(200);
        return JSON.readTree(response.body());
    }
}
