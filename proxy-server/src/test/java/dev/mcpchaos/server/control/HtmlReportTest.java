package dev.mcpchaos.server.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
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
}
