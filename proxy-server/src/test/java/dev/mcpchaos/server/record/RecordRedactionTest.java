package dev.mcpchaos.server.record;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.server.McpChaosProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Redaction as a recording does it, end to end (issue #34): a real stdio proxy records a session
 * with a server script ({@code env-echo-server.sh}) that sends every request back, as a server's
 * echo tool would, and answers {@code get-env} with its environment as JSON in a tool result's
 * text, as server-everything's get-env does. Each test reads the cassette's text: the secret is
 * absent, every place it was holds one and the same placeholder, and a value that is no secret
 * (the working directory) is still there.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RecordRedactionTest {

    private static final Pattern PLACEHOLDER = Pattern.compile("<redacted:\\d+>");
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    private static String echo(int id, String message) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                + "\"arguments\":{\"message\":\"" + message + "\"}}}";
    }

    private static String getEnv(int id) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"get-env\"}}";
    }

    private static String call(int id, String tool, String arguments) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":" + arguments + "}}";
    }

    private static Set<String> placeholders(String text) {
        Set<String> found = new TreeSet<>();
        Matcher m = PLACEHOLDER.matcher(text);
        while (m.find()) {
            found.add(m.group());
        }
        return found;
    }

    /** The text of the message at {@code pointer} in each cassette line whose message has it, in order. */
    private static List<String> at(Path cassette, String pointer) throws IOException {
        return Cassette.read(cassette).entries().stream().filter(e -> e.message() != null)
                .map(e -> e.message().at(pointer)).filter(JsonNode::isTextual).map(JsonNode::asText).toList();
    }

    @Test
    void oneSecretHasOnePlaceholderInAnArgumentItsEchoAndAnEnvironmentDumpUnderASecretLookingName()
            throws Exception {
        String token = "tok-" + UUID.randomUUID();
        Path cassette = dir.resolve("one.ndjson");
        try (ScriptServer server = new ScriptServer(dir, Map.of("API_TOKEN", token), b -> b.record(
                Recording.to(cassette).redactEnv("API_TOKEN").environment(Map.of("API_TOKEN", token))))) {
            server.send(echo(1, "my token is " + token));
            server.send(getEnv(2));
            server.awaitAnswers(2);
            // The twin: the secret travelled, unredacted, both ways.
            assertThat(server.received.get(0)).contains(token);
            assertThat(server.received.get(1)).contains("\\\"API_TOKEN\\\": \\\"" + token + "\\\"");
        }
        String text = Files.readString(cassette);
        assertThat(text).doesNotContain(token);
        // One secret, one placeholder: in the argument, in its echo, in the environment dump (where
        // the name API_TOKEN is recognised as a secret's too, and must not redact the placeholder again).
        assertThat(placeholders(text)).containsExactly("<redacted:1>");
        assertThat(at(cassette, "/params/arguments/message")).containsExactly("my token is <redacted:1>",
                "my token is <redacted:1>");
        assertThat(at(cassette, "/result/content/0/text")).singleElement().asString()
                .contains("\"API_TOKEN\": \"<redacted:1>\"");
    }

    @Test
    void aSecretRecognisedInOneMessageIsRedactedInTheLaterOnesWhereNothingGivesItAway() throws Exception {
        String key = "Zq8" + UUID.randomUUID(); // no known prefix, no tell-tale shape
        String bearer = "b7" + UUID.randomUUID().toString().replace("-", "");
        String visible = "visible-" + UUID.randomUUID();
        Path cassette = dir.resolve("learned.ndjson");
        try (ScriptServer server = new ScriptServer(dir, Map.of(), b -> b.record(cassette))) {
            server.send(call(1, "login", "{\"api_key\":\"" + key + "\",\"note\":\"" + visible + "\"}"));
            server.send(call(2, "fetch", "{\"curl\":\"curl -H 'Authorization: Bearer " + bearer + "' https://h\"}"));
            server.send(echo(3, "the key was " + key + " and the token " + bearer + ", " + visible));
            server.awaitAnswers(3);
        }
        String text = Files.readString(cassette);
        assertThat(text).doesNotContain(key).doesNotContain(bearer);
        assertThat(text).contains(visible); // the twin: what is no secret stays
        assertThat(at(cassette, "/params/arguments/api_key")).containsOnly("<redacted:1>");
        assertThat(at(cassette, "/params/arguments/curl")).containsOnly(
                "curl -H 'Authorization: Bearer <redacted:2>' https://h");
        assertThat(at(cassette, "/params/arguments/message")).containsOnly(
                "the key was <redacted:1> and the token <redacted:2>, " + visible);
    }

    @Test
    void aSecretRecognisedLaterIsTakenOutOfTheLinesWrittenBeforeWhenTheRecordingCloses() throws Exception {
        String key = "Zq8" + UUID.randomUUID();
        Path cassette = dir.resolve("earlier.ndjson");
        try (ScriptServer server = new ScriptServer(dir, Map.of(), b -> b.record(cassette))) {
            server.send(echo(1, "remember " + key));
            server.awaitAnswers(1);
            // Streamed: the first message is on disk before anything says that the value is a secret.
            await().atMost(WAIT).until(() -> Files.readString(cassette).contains(key));
            server.send(call(2, "login", "{\"password\":\"" + key + "\"}"));
            server.awaitAnswers(2);
        }
        String text = Files.readString(cassette);
        assertThat(text).doesNotContain(key);
        assertThat(at(cassette, "/params/arguments/message")).containsOnly("remember <redacted:1>");
        assertThat(at(cassette, "/params/arguments/password")).containsOnly("<redacted:1>");
        assertThat(placeholders(text)).containsExactly("<redacted:1>");
        for (String line : Files.readAllLines(cassette)) {
            assertThat(CassetteLineSchema.errors(line)).as(line).isEmpty();
        }
    }

    @Test
    void theWorkingDirectoryIsNoPasswordButAPwdThatIsNoPathIs() throws Exception {
        String oldDirectory = dir.resolve("previous").toString();
        String odbcPassword = "Pw9" + UUID.randomUUID();
        Path cassette = dir.resolve("pwd.ndjson");
        String workingDirectory;
        try (ScriptServer server = new ScriptServer(dir, Map.of("OLDPWD", oldDirectory), b -> b.record(cassette))) {
            server.send(getEnv(1));
            server.send(call(2, "query", "{\"connection\":\"Server=db;Uid=sa;PWD=" + odbcPassword + ";\"}"));
            server.awaitAnswers(2);
            Matcher pwd = Pattern.compile("\\\\\"PWD\\\\\": \\\\\"([^\\\\]+)\\\\\"").matcher(server.received.get(0));
            assertThat(pwd.find()).as(server.received.get(0)).isTrue();
            workingDirectory = pwd.group(1);
        }
        String text = Files.readString(cassette);
        assertThat(at(cassette, "/result/content/0/text")).singleElement().asString()
                .contains("\"PWD\": \"" + workingDirectory + "\"", "\"OLDPWD\": \"" + oldDirectory + "\"");
        // The twin: PWD as ODBC's password keyword, whose value is no path, is still a password.
        assertThat(text).doesNotContain(odbcPassword);
        assertThat(at(cassette, "/params/arguments/connection")).containsOnly("Server=db;Uid=sa;PWD=<redacted:1>;");
    }

    @Test
    void redactEnvTakesTheValueGivenToTheServerAndWarnsOnlyOfAVariableSetNowhere() throws Exception {
        String token = "tok-" + UUID.randomUUID();
        String unset = "MCP_CHAOS_REDACTION_TEST_NEVER_SET";
        Path cassette = dir.resolve("server-env.ndjson");
        Logger logger = (Logger) LoggerFactory.getLogger(Recorder.class);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        logger.addAppender(logged);
        try (ScriptServer server = new ScriptServer(dir, Map.of("API_TOKEN", token), b -> b.record(
                Recording.to(cassette).redactEnv("API_TOKEN").redactEnv(unset)))) {
            server.send(echo(1, "my token is " + token));
            server.awaitAnswers(1);
        } finally {
            logger.detachAppender(logged);
        }
        assertThat(Files.readString(cassette)).doesNotContain(token);
        assertThat(at(cassette, "/params/arguments/message")).containsOnly("my token is <redacted:1>");
        assertThat(logged.list).extracting(ILoggingEvent::getFormattedMessage)
                .filteredOn(m -> m.contains("is not set"))
                .containsExactly("record: --redact-env " + unset + ": the variable is not set, so there is nothing "
                        + "to redact");
    }

    /** A stdio proxy in front of {@code env-echo-server.sh}, with these variables added to its environment. */
    private static final class ScriptServer implements AutoCloseable {

        final List<String> received = new CopyOnWriteArrayList<>();
        private final McpChaosProxy.Running proxy;
        private final OutputStream client;

        ScriptServer(Path dir, Map<String, String> environment, UnaryOperator<McpChaosProxy.StdioBuilder> configure)
                throws IOException, URISyntaxException {
            Path script = Path.of(RecordRedactionTest.class.getResource("env-echo-server.sh").toURI());
            Pipe in = Pipe.open();
            Pipe out = Pipe.open();
            client = Channels.newOutputStream(in.sink());
            Map<String, String> variables = new LinkedHashMap<>(environment);
            variables.put("PWD", dir.toString()); // the shell keeps it: it names the directory it starts in
            proxy = configure.apply(McpChaosProxy.stdio(List.of("sh", script.toString()))
                    .directory(dir)
                    .environment(variables)
                    .clientInput(Channels.newInputStream(in.source()))
                    .clientOutput(Channels.newOutputStream(out.sink()))).start();
            Thread reader = new Thread(() -> {
                try (BufferedReader lines = new BufferedReader(new InputStreamReader(Channels.newInputStream(
                        out.source()), StandardCharsets.UTF_8))) {
                    for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                        received.add(line);
                    }
                } catch (IOException ignored) {
                    // the proxy closed its output
                }
            }, "script-server-reader");
            reader.setDaemon(true);
            reader.start();
        }

        void send(String line) throws IOException {
            client.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            client.flush();
        }

        void awaitAnswers(int count) {
            await().atMost(WAIT).until(() -> received.size() >= count);
        }

        @Override
        public void close() throws IOException {
            client.close();
            proxy.close();
        }
    }
}
