package dev.mcpchaos.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteEntry;
import dev.mcpchaos.server.record.CassetteLineSchema;
import dev.mcpchaos.server.record.Recording;
import dev.mcpchaos.server.record.TranscriptImport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code mcp-chaos import}: a direction-and-raw-line transcript becomes a cassette that replays,
 * with its secrets gone; and every way a transcript can be wrong is named with its line.
 */
class ImportCommandTest {

    private static final String TOKEN = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c";

    /** The session as raw lines, each with the way it went: what a transcript holds. */
    private static final List<String[]> SESSION = List.of(
            new String[] {"c2s", "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                    + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"fixture\","
                    + "\"version\":\"1\"}}}"},
            new String[] {"s2c", "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-06-18\","
                    + "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"seed-server\",\"version\":\"0.0.0\"}}}"},
            new String[] {"c2s", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"},
            new String[] {"c2s", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                    + "\"arguments\":{\"text\":\"hello\"}}}"},
            new String[] {"s2c", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\","
                    + "\"text\":\"hello\"}]}}"},
            new String[] {"c2s", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"whoami\","
                    + "\"arguments\":{\"apiKey\":\"" + TOKEN + "\"}}}"},
            new String[] {"s2c", "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\","
                    + "\"text\":\"Authorization: Bearer " + TOKEN + "\"}]}}"},
            new String[] {"s2c", "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":"});

    @TempDir
    Path dir;

    private record Run(int code, String out, String err) {
    }

    private Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Run(code, out.toString(), err.toString());
    }

    private Path transcript(String name, String text) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, text);
        return file;
    }

    private static String jsonLines() {
        StringBuilder text = new StringBuilder();
        ObjectMapper json = new ObjectMapper();
        for (String[] line : SESSION) {
            text.append(json.createObjectNode().put("direction", line[0]).put("line", line[1])).append('\n');
        }
        return text.toString();
    }

    private static String arrowLines() {
        StringBuilder text = new StringBuilder("# the same session, written as > and < lines\n\n");
        for (String[] line : SESSION) {
            text.append(line[0].equals("c2s") ? "> " : "< ").append(line[1]).append('\n');
        }
        return text.toString();
    }

    @Test
    void aJsonLineTranscriptBecomesACassetteWithEveryMessageInOrderAndTheTokenNowhere() throws IOException {
        Path cassette = dir.resolve("seed.ndjson");
        Run run = run("import", transcript("seed.jsonl", jsonLines()).toString(), "-o", cassette.toString());

        assertThat(run.code()).as(run.err()).isZero();
        assertThat(run.err()).contains("8 messages (1 not JSON, kept as raw text)", "1 secret redacted")
                .as("every request has its params").doesNotContain("no params");
        String text = Files.readString(cassette);
        assertThat(text).doesNotContain(TOKEN).contains("<redacted:1>");
        for (String line : text.split("\n")) {
            assertThat(CassetteLineSchema.errors(line)).as(line).isEmpty();
        }
        Cassette read = Cassette.read(cassette);
        assertThat(read.header().protocolVersion()).isEqualTo("2025-06-18");
        assertThat(read.header().serverInfo().path("name").asText()).isEqualTo("seed-server");
        assertThat(read.header().clientInfo().path("name").asText()).isEqualTo("fixture");
        assertThat(read.header().transport()).isEqualTo("stdio");
        List<CassetteEntry> entries = read.entries();
        assertThat(entries).hasSize(SESSION.size());
        for (int i = 0; i < SESSION.size(); i++) {
            assertThat(dirName(entries.get(i))).as("line %d's direction", i).isEqualTo(SESSION.get(i)[0]);
        }
        assertThat(entries.get(3).message().toString()).isEqualTo(SESSION.get(3)[1]);
        assertThat(entries.get(7).raw()).as("the broken line, kept as it was").isEqualTo(SESSION.get(7)[1]);
        assertThat(entries.get(5).message().at("/params/arguments/apiKey").asText()).isEqualTo("<redacted:1>");
        assertThat(entries.get(6).message().at("/result/content/0/text").asText())
                .as("the same secret, the same placeholder").isEqualTo("Authorization: Bearer <redacted:1>");
    }

    @Test
    void importSaysWhenRecordedRequestsCarryNoParamsAndNamesTheMatchThatServesThem() throws IOException {
        Run run = run("import", transcript("fixture.jsonl", String.join("\n",
                "{\"direction\":\"c2s\",\"raw\":\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,\\\"method\\\":\\\"tools/call\\\"}\"}",
                "{\"direction\":\"s2c\",\"raw\":\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,\\\"result\\\":{}}\"}",
                "> {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{}}",
                "< {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}",
                "> {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"_meta\":{\"progressToken\":1}}}",
                "< {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}",
                "> {\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}",
                "> {\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}",
                "> {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
                "> {\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"prompts/get\",\"params\":{\"name\":\"p\"}}"))
                .toString());

        assertThat(run.code()).as(run.err()).isZero();
        assertThat(run.err()).contains("mcp-chaos: " + dir.resolve("fixture.jsonl") + ": 3 recorded requests carry no "
                + "params (tools/call, resources/read x2): the default --match serves them only to requests without "
                + "params; replay --match method serves each method's recordings in order whatever the params");
        assertThat(withoutHeader(run.out())).hasSize(10);
    }

    @Test
    void theArrowShapeGivesTheSameCassetteAsTheJsonShape() throws IOException {
        Run json = run("import", transcript("a.jsonl", jsonLines()).toString());
        Run arrows = run("import", transcript("b.log", arrowLines()).toString());

        assertThat(json.code()).as(json.err()).isZero();
        assertThat(arrows.code()).as(arrows.err()).isZero();
        assertThat(withoutHeader(arrows.out())).isEqualTo(withoutHeader(json.out())).hasSize(SESSION.size());
    }

    @Test
    void theImportedCassetteReplaysAsTheServerAndARequestItNeverSawIsNotAnswered() throws IOException {
        Path cassette = dir.resolve("seed.ndjson");
        assertThat(run("import", transcript("seed.jsonl", jsonLines()).toString(), "-o", cassette.toString()).code())
                .isZero();
        String client = "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"fixture\",\"version\":\"1\"}}}\n"
                + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                + "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                + "\"arguments\":{\"text\":\"hello\"}}}\n"
                + "{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                + "\"arguments\":{\"text\":\"other\"}}}\n";

        List<JsonNode> answers = replay(cassette, client);

        assertThat(answers).hasSize(3);
        assertThat(answers.get(0).path("id").asText()).isEqualTo("a");
        assertThat(answers.get(0).at("/result/serverInfo/name").asText()).isEqualTo("seed-server");
        assertThat(answers.get(1).path("id").asText()).isEqualTo("b");
        assertThat(answers.get(1).at("/result/content/0/text").asText()).isEqualTo("hello");
        assertThat(answers.get(2).path("id").asText()).isEqualTo("c");
        assertThat(answers.get(2).at("/error/code").asInt()).as("no recording of these arguments").isEqualTo(-32601);
    }

    @Test
    void anEnvironmentValueNamedForRedactionIsReplacedWhereverItAppearsAndATwinWithoutItIsKept() throws IOException {
        String transcript = "> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                + "\"open\",\"arguments\":{\"path\":\"/home/plainvalue42/notes\"}}}\n";
        Recording named = Recording.toFile(dir.resolve("unused")).redactEnv("SEED_USER")
                .environment(Map.of("SEED_USER", "plainvalue42"));
        ByteArrayOutputStream redacted = new ByteArrayOutputStream();
        TranscriptImport.Result result = TranscriptImport.convert(new StringReader(transcript), "t", redacted, named,
                Instant.parse("2026-12-03T12:00:00Z"));
        ByteArrayOutputStream kept = new ByteArrayOutputStream();
        TranscriptImport.convert(new StringReader(transcript), "t", kept, Recording.toFile(dir.resolve("unused")),
                Instant.parse("2026-12-03T12:00:00Z"));

        assertThat(result.secrets()).isEqualTo(1);
        assertThat(redacted.toString(StandardCharsets.UTF_8)).doesNotContain("plainvalue42")
                .contains("\"path\":\"/home/<redacted:1>/notes\"", "\"recordedAt\":\"2026-12-03T12:00:00Z\"");
        assertThat(kept.toString(StandardCharsets.UTF_8)).as("not named: not a secret")
                .contains("\"path\":\"/home/plainvalue42/notes\"");
    }

    @Test
    void aRedactEnvVariableThatIsNotSetIsSaidAndTheImportGoesOn() throws IOException {
        Run run = run("import", transcript("t.log", "> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
                .toString(), "--redact-env", "MCP_CHAOS_IMPORT_TEST_NEVER_SET");

        assertThat(run.code()).as(run.err()).isZero();
        assertThat(run.err()).contains("--redact-env MCP_CHAOS_IMPORT_TEST_NEVER_SET: the variable is not set",
                "1 message, 0 secrets redacted");
        assertThat(withoutHeader(run.out())).hasSize(1);
    }

    @Test
    void timesAreKeptWhenTheTranscriptHasThem() throws IOException {
        Run run = run("import", transcript("t.jsonl",
                "{\"dir\":\"client\",\"t\":0,\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}\n"
                        + "{\"dir\":\"server->client\",\"t\":12.5,\"raw\":\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,"
                        + "\\\"result\\\":{}}\"}\n").toString());

        assertThat(run.code()).as(run.err()).isZero();
        List<String> lines = withoutHeader(run.out());
        assertThat(lines.get(0)).contains("\"t\":0.000", "\"dir\":\"c2s\"");
        assertThat(lines.get(1)).contains("\"t\":12.500", "\"dir\":\"s2c\"", "\"message\":{\"jsonrpc\":\"2.0\",\"id\":1");
    }

    @Test
    void whatCannotBeReadIsRefusedNamingTheLineAndNothingIsWritten() throws IOException {
        Path cassette = dir.resolve("never.ndjson");
        Map<String, String> cases = Map.of(
                "{\"direction\":\"in\",\"line\":\"{}\"}\n", "bad.jsonl:1: direction 'in' (expected: c2s or s2c",
                "> {}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", "bad.jsonl:2: a JSON-RPC message with no direction",
                "> {}\nGET /mcp\n", "bad.jsonl:2: 'GET /mcp' (expected: a JSON object with a direction",
                "{\"direction\":\"c2s\",\"t\":5,\"line\":\"{}\"}\n{\"direction\":\"s2c\",\"t\":2,\"line\":\"{}\"}\n",
                "bad.jsonl:2: t 2.0 before the line above's 5.0",
                "{\"direction\":\"c2s\",\"line\":{\"jsonrpc\":\"2.0\"}}\n", "bad.jsonl:1: line is object",
                "# nothing but a comment\n", "bad.jsonl: no messages",
                "<\n", "bad.jsonl:1: '<' with no message after it");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            Path bad = transcript("bad.jsonl", c.getKey());
            Run run = run("import", bad.toString(), "-o", cassette.toString());
            assertThat(run.code()).as(c.getKey()).isEqualTo(2);
            assertThat(run.err()).as(c.getKey()).contains(c.getValue());
            assertThat(cassette).as("nothing written for " + c.getKey()).doesNotExist();
        }
        assertThat(dir.toFile().list()).as("no temporary file left").containsExactly("bad.jsonl");
        assertThat(run("import", dir.resolve("missing.jsonl").toString()).err()).contains("missing.jsonl: no such file");
    }

    private List<JsonNode> replay(Path cassette, String input) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CommandLine cli = new CommandLine(new Main());
        cli.addSubcommand(new ReplayCommand(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)), out));
        cli.setDefaultValueProvider(new EnvironmentDefaults(new HashMap<>()));
        cli.setErr(new PrintWriter(new StringWriter(), true));
        assertThat(Main.execute(cli, "replay", cassette.toString(), "--quiet", "--journal=off")).isZero();
        ObjectMapper json = new ObjectMapper();
        List<JsonNode> answers = new ArrayList<>();
        for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
            if (!line.isBlank()) {
                answers.add(json.readTree(line));
            }
        }
        return answers;
    }

    private static List<String> withoutHeader(String cassette) {
        List<String> lines = cassette.lines().toList();
        assertThat(lines.get(0)).contains("\"type\":\"header\"", "\"recorder\":\"mcp-chaos ");
        return lines.subList(1, lines.size());
    }

    /** The cassette's name for an entry's direction. */
    private static String dirName(CassetteEntry entry) {
        return entry.direction() == Direction.CLIENT_TO_SERVER ? "c2s" : "s2c";
    }
}
