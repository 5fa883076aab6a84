package dev.mcpchaos.server.it;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Grafana dashboard and the Prometheus files of {@code deploy/} on a real Prometheus (Debian's
 * {@code prometheus} package): the packaged proxy in front of the built-in demo server carries
 * traffic with faults, errors, limit breaches, timeouts, evicted sessions and, at the end, upstream
 * failures; Prometheus, started on 127.0.0.1 with {@code deploy/prometheus/prometheus.yml} (its pod
 * discovery replaced by one static target carrying the labels a discovered pod would have, so the
 * relabelling is the file's own), scrapes it every second; then every panel's query, with the
 * dashboard's variables filled in, must return a positive number, and the variables' own queries
 * must list the namespace and the pod. {@code promtool} checks the rules, runs their unit tests
 * and checks the filled-in scrape config.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class DeployPrometheusIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern DEMO_ENDPOINT = Pattern.compile("MCP Streamable HTTP at (http://127\\.0\\.0\\.1:\\d+/mcp)");
    private static final Pattern LISTENING = Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+)");
    private static final String NAMESPACE = "staging";
    private static final String POD = "mcp-server-5d8f7c9b4-x2x7k";
    /** Filled in for Grafana's interval variables: long enough to cover the whole run. */
    private static final String RATE_INTERVAL = "1m";
    private static final String RANGE = "5m";

    @TempDir
    Path tempDir;

    private final List<Process> processes = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @AfterEach
    void stop() throws InterruptedException {
        for (Process process : processes) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void promtoolAcceptsTheAlertRulesTheirUnitTestsAndTheComposeScrapeConfig() throws Exception {
        Path promtool = DeployTools.requireTool("promtool", "Debian's prometheus package; see .ci/run");
        Path dir = DeployTools.deploy("prometheus");
        DeployTools.Result check = DeployTools.run(dir, List.of(promtool.toString(), "check", "rules", "alerts.yml"));
        assertThat(check.exitCode()).as("promtool check rules: %s", check).isZero();
        assertThat(check.stdout()).contains("SUCCESS: 5 rules found");
        DeployTools.Result test = DeployTools.run(dir, List.of(promtool.toString(), "test", "rules", "alerts-test.yml"));
        assertThat(test.exitCode()).as("promtool test rules: %s", test).isZero();
        assertThat(test.stdout()).contains("SUCCESS");

        // deploy/compose's scrape config, with the alert rules mounted beside it as compose mounts them.
        Files.copy(DeployTools.deploy("compose/prometheus.yml"), tempDir.resolve("prometheus.yml"));
        Files.copy(dir.resolve("alerts.yml"), tempDir.resolve("alerts.yml"));
        DeployTools.Result compose = DeployTools.run(tempDir, List.of(promtool.toString(), "check", "config",
                tempDir.resolve("prometheus.yml").toString()));
        assertThat(compose.exitCode()).as("promtool check config of deploy/compose: %s", compose).isZero();
        assertThat(compose.stdout()).contains("SUCCESS: 5 rules found");
    }

    @Test
    void everyPanelOfTheDashboardShowsDataFromAProxyCarryingFaultyTraffic() throws Exception {
        Path prometheusBin = DeployTools.requireTool("prometheus", "Debian's prometheus package; see .ci/run");
        Path promtool = DeployTools.requireTool("promtool", "Debian's prometheus package; see .ci/run");

        // The upstream: the jar's demo server. The proxy in front of it, with small limits so the
        // traffic below can breach them, and rules that inject latency and errors.
        Path demoLog = tempDir.resolve("demo.stderr");
        Process demo = start(demoLog, "demo-server", "--http", "127.0.0.1:0");
        String upstream = awaitMatch(demo, demoLog, DEMO_ENDPOINT);
        Path rules = tempDir.resolve("rules.yaml");
        Files.writeString(rules, String.join("\n",
                "rules:",
                "  - name: slow-echo",
                "    match: {kind: request, method: tools/call, tool: echo}",
                "    fault: {type: latency, latency: 20ms}",
                "  - name: failing-add",
                "    match: {kind: request, method: tools/call, tool: add}",
                "    probability: 0.5",
                "    fault: {type: error, code: -32603, message: injected}",
                ""), UTF_8);
        int metricsPort = HttpPeers.freePort();
        Path proxyLog = tempDir.resolve("proxy.stderr");
        Process proxy = start(proxyLog, "http", "--listen", "127.0.0.1:0", "--upstream", upstream,
                "--rules", rules.toString(), "--seed", "7", "--quiet",
                // The operations listener, as the sidecar's; the control API on a port of its own.
                "--metrics-listen", "127.0.0.1:" + metricsPort, "--control", "127.0.0.1:0",
                "--max-request-body", "64KiB", "--max-sessions", "2", "--request-head-timeout", "500ms");
        URI endpoint = URI.create("http://127.0.0.1:" + awaitMatch(proxy, proxyLog, LISTENING) + "/mcp");

        // Prometheus with the scrape config of deploy/prometheus, filled in for this target.
        Path config = prometheusConfig(metricsPort);
        DeployTools.Result checkConfig = DeployTools.run(tempDir, List.of(promtool.toString(), "check", "config",
                config.toString()));
        assertThat(checkConfig.exitCode()).as("promtool check config: %s", checkConfig).isZero();
        int prometheusPort = HttpPeers.freePort();
        Path prometheusLog = tempDir.resolve("prometheus.log");
        Process prometheus = new ProcessBuilder(prometheusBin.toString(), "--config.file=" + config,
                "--storage.tsdb.path=" + tempDir.resolve("tsdb"), "--web.listen-address=127.0.0.1:" + prometheusPort,
                "--log.level=warn")
                .redirectErrorStream(true).redirectOutput(prometheusLog.toFile()).start();
        processes.add(prometheus);
        URI api = URI.create("http://127.0.0.1:" + prometheusPort);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .until(() -> !prometheus.isAlive() || status(api.resolve("/-/ready")) == 200);
        assertThat(prometheus.isAlive()).as("prometheus runs; its log:%n%s", read(prometheusLog)).isTrue();

        // The relabelling made the target of the annotations: their port, their path, the pod's labels.
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).until(() -> {
            JsonNode targets = get(api, "/api/v1/targets?state=active").path("data").path("activeTargets");
            return targets.size() == 1 && targets.get(0).path("health").asText().equals("up");
        });
        JsonNode target = get(api, "/api/v1/targets?state=active").path("data").path("activeTargets").get(0);
        assertThat(target.path("scrapeUrl").asText()).isEqualTo("http://127.0.0.1:" + metricsPort + "/metrics");
        assertThat(target.path("labels").path("namespace").asText()).isEqualTo(NAMESPACE);
        assertThat(target.path("labels").path("pod").asText()).isEqualTo(POD);
        assertThat(target.path("labels").path("job").asText()).isEqualTo("mcp-chaos");
        JsonNode loadedRules = get(api, "/api/v1/rules").path("data").path("groups");
        assertThat(loadedRules.findValues("name").stream().map(JsonNode::asText))
                .contains("McpChaosUpstreamErrorsRising", "McpChaosFaultRuleLeftOn");

        drive(endpoint, demo, proxy);

        // The last upstream failures are in Prometheus: every scrape after them is too.
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(250)).until(() ->
                query(api, "sum(mcp_chaos_upstream_errors_total)").findValues("value").stream()
                        .anyMatch(v -> v.get(1).asDouble() >= 5));
        Thread.sleep(2_000); // two more scrapes, so every rate window ends on a sample after the last event

        // The variables' queries: label_values(...) as Grafana asks them.
        assertThat(labelValues(api, "namespace", "mcp_chaos_sessions_active")).contains(NAMESPACE);
        assertThat(labelValues(api, "pod", "mcp_chaos_sessions_active{namespace=~\"" + NAMESPACE + "\"}")).contains(POD);
        JsonNode dashboard = JSON.readTree(DeployTools.deploy("grafana/mcp-chaos-dashboard.json").toFile());
        List<String> variables = new ArrayList<>();
        dashboard.path("templating").path("list").forEach(v -> variables.add(v.path("name").asText()));
        assertThat(variables).containsExactly("datasource", "namespace", "pod");

        // Every panel's every query.
        Map<String, String> empty = new LinkedHashMap<>();
        int checked = 0;
        for (JsonNode panel : panels(dashboard)) {
            for (JsonNode target1 : panel.path("targets")) {
                String expr = fillIn(target1.path("expr").asText());
                assertThat(expr).as("panel '%s'", panel.path("title").asText()).doesNotContain("$");
                JsonNode result = query(api, expr);
                boolean positive = result.findValues("value").stream().map(v -> v.get(1).asText())
                        .anyMatch(v -> !v.equals("NaN") && !v.contains("Inf") && Double.parseDouble(v) > 0);
                if (!positive) {
                    empty.put(panel.path("title").asText() + " [" + target1.path("refId").asText() + "]",
                            expr + " -> " + result);
                }
                checked++;
            }
        }
        assertThat(checked).as("queries in the dashboard").isGreaterThanOrEqualTo(24);
        assertThat(empty).as("panels whose query returned no positive number").isEmpty();
        assertThat(read(proxyLog)).doesNotContain("LEAK:");
    }

    /**
     * About 8 s of traffic, spread over several scrapes so every counter rises between two of
     * them: tool calls (latency on echo, errors on half the adds), malformed JSON, an oversized
     * body, new sessions beyond --max-sessions, request heads left unfinished; then the upstream
     * stops and requests fail for 2.5 s.
     */
    private void drive(URI endpoint, Process demo, Process proxy) throws Exception {
        McpSyncClient client = HttpPeers.sdkClient(endpoint).build();
        Socket partialHead = null;
        int added = 0;
        int failed = 0;
        try {
            client.initialize();
            for (int i = 0; i < 12; i++) {
                long start = System.nanoTime();
                assertThat(HttpPeers.text(client.callTool(McpSchema.CallToolRequest.builder("echo")
                        .arguments(Map.of("text", "hello " + i)).build()))).isEqualTo("hello " + i);
                try {
                    assertThat(HttpPeers.text(client.callTool(McpSchema.CallToolRequest.builder("add")
                            .arguments(Map.of("a", i, "b", 1)).build()))).isEqualTo(String.valueOf(i + 1));
                    added++;
                } catch (McpError e) {
                    assertThat(e.getMessage()).contains("injected");
                    failed++;
                }
                assertThat(client.callTool(McpSchema.CallToolRequest.builder("large")
                        .arguments(Map.of("bytes", 512 * 1024)).build()).isError()).isFalse();
                HttpResponse<String> malformed = post(endpoint, "{bad json", null);
                assertThat(malformed.statusCode()).isEqualTo(400);
                assertThat(malformed.body()).contains("-32700"); // the server's parse error, relayed
                assertThat(post(endpoint, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\""
                        + "x".repeat(70 * 1024) + "\"}}", null).statusCode()).isEqualTo(413);
                assertThat(post(endpoint, initialize(i), null).statusCode()).isEqualTo(200);
                if (partialHead != null) {
                    partialHead.close(); // answered 408 by now: --request-head-timeout 500ms
                }
                partialHead = new Socket(InetAddress.getLoopbackAddress(), endpoint.getPort());
                OutputStream out = partialHead.getOutputStream();
                out.write(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n").getBytes(UTF_8));
                out.flush();
                if (i == 3 || i == 8) {
                    // A short run makes too little garbage for a collection of its own: the GC
                    // panel's pauses come from two collections asked for with jcmd.
                    gc(proxy);
                }
                sleepUntil(start, 650);
            }
            assertThat(added + failed).isEqualTo(12);
            assertThat(added).as("adds answered by the server").isPositive();
            assertThat(failed).as("adds answered with the injected error").isPositive();
        } finally {
            if (partialHead != null) {
                partialHead.close();
            }
            client.closeGracefully();
        }
        // A session stays in the proxy's table for the sessions gauge: this one is never deleted.
        HttpResponse<String> init = post(endpoint, initialize(99), null);
        String session = init.headers().firstValue("mcp-session-id").orElseThrow();

        demo.destroy();
        assertThat(demo.waitFor(20, TimeUnit.SECONDS)).isTrue();
        for (int i = 0; i < 6; i++) {
            long start = System.nanoTime();
            assertThat(post(endpoint, "{\"jsonrpc\":\"2.0\",\"id\":" + (100 + i) + ",\"method\":\"ping\"}", session)
                    .statusCode()).as("a request while the upstream is down").isEqualTo(502);
            sleepUntil(start, 450);
        }
    }

    private static void gc(Process jvm) throws IOException, InterruptedException {
        Path jcmd = TestPeers.java().resolveSibling("jcmd");
        DeployTools.Result result = DeployTools.run(Path.of("."), List.of(jcmd.toString(),
                String.valueOf(jvm.pid()), "GC.run"));
        assertThat(result.exitCode()).as("jcmd GC.run: %s", result).isZero();
    }

    private static String initialize(int i) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + i + ",\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw-" + i + "\",\"version\":\"1\"}}}";
    }

    private HttpResponse<String> post(URI endpoint, String body, String session) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(endpoint).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null) {
            request.header("Mcp-Session-Id", session);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** deploy/prometheus/prometheus.yml with a 1 s scrape, absolute rule paths and one static pod target. */
    private Path prometheusConfig(int metricsPort) throws IOException {
        YAMLMapper yaml = new YAMLMapper();
        Path source = DeployTools.deploy("prometheus/prometheus.yml");
        @SuppressWarnings("unchecked")
        Map<String, Object> config = yaml.readValue(source.toFile(), Map.class);
        @SuppressWarnings("unchecked")
        Map<String, Object> global = (Map<String, Object>) config.get("global");
        global.put("scrape_interval", "1s");
        global.put("evaluation_interval", "1s");
        @SuppressWarnings("unchecked")
        List<String> ruleFiles = (List<String>) config.get("rule_files");
        config.put("rule_files", ruleFiles.stream().map(f -> source.resolveSibling(f).toString()).toList());
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> jobs = (List<Map<String, Object>>) config.get("scrape_configs");
        Map<String, Object> job = jobs.stream().filter(j -> "mcp-chaos".equals(j.get("job_name"))).findFirst()
                .orElseThrow(() -> new AssertionError("no job mcp-chaos in " + source));
        assertThat(job.remove("kubernetes_sd_configs")).as("the job discovers pods").isNotNull();
        // What the pod role would give for the sidecar's MCP port of a pod of deploy/kubernetes:
        // the relabelling must turn it into the annotations' port and path.
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("__meta_kubernetes_namespace", NAMESPACE);
        labels.put("__meta_kubernetes_pod_name", POD);
        labels.put("__meta_kubernetes_pod_label_app_kubernetes_io_name", "mcp-server");
        labels.put("__meta_kubernetes_pod_annotation_prometheus_io_scrape", "true");
        labels.put("__meta_kubernetes_pod_annotation_prometheus_io_port", String.valueOf(metricsPort));
        labels.put("__meta_kubernetes_pod_annotation_prometheus_io_path", "/metrics");
        job.put("static_configs", List.of(Map.of("targets", List.of("127.0.0.1:8080"), "labels", labels)));
        Path out = tempDir.resolve("prometheus.yml");
        yaml.writeValue(out.toFile(), config);
        return out;
    }

    private static String fillIn(String expr) {
        return expr.replace("$namespace", NAMESPACE).replace("$pod", POD)
                .replace("$__rate_interval", RATE_INTERVAL).replace("$__range", RANGE);
    }

    private static List<JsonNode> panels(JsonNode dashboard) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode panel : dashboard.path("panels")) {
            if (panel.path("type").asText().equals("row")) {
                panel.path("panels").forEach(out::add);
            } else {
                out.add(panel);
            }
        }
        return out;
    }

    private JsonNode query(URI api, String expr) throws IOException, InterruptedException {
        JsonNode answer = get(api, "/api/v1/query?query=" + URLEncoder.encode(expr, UTF_8));
        assertThat(answer.path("status").asText()).as("%s -> %s", expr, answer).isEqualTo("success");
        return answer.path("data").path("result");
    }

    private List<String> labelValues(URI api, String label, String match) throws IOException, InterruptedException {
        JsonNode answer = get(api, "/api/v1/label/" + label + "/values?match[]=" + URLEncoder.encode(match, UTF_8));
        List<String> values = new ArrayList<>();
        answer.path("data").forEach(v -> values.add(v.asText()));
        return values;
    }

    private JsonNode get(URI api, String pathAndQuery) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(api + pathAndQuery))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("GET %s: %s", pathAndQuery, response.body()).isEqualTo(200);
        return JSON.readTree(response.body());
    }

    private int status(URI uri) {
        try {
            return http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(2)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private Process start(Path stderr, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(TestPeers.java().toString(), "-Xmx64m",
                "-Dio.netty.leakDetection.level=paranoid", "-jar", TestPeers.mcpChaosJar().toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(stderr.toFile())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD);
        builder.environment().keySet().removeIf(k -> k.startsWith("MCP_CHAOS_") || k.endsWith("JAVA_OPTIONS")
                || k.equals("JAVA_TOOL_OPTIONS"));
        Process process = builder.start();
        processes.add(process);
        return process;
    }

    private static String awaitMatch(Process process, Path log, Pattern pattern) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .until(() -> !process.isAlive() || pattern.matcher(read(log)).find());
        Matcher matcher = pattern.matcher(read(log));
        assertThat(matcher.find()).as("%s in:%n%s", pattern, read(log)).isTrue();
        return matcher.group(1);
    }

    private static void sleepUntil(long startNanos, long millis) throws InterruptedException {
        long left = millis - (System.nanoTime() - startNanos) / 1_000_000;
        if (left > 0) {
            Thread.sleep(left);
        }
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
