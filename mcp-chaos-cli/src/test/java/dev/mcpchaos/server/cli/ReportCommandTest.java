package dev.mcpchaos.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.record.Cassette;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code mcp-chaos report} on the files one real session left ({@link ReportSession}: the demo
 * server behind {@code mcp-chaos stdio} with a rule that fails {@code tools/call add}): each kind
 * recognised by its content, each one's data in the file as the page reads it, several at once,
 * and a file that is none of them refused by name with nothing written (its twin, a real event
 * log under the same name, is written). And {@code --html} on {@code --check}: the same session's
 * journal, faults and checks, written at its end.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReportCommandTest {

    private static final Pattern DATA = Pattern.compile(
            "<script id=\"mcp-chaos-data\" type=\"application/json\">(.*?)</script>", Pattern.DOTALL);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path sessionDir;
    private static ReportSession session;

    @TempDir
    Path dir;

    @BeforeAll
    static void aRealSession() throws Exception {
        session = ReportSession.run(sessionDir);
        assertThat(session.code()).as("the session's exit code (the demo server's)").isZero();
    }

    /** A run of {@code mcp-chaos report}: its exit code and what it said on stderr. */
    private record Run(int code, String err) {
    }

    private static Run report(String... args) {
        StringWriter err = new StringWriter();
        List<String> argv = new ArrayList<>(List.of("report"));
        argv.addAll(List.of(args));
        int code = Main.run(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true),
                argv.toArray(String[]::new));
        return new Run(code, err.toString());
    }

    /** The data a report file holds, as the page reads it. */
    private static JsonNode data(Path html) throws Exception {
        Matcher m = DATA.matcher(Files.readString(html));
        assertThat(m.find()).as("the data block of " + html).isTrue();
        return JSON.readTree(m.group(1));
    }

    private static List<JsonNode> faultLines(Path eventLog) throws Exception {
        List<JsonNode> faults = new ArrayList<>();
        for (String line : Files.readAllLines(eventLog)) {
            JsonNode event = JSON.readTree(line);
            if (event.path("event").asText().equals("fault")) {
                faults.add(event);
            }
        }
        return faults;
    }

    @Test
    void eachInputIsRecognisedByItsContent() throws Exception {
        assertThat(ReportCommand.recognise(Files.readString(session.events()))).isEqualTo(ReportCommand.Kind.EVENT_LOG);
        assertThat(ReportCommand.recognise(Files.readString(session.journal()))).isEqualTo(ReportCommand.Kind.JOURNAL);
        assertThat(ReportCommand.recognise(Files.readString(session.cassette()))).isEqualTo(ReportCommand.Kind.CASSETTE);
        assertThat(ReportCommand.recognise(Files.readString(session.check()))).isEqualTo(ReportCommand.Kind.CHECK_REPORT);
        // Pretty or compact, the same: the check report is written pretty, a journal dump compact.
        assertThat(ReportCommand.recognise(JSON.readTree(Files.readString(session.check())).toString()))
                .isEqualTo(ReportCommand.Kind.CHECK_REPORT);
        assertThat(ReportCommand.recognise(JSON.readTree(Files.readString(session.journal())).toPrettyString()))
                .isEqualTo(ReportCommand.Kind.JOURNAL);
        assertThat(ReportCommand.recognise(Files.readString(session.html()))).isNull();
        assertThat(ReportCommand.recognise("")).isNull();
        assertThat(ReportCommand.recognise("{\"rules\":[]}")).isNull();
        assertThat(ReportCommand.recognise("[{\"event\":\"fault\"}]")).isNull();
    }

    @Test
    void anEventLogGivesItsEventsAndTheTimelineOfItsFaults() throws Exception {
        Path out = dir.resolve("events.html");
        Run run = report("--out", out.toString(), session.events().toString());
        assertThat(run.code()).as(run.err()).isZero();
        assertThat(run.err()).contains("report written to " + out + " (no journal or cassette, 1 event log, "
                + "no check report)");
        JsonNode data = data(out);
        List<String> lines = Files.readAllLines(session.events()).stream().filter(l -> !l.isBlank()).toList();
        assertThat(data.path("events")).hasSize(lines.size());
        assertThat(data.has("journal")).isFalse();
        List<JsonNode> faults = faultLines(session.events());
        assertThat(faults).hasSize(2).allSatisfy(f -> assertThat(f.path("rule").asText()).isEqualTo(ReportSession.RULE));
        assertThat(data.path("title").asText()).isEqualTo("events.ndjson");
    }

    @Test
    void aJournalDumpGivesTheTimelineOfEveryMessage() throws Exception {
        Path out = dir.resolve("journal.html");
        Run run = report("-o", out.toString(), "--title", "the journal", session.journal().toString());
        assertThat(run.code()).as(run.err()).isZero();
        JsonNode data = data(out);
        JsonNode dumped = JSON.readTree(Files.readString(session.journal()));
        assertThat(data.path("journal")).isEqualTo(dumped);
        assertThat(data.path("title").asText()).isEqualTo("the journal");
        long faulted = 0;
        for (JsonNode e : dumped.path("entries")) {
            faulted += e.path("faults").size();
        }
        assertThat(faulted).as("both add calls, answered by the rule").isEqualTo(2);
    }

    @Test
    void aCassetteGivesTheTimelineOfItsRecordedMessages() throws Exception {
        Path out = dir.resolve("cassette.html");
        Run run = report("--out", out.toString(), session.cassette().toString());
        assertThat(run.code()).as(run.err()).isZero();
        assertThat(run.err()).contains("(1 cassette, 0 event logs, no check report)");
        Cassette recorded = Cassette.read(session.cassette());
        JsonNode entries = data(out).path("journal").path("entries");
        assertThat(entries).hasSize(recorded.entries().size());
        List<String> calls = new ArrayList<>();
        long previous = -1;
        for (JsonNode e : entries) {
            assertThat(e.path("elapsed_ns").asLong()).isGreaterThanOrEqualTo(previous);
            previous = e.path("elapsed_ns").asLong();
            if (e.path("kind").asText().equals("request")) {
                calls.add(e.path("id").asText() + " " + e.path("method").asText() + " " + e.path("tool").asText(""));
            }
        }
        // The recorder keeps what the peers sent (before the rules): the add calls are there, as sent.
        assertThat(calls).containsExactly("1 initialize ", "2 tools/list ", "3 tools/call echo", "4 tools/call add",
                "5 tools/call add");
        assertThat(entries.get(0).path("time").asText()).startsWith(recorded.header().recordedAt().substring(0, 10));
    }

    @Test
    void aCheckReportGivesTheVerdicts() throws Exception {
        Path out = dir.resolve("check.html");
        Run run = report("--out", out.toString(), session.check().toString());
        assertThat(run.code()).as(run.err()).isZero();
        assertThat(data(out).path("check")).isEqualTo(JSON.readTree(Files.readString(session.check())));
    }

    @Test
    void severalInputsMakeOneReportAndTwoTimelinesOrTwoVerdictsAreRefused() throws Exception {
        Path out = dir.resolve("all.html");
        Run run = report("--out", out.toString(), session.check().toString(), session.events().toString(),
                session.journal().toString());
        assertThat(run.code()).as(run.err()).isZero();
        JsonNode data = data(out);
        assertThat(data.has("journal")).isTrue();
        assertThat(data.has("check")).isTrue();
        assertThat(data.path("events").size()).isPositive();

        Path both = dir.resolve("both.html");
        Run refused = report("--out", both.toString(), session.journal().toString(), session.cassette().toString());
        assertThat(refused.code()).isEqualTo(2);
        assertThat(refused.err()).contains(session.cassette() + " (cassette): a journal and a cassette both give the "
                + "timeline");
        assertThat(both).doesNotExist();

        Run twice = report("--out", both.toString(), session.check().toString(), session.check().toString());
        assertThat(twice.code()).isEqualTo(2);
        assertThat(twice.err()).contains("a second check report");
        assertThat(both).doesNotExist();
    }

    @Test
    void aFileThatIsNoneOfThemIsRefusedByNameAndNothingIsWritten() throws Exception {
        Path banner = dir.resolve("server.log");
        Files.writeString(banner, "Server listening on stdio\n{\"event\":\"fault\"}\n");
        Path out = dir.resolve("refused.html");
        Run refused = report("--out", out.toString(), session.events().toString(), banner.toString());
        assertThat(refused.code()).isEqualTo(2);
        assertThat(refused.err()).contains("mcp-chaos: " + banner + ": not an event log, journal, cassette, check "
                + "report or drill scorecard (first line: Server listening on stdio)");
        assertThat(out).doesNotExist();

        Path empty = dir.resolve("empty.ndjson");
        Files.writeString(empty, "");
        Run none = report("--out", out.toString(), empty.toString());
        assertThat(none.code()).isEqualTo(2);
        assertThat(none.err()).contains(empty + ": not an event log, journal, cassette, check report or drill "
                + "scorecard (first line: none, the file is empty)");
        assertThat(out).doesNotExist();

        // The twin: the same name holding the session's event log is read and written.
        Files.copy(session.events(), banner, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Run twin = report("--out", out.toString(), session.events().toString(), banner.toString());
        assertThat(twin.code()).as(twin.err()).isZero();
        assertThat(out).exists();
    }

    @Test
    void anEventLogWithABrokenLineIsRefusedWithItsLine() throws Exception {
        Path broken = dir.resolve("broken.ndjson");
        Files.writeString(broken, Files.readString(session.events()) + "{not json\n");
        Path out = dir.resolve("broken.html");
        Run run = report("--out", out.toString(), broken.toString());
        assertThat(run.code()).isEqualTo(2);
        int line = Files.readAllLines(broken).size();
        assertThat(run.err()).contains(broken + " (event log): event line " + line + ": not JSON");
        assertThat(out).doesNotExist();
    }

    @Test
    void htmlOnCheckWritesTheSessionsJournalFaultsAndVerdictsAtItsEnd() throws Exception {
        JsonNode data = data(session.html());
        assertThat(data.path("title").asText()).isEqualTo("mcp-chaos stdio --check");
        JsonNode dumped = JSON.readTree(Files.readString(session.journal()));
        // The journal at the end holds at least what GET /journal served before the client left.
        assertThat(data.path("journal").path("entries").size()).isGreaterThanOrEqualTo(dumped.path("entries").size());
        assertThat(data.path("journal").path("entries").get(0)).isEqualTo(dumped.path("entries").get(0));
        assertThat(data.path("events")).hasSize(faultLines(session.events()).size());
        for (JsonNode fault : data.path("events")) {
            assertThat(fault.path("event").asText()).isEqualTo("fault");
            assertThat(fault.path("rule").asText()).isEqualTo(ReportSession.RULE);
        }
        assertThat(data.path("check")).isEqualTo(JSON.readTree(Files.readString(session.check())));
    }
}
