package dev.mcpchaos.server.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.drill.Level;
import dev.mcpchaos.server.drill.Outcome;
import dev.mcpchaos.server.drill.Scorecard;
import dev.mcpchaos.server.drill.Verdict;
import dev.mcpchaos.server.record.Cassette;
import org.junit.jupiter.api.Test;

import java.io.StringReader;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The report file: self-contained, its data intact and unable to end its own script block. */
class HtmlReportTest {

    private static final String JOURNAL = """
            {"capacity":10,"evicted":0,"next":3,"entries":[
             {"seq":1,"elapsed_ns":1000000,"time":"2026-12-07T06:00:00.001Z","session":"stdio","transport":"stdio",
              "direction":"client_to_server","kind":"request","id":1,"method":"tools/call","tool":"x",
              "faults":[{"rule":"drop-x","fault":"drop","detail":"dropped"}],"delivered":false},
             {"seq":2,"elapsed_ns":2000000,"time":"2026-12-07T06:00:00.002Z","session":"stdio","transport":"stdio",
              "direction":"client_to_server","kind":"request","id":2,"method":"tools/call","tool":"y","delivered":true}]}
            """;
    private static final String FAULT = "{\"seq\":1,\"time\":\"2026-12-07T06:00:00.001Z\",\"event\":\"fault\","
            + "\"session\":\"stdio\",\"direction\":\"client_to_server\",\"rule\":\"drop-x\",\"fault\":\"drop\","
            + "\"kind\":\"request\",\"id\":1,\"method\":\"tools/call\",\"tool\":\"x\",\"detail\":\"</script><script>alert(1)\"}";
    private static final Pattern DATA = Pattern.compile(
            "<script id=\"mcp-chaos-data\" type=\"application/json\">(.*?)</script>", Pattern.DOTALL);

    @Test
    void theFileHoldsThePageItsDataAndNoReferenceToAnythingElse() throws Exception {
        String html = HtmlReport.builder("night <run>").journal(JOURNAL).events(List.of(FAULT, "", "  "))
                .generated(Instant.parse("2026-12-07T06:30:00Z")).render();

        assertThat(html).doesNotContain("src=\"app.js\"").doesNotContain("href=\"app.css\"")
                .contains("<title>mcp-chaos report: night &lt;run&gt;</title>")
                .contains(UiPages.text("app.js")).contains(UiPages.text("app.css"));
        assertThat(Pattern.compile("(?i)(src|href)=\"(?!data:)").matcher(html).find()).isFalse();
        // A detail that says "</script>" stays data: only the file's own two blocks end a script.
        assertThat(html.split("</script>", -1)).hasSize(3);
        Matcher data = DATA.matcher(html);
        assertThat(data.find()).isTrue();
        JsonNode embedded = new ObjectMapper().readTree(data.group(1));
        assertThat(embedded.path("title").asText()).isEqualTo("night <run>");
        assertThat(embedded.path("generated").asText()).isEqualTo("2026-12-07T06:30:00Z");
        assertThat(embedded.path("journal").path("entries")).hasSize(2);
        assertThat(embedded.path("events")).hasSize(1);
        assertThat(embedded.path("events").get(0).path("detail").asText()).isEqualTo("</script><script>alert(1)");
        assertThat(embedded.has("check")).isFalse();
    }

    /** A cassette of one HTTP session, recorded at {@code recordedAt}: its lines as the recorder writes them. */
    private static Cassette cassette(String recordedAt, String session, double t0) throws Exception {
        String header = "{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":1,\"transport\":\"http\","
                + "\"recordedAt\":\"" + recordedAt + "\",\"recorder\":\"mcp-chaos test\"}";
        String http = "\"http\":{\"exchange\":1,\"method\":\"POST\",\"uri\":\"/mcp\"";
        String lines = String.join("\n", header,
                "{\"type\":\"message\",\"seq\":0,\"t\":" + t0 + ",\"dir\":\"c2s\",\"session\":\"" + session + "\","
                        + http + "},\"message\":{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                        + "\"params\":{\"name\":\"search\",\"arguments\":{}}}}",
                "{\"type\":\"message\",\"seq\":1,\"t\":" + (t0 + 12.5) + ",\"dir\":\"s2c\",\"session\":\"" + session
                        + "\"," + http + ",\"status\":200},\"message\":{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":"
                        + "{\"code\":-32000,\"message\":\"x\"}}}",
                "{\"type\":\"message\",\"seq\":2,\"t\":" + (t0 + 13) + ",\"dir\":\"s2c\",\"session\":\"" + session
                        + "\",\"raw\":\"not json\"}");
        return Cassette.read(new StringReader(lines), session + ".ndjson");
    }

    @Test
    void cassettesMakeOneTimelineOfTheirMessagesInTimeOrder() throws Exception {
        // Recorded 1 s apart; b's session began first.
        Cassette a = cassette("2026-12-07T06:00:01Z", "sess-a", 0);
        Cassette b = cassette("2026-12-07T06:00:00Z", "sess-b", 5);
        String html = HtmlReport.builder("r").cassette(a).cassette(b).render();
        Matcher data = DATA.matcher(html);
        assertThat(data.find()).isTrue();
        JsonNode entries = new ObjectMapper().readTree(data.group(1)).path("journal").path("entries");
        assertThat(entries).hasSize(6);
        StringBuilder rows = new StringBuilder();
        for (JsonNode e : entries) {
            rows.append(e.path("seq").asLong()).append(' ').append(e.path("elapsed_ns").asLong() / 100_000).append(' ')
                    .append(e.path("session").asText()).append(' ').append(e.path("direction").asText()).append(' ')
                    .append(e.path("kind").asText()).append(' ').append(e.path("id").asText("-")).append(' ')
                    .append(e.path("tool").asText("-")).append(' ').append(e.path("http_status").asInt()).append(' ')
                    .append(e.path("delivered").asBoolean()).append('\n');
        }
        // elapsed in tenths of a millisecond from the first message (b's, at 06:00:00.005).
        assertThat(rows.toString()).isEqualTo("""
                1 0 sess-b client_to_server request 7 search 0 true
                2 125 sess-b server_to_client error 7 search 200 true
                3 130 sess-b server_to_client malformed - - 0 true
                4 9950 sess-a client_to_server request 7 search 0 true
                5 10075 sess-a server_to_client error 7 search 200 true
                6 10080 sess-a server_to_client malformed - - 0 true
                """);
        assertThat(entries.get(0).path("time").asText()).isEqualTo("2026-12-07T06:00:00.005Z");
        assertThat(entries.get(0).path("transport").asText()).isEqualTo("http");
        assertThat(entries.get(0).path("method").asText()).isEqualTo("tools/call");
        // An answer names what it answers, as in a journal.
        assertThat(entries.get(1).path("method").asText()).isEqualTo("tools/call");
        assertThat(entries.get(2).has("method")).isFalse();
    }

    @Test
    void eachFaultOfTheEventLogIsPutOnTheRecordedMessageItHit() throws Exception {
        // The same session and id twice (a client that began again): the fault goes to the nearer in time.
        Cassette first = cassette("2026-12-07T06:00:01Z", "sess-a", 0);
        Cassette again = cassette("2026-12-07T06:00:03Z", "sess-a", 0);
        String hit = "{\"seq\":4,\"time\":\"2026-12-07T06:00:03.001Z\",\"event\":\"fault\",\"session\":\"sess-a\","
                + "\"direction\":\"client_to_server\",\"rule\":\"search-fails\",\"fault\":\"error\",\"kind\":\"request\","
                + "\"id\":7,\"method\":\"tools/call\",\"tool\":\"search\",\"detail\":\"answered -32050\"}";
        String slow = hit.replace("\"seq\":4", "\"seq\":5").replace("client_to_server", "server_to_client")
                .replace("search-fails", "slow-errors").replace("\"fault\":\"error\"", "\"fault\":\"latency\"")
                .replace("\"kind\":\"request\"", "\"kind\":\"error\"").replace("06:00:03.001", "06:00:01.013");
        String notification = "{\"seq\":6,\"time\":\"2026-12-07T06:00:01.020Z\",\"event\":\"fault\",\"session\":\"sess-a\","
                + "\"direction\":\"server_to_client\",\"rule\":\"lose-progress\",\"fault\":\"drop\","
                + "\"kind\":\"notification\",\"method\":\"notifications/progress\"}";
        String elsewhere = hit.replace("sess-a", "sess-z");
        String html = HtmlReport.builder("r").cassette(first).cassette(again)
                .events(List.of(hit, slow, notification, elsewhere)).render();
        Matcher data = DATA.matcher(html);
        assertThat(data.find()).isTrue();
        JsonNode entries = new ObjectMapper().readTree(data.group(1)).path("journal").path("entries");
        StringBuilder faults = new StringBuilder();
        for (JsonNode e : entries) {
            faults.append(e.path("seq").asLong()).append(' ').append(e.path("kind").asText()).append(' ')
                    .append(e.path("faults").findValuesAsText("rule")).append(' ')
                    .append(e.path("delivered").asBoolean() ? "delivered" : "not delivered").append('\n');
        }
        assertThat(faults.toString()).isEqualTo("""
                1 request [] delivered
                2 error [slow-errors] delivered
                3 malformed [] delivered
                4 request [search-fails] not delivered
                5 error [] delivered
                6 malformed [] delivered
                """);
        assertThat(entries.get(3).path("faults").get(0).path("detail").asText()).isEqualTo("answered -32050");
        // The event log itself is in the report whole: the rules panel counts all four.
        assertThat(new ObjectMapper().readTree(html.substring(data.start(1), data.end(1))).path("events")).hasSize(4);
    }

    @Test
    void aJournalAndACassetteAreNotOneTimeline() throws Exception {
        Cassette a = cassette("2026-12-07T06:00:01Z", "sess-a", 0);
        assertThatThrownBy(() -> HtmlReport.builder("r").journal(JOURNAL).cassette(a))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("a journal and a cassette both give the timeline");
        assertThatThrownBy(() -> HtmlReport.builder("r").cassette(a).journal(JOURNAL))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("a journal and a cassette both give the timeline");
        // Its twin: either one alone, with the events, is a report.
        assertThat(HtmlReport.builder("r").cassette(a).events(List.of(FAULT)).render()).contains("sess-a");
        assertThat(HtmlReport.builder("r").journal(JOURNAL).events(List.of(FAULT)).render()).contains("drop-x");
        Cassette undated = cassette("yesterday", "sess-a", 0);
        assertThatThrownBy(() -> HtmlReport.builder("r").cassette(undated))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("cassette: recordedAt 'yesterday'");
    }

    @Test
    void inputsThatAreNotWhatTheySayAreRefusedByName() {
        assertThatThrownBy(() -> HtmlReport.builder("r").journal("{\"rules\":[]}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("journal: an object without an entries array");
        assertThatThrownBy(() -> HtmlReport.builder("r").events(List.of(FAULT, "{not json")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("event line 2: not JSON");
        assertThatThrownBy(() -> HtmlReport.builder("r").events(List.of("{\"seq\":1}")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("event line 1: no \"event\"");
        assertThatThrownBy(() -> HtmlReport.builder("r").check("[]"))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("check report: not a JSON object");
    }

    /** A drill of two scenarios, as {@code Scorecard#toJson} writes it, each with a journal of its own proxy's. */
    private static String drillCard() {
        Verdict lost = new Verdict("answer-lost", Level.MUST, Outcome.FAIL, "it never gave up",
                List.of("#1 c->s request id 1 tools/call"), null, Duration.ofSeconds(10));
        Verdict noise = new Verdict("noise", Level.SHOULD, Outcome.PASS, "it went on", List.of(), 0,
                Duration.ofMillis(400));
        Verdict stdio = new Verdict("server-crash", Level.MUST, Outcome.NOT_APPLICABLE, "stdio only", List.of(), null,
                Duration.ZERO);
        String second = JOURNAL.replace("06:00:00.00", "06:00:05.00").replace("\"stdio\"", "\"s2\"");
        return new Scorecard(7, List.of(lost, noise, stdio), Map.of("answer-lost", JOURNAL, "noise", second))
                .toJson();
    }

    @Test
    void aDrillsScorecardIsAPanelAndItsScenariosJournalsOneTimelineInTheOrderTheyRan() throws Exception {
        Matcher data = DATA.matcher(HtmlReport.builder("drill").drill(drillCard()).render());
        assertThat(data.find()).isTrue();
        JsonNode embedded = new ObjectMapper().readTree(data.group(1));
        JsonNode card = embedded.path("drill");
        assertThat(card.path("seed").asLong()).isEqualTo(7);
        assertThat(card.path("scenarios")).hasSize(3);
        assertThat(card.path("scenarios").get(0).path("outcome").asText()).isEqualTo("fail");
        assertThat(card.path("scenarios").get(2).path("outcome").asText()).isEqualTo("not_applicable");
        card.path("scenarios").forEach(s -> assertThat(s.has("journal")).as("journals go to the timeline").isFalse());

        JsonNode entries = embedded.path("journal").path("entries");
        assertThat(entries).hasSize(4);
        List<String> sessions = new ArrayList<>();
        List<Long> seqs = new ArrayList<>();
        List<Long> elapsed = new ArrayList<>();
        entries.forEach(e -> {
            sessions.add(e.path("session").asText());
            seqs.add(e.path("seq").asLong());
            elapsed.add(e.path("elapsed_ns").asLong());
        });
        assertThat(sessions).containsExactly("answer-lost: stdio", "answer-lost: stdio", "noise: s2", "noise: s2");
        assertThat(seqs).containsExactly(1L, 2L, 3L, 4L);
        // From the first scenario's start (its first entry at 1 ms), by the wall clock: the second ran 5 s later.
        assertThat(elapsed).containsExactly(1_000_000L, 2_000_000L, 5_001_000_000L, 5_002_000_000L);
        assertThat(entries.get(0).path("faults").get(0).path("rule").asText()).isEqualTo("drop-x");
    }

    @Test
    void aDrillsScorecardIsTheTimelineSoNoJournalOrCassetteGoesWithIt() throws Exception {
        assertThatThrownBy(() -> HtmlReport.builder("r").journal(JOURNAL).drill(drillCard()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("a drill's scorecard gives the timeline");
        assertThatThrownBy(() -> HtmlReport.builder("r").drill(drillCard()).journal(JOURNAL))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("a drill's scorecard gives the timeline");
        assertThatThrownBy(() -> HtmlReport.builder("r").drill(drillCard()).cassette(cassette("2026-12-07T06:00:01Z",
                "sess-a", 0))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("a drill's scorecard gives the timeline");
        assertThatThrownBy(() -> HtmlReport.builder("r").drill("{\"seed\":1,\"scenarios\":[]}"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("drill scorecard: an object without \"format\": \"mcp-chaos-drill\"");
        assertThatThrownBy(() -> HtmlReport.builder("r").drill("{\"format\":\"mcp-chaos-drill\",\"scenarios\":"
                + "[{\"name\":\"x\",\"outcome\":\"pass\",\"journal\":{}}]}"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("drill scorecard: scenario x: a journal without an entries array");
        // With the event log and a check report it is a report.
        assertThat(HtmlReport.builder("r").drill(drillCard()).events(List.of(FAULT)).render()).contains("answer-lost");
    }
}
