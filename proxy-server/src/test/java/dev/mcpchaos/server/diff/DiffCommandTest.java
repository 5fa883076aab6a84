package dev.mcpchaos.server.diff;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.cli.Main;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code mcp-chaos diff} on cassettes written in the test: the rules the live {@code DiffIT} does
 * not reach (renames, output schemas, resources, prompts, pagination, bounds both ways) and bad input.
 */
class DiffCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String HEADER = "{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":1,"
            + "\"transport\":\"stdio\",\"recordedAt\":\"2026-12-02T06:16:27.673Z\",\"recorder\":\"test\"}";

    @TempDir
    Path dir;

    private int seq;

    private String line(String dir, String message) {
        return "{\"type\":\"message\",\"seq\":" + seq++ + ",\"t\":1.0,\"dir\":\"" + dir
                + "\",\"session\":\"stdio\",\"message\":" + message + "}";
    }

    /** A cassette whose server answered tools/list with {@code tools} (two pages when given two), and the others. */
    private Path cassette(String name, String resources, String prompts, String... toolPages) throws IOException {
        seq = 0;
        List<String> lines = new ArrayList<>(List.of(HEADER));
        int id = 1;
        for (int page = 0; page < toolPages.length; page++) {
            String cursor = page + 1 < toolPages.length ? ",\"nextCursor\":\"p" + (page + 1) + "\"" : "";
            lines.add(line("c2s", "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/list\",\"params\":{}}"));
            lines.add(line("s2c", "{\"jsonrpc\":\"2.0\",\"id\":" + id++ + ",\"result\":{\"tools\":" + toolPages[page]
                    + cursor + "}}"));
        }
        lines.add(line("c2s", "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"resources/list\"}"));
        lines.add(line("s2c", "{\"jsonrpc\":\"2.0\",\"id\":" + id++ + ",\"result\":{\"resources\":" + resources + "}}"));
        lines.add(line("c2s", "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"prompts/list\"}"));
        lines.add(line("s2c", "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{\"prompts\":" + prompts + "}}"));
        Path file = dir.resolve(name);
        Files.write(file, lines);
        return file;
    }

    private static String tool(String name, String properties, String required, String extra) {
        return "{\"name\":\"" + name + "\",\"description\":\"d\",\"inputSchema\":{\"type\":\"object\",\"properties\":"
                + properties + ",\"required\":" + required + "}" + extra + "}";
    }

    private record Run(int exit, String out, String err, JsonNode json) {
    }

    private Run diff(Path before, Path after, String... options) throws IOException {
        Path json = dir.resolve("report-" + System.nanoTime() + ".json");
        List<String> argv = new ArrayList<>(List.of("diff", "--json", json.toString()));
        argv.addAll(List.of(options));
        argv.add(before.toString());
        argv.add(after.toString());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), argv.toArray(String[]::new));
        return new Run(exit, out.toString(), err.toString(), Files.exists(json) ? JSON.readTree(json.toFile()) : null);
    }

    private static List<String> kinds(Run run) {
        List<String> kinds = new ArrayList<>();
        run.json().path("items").forEach(item -> kinds.add(item.path("classification").asText() + " "
                + item.path("kind").asText() + " " + item.path("subject").asText()));
        return kinds;
    }

    @Test
    void aRemovedAndAnAddedToolWithTheSameParametersIsOneBreakingRename() throws IOException {
        String props = "{\"q\":{\"type\":\"string\"},\"n\":{\"type\":\"integer\"}}";
        Run run = diff(cassette("a.ndjson", "[]", "[]", "[" + tool("find", props, "[\"q\"]", "") + "]"),
                cassette("b.ndjson", "[]", "[]", "[" + tool("search", props, "[\"q\"]", "") + "]"));
        assertThat(kinds(run)).containsExactly("breaking tool.renamed tool find");
        assertThat(run.exit()).isEqualTo(1);
    }

    @Test
    void toolsOnTwoPagesAreOneListAndBoundsAndEnumsAreOrdered() throws IOException {
        String before = tool("t", "{\"a\":{\"type\":\"string\",\"enum\":[\"x\",\"y\"]},\"b\":{\"type\":\"integer\","
                + "\"maximum\":10},\"c\":{\"type\":\"string\"},\"d\":{\"type\":\"string\",\"pattern\":\"^a\"}}", "[\"c\"]", "");
        String after = tool("t", "{\"a\":{\"type\":\"string\",\"enum\":[\"x\",\"y\",\"z\"]},\"b\":{\"type\":\"integer\","
                + "\"maximum\":20},\"c\":{\"type\":\"string\",\"maxLength\":5},\"d\":{\"type\":\"string\"}}", "[]", "");
        String other = tool("u", "{}", "[]", "");
        Run run = diff(cassette("a.ndjson", "[]", "[]", "[" + other + "]", "[" + before + "]"),
                cassette("b.ndjson", "[]", "[]", "[" + after + "," + other + "]"));
        assertThat(kinds(run)).containsExactlyInAnyOrder(
                "compatible param.enum.widened tool t / param a",
                "compatible param.maximum.loosened tool t / param b",
                "compatible param.optional tool t / param c",
                "breaking param.maxLength.tightened tool t / param c",
                "compatible param.pattern.removed tool t / param d");
        assertThat(run.exit()).isEqualTo(1);
    }

    @Test
    void outputSchemaFieldsRemovedOrRetypedBreakAndAddedOnesDoNot() throws IOException {
        String out1 = ",\"outputSchema\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},"
                + "\"score\":{\"type\":\"number\"},\"old\":{\"type\":\"string\"}}}";
        String out2 = ",\"outputSchema\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},"
                + "\"score\":{\"type\":\"string\"},\"extra\":{\"type\":\"string\"}}}";
        Run run = diff(cassette("a.ndjson", "[]", "[]", "[" + tool("t", "{}", "[]", out1) + "]"),
                cassette("b.ndjson", "[]", "[]", "[" + tool("t", "{}", "[]", out2) + "]"));
        assertThat(kinds(run)).containsExactlyInAnyOrder(
                "compatible output.added tool t / output extra",
                "breaking output.removed tool t / output old",
                "breaking output.type tool t / output score");
    }

    @Test
    void resourcesAndPromptArgumentsAreComparedByKey() throws IOException {
        Run run = diff(cassette("a.ndjson",
                        "[{\"uri\":\"file:///a\",\"name\":\"a\",\"mimeType\":\"text/plain\"},{\"uri\":\"file:///gone\",\"name\":\"g\"}]",
                        "[{\"name\":\"p\",\"arguments\":[{\"name\":\"topic\",\"required\":true},{\"name\":\"tone\"}]}]",
                        "[]"),
                cassette("b.ndjson",
                        "[{\"uri\":\"file:///a\",\"name\":\"a\",\"mimeType\":\"application/json\"},{\"uri\":\"file:///new\",\"name\":\"n\"}]",
                        "[{\"name\":\"p\",\"arguments\":[{\"name\":\"topic\"},{\"name\":\"tone\",\"required\":true},"
                                + "{\"name\":\"length\"}]}]",
                        "[]"));
        assertThat(kinds(run)).containsExactlyInAnyOrder(
                "breaking resource.mimeType resource file:///a",
                "breaking resource.removed resource file:///gone",
                "compatible resource.added resource file:///new",
                "compatible argument.added prompt p / argument length",
                "compatible argument.optional prompt p / argument topic",
                "breaking argument.required prompt p / argument tone");
    }

    @Test
    void aLineThatIsNotJsonIsBadInputNamingTheFileAndLine() throws IOException {
        Path good = cassette("a.ndjson", "[]", "[]", "[]");
        Path bad = dir.resolve("bad.ndjson");
        Files.write(bad, List.of(HEADER, "{not json"));
        Run run = diff(good, bad);
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains(bad + ":2: not JSON");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void aMissingFileIsBadInputNamingIt() throws IOException {
        Path good = cassette("a.ndjson", "[]", "[]", "[]");
        Run run = diff(good, dir.resolve("nope.ndjson"));
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains("nope.ndjson' does not exist");
    }

    @Test
    void identicalCassettesHaveNoChangeAndExitZero() throws IOException {
        Path a = cassette("a.ndjson", "[]", "[]", "[" + tool("t", "{\"q\":{\"type\":\"string\"}}", "[\"q\"]", "") + "]");
        Run run = diff(a, a, "--fail-on", "compatible");
        assertThat(run.exit()).isZero();
        assertThat(run.json().path("changes").asInt()).isZero();
    }

    @Test
    void refusedOptionsAreBadInputAndTheReasonIsGiven() throws IOException {
        Path a = cassette("a.ndjson", "[]", "[]", "[]");
        Run failOn = diff(a, a, "--fail-on", "warning");
        assertThat(failOn.exit()).isEqualTo(2);
        assertThat(failOn.err()).contains("--fail-on: 'warning' (expected: breaking or compatible)");

        StringWriter err = new StringWriter();
        int exit = Main.run(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true),
                "diff", a.toString(), a.toString(), "--", "node", "server.js");
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("a command after -- [node, server.js] but no side takes it");

        err = new StringWriter();
        exit = Main.run(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), "diff", a.toString());
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("no new side");
    }
}
