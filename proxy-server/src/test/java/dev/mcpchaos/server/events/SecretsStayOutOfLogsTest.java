package dev.mcpchaos.server.events;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.demo.DemoHttpServer;
import dev.mcpchaos.server.host.McpHttpHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Issue 5's acceptance test for the logs: real MCP traffic over HTTP, through the proxy, to the
 * demo server, with an {@code Authorization} header on every request and secrets in a tool
 * call's arguments (and echoed back in a result). The event log has exactly one event per
 * injected fault, naming the arguments by the SHA-256 of their bytes as sent; and no secret
 * appears in the event log, the traffic log, or anything else the proxy logs, at any level.
 */
@Timeout(60)
class SecretsStayOutOfLogsTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String BEARER = "s3cr3t-token-value";
    private static final String API_KEY = "sk-live-abcdef123456";
    private static final String GITHUB_TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    /** The arguments exactly as sent, space included: the digest is of these bytes. */
    private static final String ARGUMENTS = "{\"api_key\":\"" + API_KEY + "\", \"note\":\"" + GITHUB_TOKEN + "\"}";
    private static final List<String> SECRETS = List.of(BEARER, API_KEY, GITHUB_TOKEN,
            // pieces, in case a log showed a secret cut short
            "s3cr3t", "sk-live", "abcdef123456", "ghp_abc", "0123456789");

    private static final String RULES = "rules:\n"
            + "  - name: echo-fails-once\n"
            + "    match: {direction: client_to_server, kind: request, method: tools/call, tool: echo}\n"
            + "    times: 1\n"
            + "    fault: {type: error, code: -32050, message: injected}\n";
    private static final String S = "{\"jsonrpc\":\"2.0\",";

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Test
    void oneEventPerInjectedFaultWithTheArgumentsDigestAndNoSecretInAnyLog() throws Exception {
        ByteArrayOutputStream events = new ByteArrayOutputStream();
        List<FaultEvent> injected = new CopyOnWriteArrayList<>();
        // The traffic log at INFO, and everything the proxy's own classes and fault log say at
        // any level, captured instead of printed.
        Captured logs = Captured.of("traffic", Level.INFO, "faults", Level.INFO, "dev.mcpchaos", Level.TRACE);
        try (McpHttpHost upstream = DemoHttpServer.start(new InetSocketAddress("127.0.0.1", 0));
             HttpProxyBuilder.RunningHttp proxy = McpChaosProxy.http(upstream.endpoint())
                     .rules(RuleSet.parse(RULES, "rules.yaml"))
                     .seed(5)
                     .logTraffic(4096)
                     .events(events, false)
                     .faultListener(injected::add)
                     .start()) {
            URI mcp = URI.create("http://127.0.0.1:" + proxy.address().getPort() + McpHttpHost.PATH);

            HttpResponse<String> init = post(mcp, null, S + "\"id\":1,\"method\":\"initialize\",\"params\":{"
                    + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                    + "\"clientInfo\":{\"name\":\"secrets-test\",\"version\":\"1\"}}}");
            assertThat(init.statusCode()).isEqualTo(200);
            String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
            assertThat(post(mcp, session, S + "\"method\":\"notifications/initialized\"}").statusCode()).isEqualTo(202);

            // The call the rule picks: answered by the proxy with the injected error.
            HttpResponse<String> faulted = post(mcp, session, S + "\"id\":2,\"method\":\"tools/call\","
                    + "\"params\":{\"name\":\"echo\",\"arguments\":" + ARGUMENTS + "}}");
            assertThat(faulted.body()).contains("-32050").contains("injected");
            // The rule is spent: this one reaches the server, which echoes the token back.
            HttpResponse<String> echoed = post(mcp, session, S + "\"id\":3,\"method\":\"tools/call\","
                    + "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"" + GITHUB_TOKEN + "\"}}}");
            assertThat(echoed.body()).contains(GITHUB_TOKEN).doesNotContain("-32050");

            // Exactly one event per injected fault, carrying the digest of the arguments as sent.
            await().atMost(Duration.ofSeconds(10)).until(() -> injected.size() == 1);
            List<JsonNode> faults = faultEvents(events);
            assertThat(faults).hasSize(injected.size());
            JsonNode fault = faults.get(0);
            assertThat(fault.path("rule").asText()).isEqualTo("echo-fails-once");
            assertThat(fault.path("fault").asText()).isEqualTo("error");
            assertThat(fault.path("id").asLong()).isEqualTo(2);
            assertThat(fault.path("tool").asText()).isEqualTo("echo");
            assertThat(fault.path("arguments_sha256").asText()).isEqualTo(sha256(ARGUMENTS));
            assertThat(injected.get(0).argumentsSha256()).isEqualTo(sha256(ARGUMENTS));

            // The traffic log was on and showed both calls and the echoed result, redacted.
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(logs.lines("traffic"))
                    .anySatisfy(l -> assertThat(l).contains("c->s").contains("id=2 tools/call echo")
                            .contains("\"api_key\":\"[redacted]\"").contains("\"note\":\"[redacted]\""))
                    .anySatisfy(l -> assertThat(l).contains("c->s").contains("id=3 tools/call echo"))
                    .anySatisfy(l -> assertThat(l).contains("s->c").contains("id=3").contains("[redacted]")));
        } finally {
            logs.close();
        }

        String eventLog = events.toString(StandardCharsets.UTF_8);
        assertThat(eventLog).contains("\"event\":\"fault\"");
        for (String secret : SECRETS) {
            assertThat(eventLog).as("the event log").doesNotContain(secret);
            assertThat(logs.lines("traffic")).as("the traffic log").noneSatisfy(l -> assertThat(l).contains(secret));
            assertThat(logs.all()).as("any log").noneSatisfy(l -> assertThat(l).contains(secret));
        }
    }

    private static List<JsonNode> faultEvents(ByteArrayOutputStream events) throws IOException {
        List<JsonNode> faults = new ArrayList<>();
        for (String line : events.toString(StandardCharsets.UTF_8).split("\n")) {
            JsonNode event = JSON.readTree(line);
            if (event.path("event").asText().equals("fault")) {
                faults.add(event);
            }
        }
        return faults;
    }

    private HttpResponse<String> post(URI uri, String session, String body) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("Authorization", "Bearer " + BEARER)
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null) {
            request.header("Mcp-Session-Id", session);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String sha256(String text) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    }

    /** Loggers redirected to one list appender (not printed) until closed, then restored. */
    private static final class Captured implements AutoCloseable {

        private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
        private final List<Logger> loggers = new ArrayList<>();
        private final List<Level> levels = new ArrayList<>();

        static Captured of(Object... namesAndLevels) {
            Captured captured = new Captured();
            captured.appender.start();
            for (int i = 0; i < namesAndLevels.length; i += 2) {
                Logger logger = (Logger) LoggerFactory.getLogger((String) namesAndLevels[i]);
                captured.loggers.add(logger);
                captured.levels.add(logger.getLevel());
                logger.setLevel((Level) namesAndLevels[i + 1]);
                logger.addAppender(captured.appender);
                logger.setAdditive(false);
            }
            return captured;
        }

        /** The formatted messages (and any exception text) logged so far. */
        List<String> all() {
            return lines(null);
        }

        /** Those of one logger, or all when {@code name} is null. */
        List<String> lines(String name) {
            List<String> lines = new ArrayList<>();
            // doAppend holds the appender's lock: taking it too makes the list's content visible here.
            synchronized (appender) {
                for (ILoggingEvent event : appender.list) {
                    if (name == null || event.getLoggerName().equals(name)) {
                        String text = event.getFormattedMessage();
                        if (event.getThrowableProxy() != null) {
                            text += " " + event.getThrowableProxy().getClassName() + ": "
                                    + event.getThrowableProxy().getMessage();
                        }
                        lines.add(text);
                    }
                }
            }
            return lines;
        }

        @Override
        public void close() {
            for (int i = 0; i < loggers.size(); i++) {
                loggers.get(i).detachAppender(appender);
                loggers.get(i).setAdditive(true);
                loggers.get(i).setLevel(levels.get(i));
            }
            appender.stop();
        }
    }
}
