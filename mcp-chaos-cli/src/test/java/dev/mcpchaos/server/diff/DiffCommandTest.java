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

    /**
     * A cassette of exchanges, each a request's method and params and the result (or, starting with
     * {@code "error"}, the error member) of its answer; a null answer is a request left unanswered.
     */
    private Path recording(String name, String... methodParamsAnswer) throws IOException {
        seq = 0;
        List<String> lines = new ArrayList<>(List.of(HEADER));
        for (int i = 0, id = 1; i < methodParamsAnswer.length; i += 3, id++) {
            lines.add(line("c2s", "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"" + methodParamsAnswer[i]
                    + "\",\"params\":" + methodParamsAnswer[i + 1] + "}"));
            String answer = methodParamsAnswer[i + 2];
            if (answer != null) {
                lines.add(line("s2c", "{\"jsonrpc\":\"2.0\",\"id\":" + id + ","
                        + (answer.startsWith("\"error\"") ? answer : "\"result\":" + answer) + "}"));
            }
        }
        Path file = dir.resolve(name);
        Files.write(file, lines);
        return file;
    }

    private static List<String> notCompared(Run run) {
        List<String> subjects = new ArrayList<>();
        run.json().path("notCompared").forEach(item -> subjects.add(item.path("subject").asText() + ": "
                + item.path("reason").asText()));
        return subjects;
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

    @Test
    void listsACassetteNeverAskedForAreNotComparedAndTheOutputSaysSo() throws IOException {
        // The old recording asked for tools only: the new side's resources and prompts are not
        // "added", they are what the old side cannot tell (issue #34).
        String tools = "{\"tools\":[" + tool("t", "{}", "[]", "") + "]}";
        Path before = recording("a.ndjson", "tools/list", "{}", tools);
        Path after = recording("b.ndjson", "tools/list", "{}", tools,
                "resources/list", "{}", "{\"resources\":[{\"uri\":\"file:///a\",\"name\":\"a\"}]}",
                "prompts/list", "{}", "{\"prompts\":[{\"name\":\"p\"}]}",
                "resources/templates/list", "{}", null); // asked, never answered: not known either
        Run run = diff(before, after, "--fail-on", "compatible");
        assertThat(kinds(run)).isEmpty();
        assertThat(run.exit()).isZero();
        assertThat(notCompared(run)).containsExactly(
                "resources: " + before + " never listed them (no answer to resources/list in it)",
                "resource templates: neither side listed them (no answer to resources/templates/list in either)",
                "prompts: " + before + " never listed them (no answer to prompts/list in it)");
        assertThat(run.out()).contains("old: 1 tool, resources not listed, resource templates not listed, "
                        + "prompts not listed, 0 recorded calls")
                .contains("not compared: resources: " + before + " never listed them")
                .contains("no changes in what both sides have (3 not compared)");
    }

    @Test
    void aListOnlyPartlyRecordedReportsNoAdditionsToItButStillItsRemovals() throws IOException {
        // The old recording holds the first page of tools/list and never followed its nextCursor:
        // a tool the new side has and that page lacks may be on the pages never fetched.
        Path before = recording("a.ndjson", "tools/list", "{}", "{\"tools\":[" + tool("a", "{}", "[]", "") + ","
                + tool("gone", "{}", "[]", "") + "],\"nextCursor\":\"p2\"}");
        Path after = recording("b.ndjson", "tools/list", "{}", "{\"tools\":[" + tool("a", "{}", "[]", "") + ","
                + tool("b", "{}", "[]", "") + "]}");
        Run run = diff(before, after);
        assertThat(kinds(run)).containsExactly("breaking tool.removed tool gone");
        assertThat(notCompared(run)).contains("tools added: " + before + " holds 1 page of tools/list and not "
                + "the rest (a nextCursor it never followed)");
    }

    @Test
    void callsRecordedOnOneSideOnlyAreNotComparedAndTheOutputSaysSo() throws IOException {
        String tools = "{\"tools\":[" + tool("t", "{\"q\":{\"type\":\"string\"}}", "[]", "") + "]}";
        Path before = recording("a.ndjson", "tools/list", "{}", tools,
                "tools/call", "{\"name\":\"t\",\"arguments\":{\"q\":\"x\"}}", "{\"content\":[]}",
                "tools/call", "{\"name\":\"t\",\"arguments\":{\"q\":\"y\"}}", "{\"content\":[],\"isError\":true}");
        Path after = recording("b.ndjson", "tools/list", "{}", tools,
                "tools/call", "{\"name\":\"t\",\"arguments\":{\"q\":\"y\"}}", "\"error\":{\"code\":-32602,\"message\":\"no\"}");
        Run run = diff(before, after);
        assertThat(kinds(run)).containsExactly("breaking call.error-class tools/call t {\"q\":\"y\"}");
        assertThat(notCompared(run)).contains("recorded calls: 1 call recorded only in " + before
                + " (no call of the same tool with the same arguments in " + after + ")");
    }

    /**
     * A stdio server in sh: tool {@code ask} asks the client a question (sampling) before it
     * answers, and answers only when refused; tool {@code die} exits.
     */
    private static final String ASKING_SERVER = String.join("\n",
            "while IFS= read -r line; do",
            "  id=$(printf '%s' \"$line\" | sed -n 's/.*\"id\":\\([0-9]*\\).*/\\1/p')",
            "  case \"$line\" in",
            "    *'\"method\":\"initialize\"'*) echo '{\"jsonrpc\":\"2.0\",\"id\":'$id',\"result\":{\"protocolVersion\":"
                    + "\"2025-06-18\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}' ;;",
            "    *'\"method\":\"tools/list\"'*) echo '{\"jsonrpc\":\"2.0\",\"id\":'$id',\"result\":{\"tools\":["
                    + "{\"name\":\"ask\",\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"die\",\"inputSchema\":"
                    + "{\"type\":\"object\"}}]}}' ;;",
            "    *'\"method\":\"tools/call\"'*'\"name\":\"ask\"'*)",
            "      echo '{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"sampling/createMessage\",\"params\":{}}'",
            "      IFS= read -r reply",
            "      case \"$reply\" in *'\"id\":\"s1\"'*'-32601'*) echo '{\"jsonrpc\":\"2.0\",\"id\":'$id',\"result\":"
                    + "{\"content\":[]}}' ;; esac ;;",
            "    *'\"method\":\"tools/call\"'*'\"name\":\"die\"'*) exit 3 ;;",
            "    *'\"method\":\"notifications/'*) ;;",
            "    *) echo '{\"jsonrpc\":\"2.0\",\"id\":'$id',\"error\":{\"code\":-32601,\"message\":\"no\"}}' ;;",
            "  esac",
            "done");

    @Test
    void aReplayRefusesTheServersOwnRequestsAndClassesAServerThatExitsAsNoAnswer() throws IOException {
        Path server = dir.resolve("asking-server.sh");
        Files.writeString(server, ASKING_SERVER + "\n");
        String tools = "{\"tools\":[{\"name\":\"ask\",\"inputSchema\":{\"type\":\"object\"}},"
                + "{\"name\":\"die\",\"inputSchema\":{\"type\":\"object\"}}]}";
        Path recorded = recording("a.ndjson", "tools/list", "{}", tools,
                "tools/call", "{\"name\":\"ask\",\"arguments\":{}}", "{\"content\":[]}",
                "tools/call", "{\"name\":\"die\"}", "{\"content\":[]}");
        Path json = dir.resolve("replay.json");
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), "diff", "--json", json.toString(),
                "--timeout", "10", "--replay-calls", recorded.toString(), "--new-server", "--", "sh", server.toString());
        assertThat(exit).as(out + err.toString()).isEqualTo(1);
        Run run = new Run(exit, out.toString(), err.toString(), JSON.readTree(json.toFile()));
        // ask answered as recorded: the sampling request was refused, not left to hold up the answer.
        assertThat(kinds(run)).containsExactly("breaking call.error-class tools/call die {}");
        assertThat(run.json().at("/items/0/detail").asText()).isEqualTo("answered with result, now no answer");
        assertThat(run.out()).contains("new: 2 tools, 0 resources, 0 resource templates, 0 prompts, 2 calls replayed");
    }
}
