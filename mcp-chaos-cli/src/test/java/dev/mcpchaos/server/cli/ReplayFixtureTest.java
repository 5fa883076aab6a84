package dev.mcpchaos.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue #34, a fixture a test spawns per test: {@code mcp-chaos replay} of the
 * {@code {"direction":"c2s","raw":"..."}} transcript such a fixture records, as it is (imported
 * on the fly, as {@code mcp-chaos import} imports it), and {@code --match method}, which serves
 * each method's recordings in order whatever the params the test sends. Through the command line,
 * with a client that sends requests and checks the answers it gets.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReplayFixtureTest {

    private static final String TOKEN = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** What a fixture recorded once: raw lines with the way each went. Its resources/read had no params. */
    private static final List<String[]> RECORDED = List.of(
            new String[] {"c2s", "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                    + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"recorder\","
                    + "\"version\":\"1\"}}}"},
            new String[] {"s2c", "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-06-18\","
                    + "\"capabilities\":{\"tools\":{},\"resources\":{}},\"serverInfo\":{\"name\":\"weather\","
                    + "\"version\":\"1.0.0\"}}}"},
            new String[] {"c2s", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"},
            new String[] {"c2s", toolCall(1, "get_weather", "{\"city\":\"Paris\"}")},
            new String[] {"s2c", text(1, "Paris: sunny")},
            new String[] {"c2s", toolCall(2, "get_weather", "{\"city\":\"Oslo\"}")},
            new String[] {"s2c", text(2, "Oslo: snow")},
            new String[] {"c2s", toolCall(3, "get_time", "{\"tz\":\"UTC\"}")},
            new String[] {"s2c", text(3, "12:00")},
            new String[] {"c2s", "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\"}"},
            new String[] {"s2c", "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"contents\":[{\"uri\":\"file:///notes.txt\","
                    + "\"text\":\"notes\"}]}}"},
            new String[] {"c2s", toolCall(5, "whoami", "{\"apiKey\":\"" + TOKEN + "\"}")},
            new String[] {"s2c", text(5, "Authorization: Bearer " + TOKEN)});

    private static String toolCall(Object id, String tool, String arguments) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + JSON.valueToTree(id) + ",\"method\":\"tools/call\",\"params\":{\"name\":\""
                + tool + "\"" + (arguments == null ? "" : ",\"arguments\":" + arguments) + "}}";
    }

    private static String text(int id, String text) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\""
                + text + "\"}]}}";
    }

    private static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":"
            + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"the-test\","
            + "\"version\":\"2\"}}}";
    private static final String INITIALIZED = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

    @TempDir
    Path dir;

    private record Run(int code, List<JsonNode> answers, String err) {
        /** The answer with this id (the replay answers in order, but a test should not depend on it). */
        JsonNode answer(Object id) {
            JsonNode wanted = JSON.valueToTree(id);
            return answers.stream().filter(a -> wanted.equals(a.get("id"))).findFirst()
                    .orElseThrow(() -> new AssertionError("no answer with id " + wanted + " in " + answers));
        }

        String textOf(Object id) {
            JsonNode answer = answer(id);
            return answer.has("error") ? answer.at("/error/code").asInt() + " " + answer.at("/error/message").asText()
                    : answer.at("/result/content/0/text").asText();
        }
    }

    /** The transcript as the fixture writes it: {"direction":...,"raw":...} lines. */
    private Path transcript(List<String[]> lines) throws IOException {
        StringBuilder text = new StringBuilder();
        for (String[] line : lines) {
            text.append(JSON.createObjectNode().put("direction", line[0]).put("raw", line[1])).append('\n');
        }
        Path file = dir.resolve("transcript.ndjson");
        Files.writeString(file, text);
        return file;
    }

    /** {@code mcp-chaos replay FILE ARGS...}, the client's lines on its stdin, what it wrote on stdout as JSON. */
    private static Run replay(Path file, List<String> clientLines, String... args) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        String input = String.join("\n", clientLines) + "\n";
        CommandLine cli = new CommandLine(new Main());
        cli.addSubcommand(new ReplayCommand(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)), out));
        cli.setDefaultValueProvider(new EnvironmentDefaults(new HashMap<>()));
        StringWriter err = new StringWriter();
        cli.setErr(new PrintWriter(err, true));
        List<String> all = new ArrayList<>(List.of("replay", file.toString(), "--quiet", "--journal=off"));
        all.addAll(List.of(args));
        int code = Main.execute(cli, all.toArray(String[]::new));
        List<JsonNode> answers = new ArrayList<>();
        for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
            if (!line.isBlank()) {
                answers.add(JSON.readTree(line));
            }
        }
        return new Run(code, answers, err.toString());
    }

    /** The pin of #34: the fixture's transcript, replayed as it is, by method, to a test that sends other arguments. */
    @Test
    void aDirectionAndRawTranscriptReplaysAsItIsWithMatchMethod() throws IOException {
        Path transcript = transcript(RECORDED);
        Run run = replay(transcript, List.of(INITIALIZE, INITIALIZED,
                toolCall(10, "get_weather", "{\"city\":\"Berlin\"}"),
                toolCall(11, "get_weather", "{\"city\":\"Rome\",\"units\":\"C\"}"),
                toolCall(12, "get_time", null),
                toolCall("thirteen", "get_weather", null),
                "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"resources/read\",\"params\":{\"uri\":\"file:///other.txt\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"resources/read\"}",
                toolCall(16, "forecast", "{\"days\":3}")),
                "--match", "method", "--fail-on-unmatched");

        assertThat(run.answers()).as(run.err()).hasSize(8);
        assertThat(run.answer("init").at("/result/serverInfo/name").asText()).isEqualTo("weather");
        assertThat(run.textOf(10)).as("get_weather's first recording, whatever the city").isEqualTo("Paris: sunny");
        assertThat(run.textOf(11)).as("then its second, in recorded order").isEqualTo("Oslo: snow");
        assertThat(run.textOf(12)).as("another tool's call gets its own answer, never get_weather's")
                .isEqualTo("12:00");
        assertThat(run.textOf("thirteen")).as("beyond the recordings: the last again").isEqualTo("Oslo: snow");
        assertThat(run.answer(14).at("/result/contents/0/text").asText()).as("recorded without params, asked with")
                .isEqualTo("notes");
        assertThat(run.answer(15).at("/result/contents/0/text").asText()).isEqualTo("notes");
        assertThat(run.textOf(16)).as("a tool never recorded is not served another's answer")
                .startsWith("-32601 no recording for tools/call {\"name\":\"forecast\"} (closest recorded: tools/call "
                        + "{\"name\":\"")
                .endsWith("; match: method)");
        assertThat(run.code()).as("the unrecorded tool counts as unmatched").isEqualTo(1);
        assertThat(run.err()).contains("mcp-chaos: replay: " + transcript + " is a transcript (direction/raw lines), "
                + "imported on the fly (13 messages, 1 secret redacted); mcp-chaos import writes it as a cassette")
                .as("--match method serves paramless recordings: nothing to warn about").doesNotContain("no params");
    }

    @Test
    void aTranscriptReplayedDirectlyAnswersAsTheCassetteImportMakesOfIt() throws IOException {
        Path transcript = transcript(RECORDED);
        Path cassette = dir.resolve("imported.ndjson");
        StringWriter importErr = new StringWriter();
        assertThat(Main.run(new PrintWriter(new StringWriter(), true), new PrintWriter(importErr, true), "import",
                transcript.toString(), "-o", cassette.toString())).as(importErr.toString()).isZero();
        List<String> client = List.of(INITIALIZE, INITIALIZED,
                toolCall(1, "get_weather", "{\"city\":\"Oslo\"}"),
                toolCall(2, "whoami", "{\"apiKey\":\"" + TOKEN + "\"}"),
                toolCall(3, "get_weather", "{\"city\":\"Berlin\"}"));

        Run direct = replay(transcript, client);
        Run imported = replay(cassette, client);

        assertThat(direct.code()).as(direct.err()).isZero();
        assertThat(direct.answers()).hasSize(4).isEqualTo(imported.answers());
        assertThat(direct.textOf(1)).isEqualTo("Oslo: snow");
        assertThat(direct.textOf(2)).as("redacted on the fly as import redacts: the live secret still matches")
                .isEqualTo("Authorization: Bearer <redacted:1>");
        assertThat(direct.textOf(3)).as("the default match: params count")
                .startsWith("-32601 no recording for tools/call");
        assertThat(direct.err()).contains("imported on the fly").doesNotContain(TOKEN)
                .as("the default match and a paramless recording: said, with the mode that serves it")
                .contains("mcp-chaos: " + transcript + ": 1 recorded request carries no params (resources/read): the "
                        + "default --match serves it only to requests without params; replay --match method serves "
                        + "each method's recordings in order whatever the params");
        assertThat(imported.err()).as("a cassette is read as it is").doesNotContain("imported on the fly");
    }

    @Test
    void theMinus32601NamesTheClosestRecordedAndMatchMethodWhenThatWouldServeIt() throws IOException {
        Path transcript = transcript(RECORDED);
        List<String> client = List.of(INITIALIZE,
                toolCall(1, "get_weather", "{\"city\":\"Paris\",\"units\":\"C\"}"),
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{\"uri\":\"file:///notes.txt\"}}",
                toolCall(3, "forecast", null),
                "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/list\"}");

        Run byParams = replay(transcript, client);

        assertThat(byParams.textOf(1)).isEqualTo("-32601 no recording for tools/call {\"arguments\":{\"city\":\"Paris\","
                + "\"units\":\"C\"},\"name\":\"get_weather\"} (closest recorded: tools/call {\"arguments\":{\"city\":"
                + "\"Paris\"},\"name\":\"get_weather\"}; --match method would serve it)");
        assertThat(byParams.textOf(2)).isEqualTo("-32601 no recording for resources/read {\"uri\":\"file:///notes.txt\"} "
                + "(closest recorded: resources/read {}; --match method would serve it)");
        assertThat(byParams.textOf(3)).as("no recording of that tool: --match method would not serve it either")
                .startsWith("-32601 no recording for tools/call {\"name\":\"forecast\"} (closest recorded: tools/call ")
                .doesNotContain("--match method");
        assertThat(byParams.textOf(4)).startsWith("-32601 no recording for prompts/list {}")
                .doesNotContain("--match method");

        // The twin: what the message said would serve them does.
        Run byMethod = replay(transcript, client, "--match", "method");
        assertThat(byMethod.textOf(1)).isEqualTo("Paris: sunny");
        assertThat(byMethod.answer(2).at("/result/contents/0/text").asText()).isEqualTo("notes");
        assertThat(byMethod.textOf(3)).startsWith("-32601 no recording for tools/call {\"name\":\"forecast\"}");
    }

    @Test
    void matchMethodServesACallRecordedWithoutParamsToAToolThatHasNoRecordingOfItsOwn() throws IOException {
        Path transcript = transcript(List.of(
                new String[] {"c2s", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}"},
                new String[] {"s2c", text(1, "any tool")},
                new String[] {"c2s", toolCall(2, "get_time", "{}")},
                new String[] {"s2c", text(2, "12:00")}));

        Run run = replay(transcript, List.of(toolCall(1, "get_time", "{\"tz\":\"CET\"}"),
                toolCall(2, "get_weather", "{\"city\":\"Oslo\"}"),
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\"}"), "--match", "method");

        assertThat(run.textOf(1)).as("its own recording first").isEqualTo("12:00");
        assertThat(run.textOf(2)).as("no recording of its own: the nameless one").isEqualTo("any tool");
        assertThat(run.textOf(3)).isEqualTo("any tool");
    }

    @Test
    void matchMethodWithOnExhaustedErrorRefusesARepeatBeyondTheRecordings() throws IOException {
        Run run = replay(transcript(RECORDED), List.of(toolCall(1, "get_weather", null),
                toolCall(2, "get_weather", null), toolCall(3, "get_weather", null), toolCall(4, "get_time", null)),
                "--match", "method", "--on-exhausted", "error");

        assertThat(run.textOf(1)).isEqualTo("Paris: sunny");
        assertThat(run.textOf(2)).isEqualTo("Oslo: snow");
        assertThat(run.textOf(3)).isEqualTo("-32601 no recording left for tools/call {\"name\":\"get_weather\"}: it was "
                + "recorded 2 time(s) and every one was served (on-exhausted: error)");
        assertThat(run.textOf(4)).as("another tool's queue is its own").isEqualTo("12:00");
    }

    @Test
    void aFileThatIsNeitherACassetteNorATranscriptIsRefusedNamingImportAndTheShapesItReads() throws IOException {
        Map<String, String> cases = Map.of(
                "{\"id\":1,\"text\":\"hi\"}\n", ":1: no direction (expected: ",
                "hello\n", ":1: 'hello' (expected: a JSON object with a direction and a line, or a line starting "
                        + "with > or <)",
                "{\"direction\":\"c2s\",\"raw\":\"{}\"}\n\n{\"direction\":\"in\",\"raw\":\"{}\"}\n",
                ":3: direction 'in' (expected: c2s or s2c",
                "\n", ": no messages",
                "{\"type\":\"message\",\"seq\":0,\"t\":0,\"dir\":\"c2s\",\"session\":\"stdio\",\"message\":{}}\n",
                ":1: type 'message' (expected: the first line to be the header, type 'header'); a file without a "
                        + "header is replayed only as a transcript, read as mcp-chaos import does: "
                        + "{\"direction\":\"c2s\",\"raw\":\"{...}\"} lines");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            Path file = dir.resolve("bad.ndjson");
            Files.writeString(file, c.getKey());
            Run run = replay(file, List.of(toolCall(1, "get_time", null)));
            assertThat(run.code()).as(c.getKey()).isEqualTo(2);
            assertThat(run.answers()).as(c.getKey()).isEmpty();
            assertThat(run.err()).as(c.getKey()).contains("mcp-chaos: " + file + c.getValue())
                    .contains("{\"direction\":\"c2s\",\"raw\":\"{...}\"}", "lines starting with > (client to server)",
                            "as mcp-chaos import does")
                    .hasLineCount(1);
        }
    }

    @Test
    void aBadMatchValueNamesMethodAmongTheModes() throws IOException {
        Run run = replay(transcript(RECORDED), List.of(), "--match", "methods");
        assertThat(run.code()).isEqualTo(2);
        assertThat(run.err()).contains("--match: 'methods' (expected: default, method, sequential or strict)");
    }
}
