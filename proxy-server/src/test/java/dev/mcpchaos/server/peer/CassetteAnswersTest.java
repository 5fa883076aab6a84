package dev.mcpchaos.server.peer;

import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.mcpchaos.server.record.Cassette;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.StringReader;
import java.util.List;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;

/** The one index of a cassette's answers that diff and verify read. */
class CassetteAnswersTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static Cassette cassette(String... lines) throws IOException {
        StringBuilder text = new StringBuilder("{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":1,"
                + "\"transport\":\"stdio\",\"recordedAt\":\"2026-12-02T06:16:27.673Z\",\"recorder\":\"test\"}\n");
        for (int seq = 0; seq < lines.length; seq += 2) {
            text.append("{\"type\":\"message\",\"seq\":").append(seq / 2).append(",\"t\":1.0,\"dir\":\"")
                    .append(lines[seq]).append("\",\"session\":\"stdio\",\"message\":").append(lines[seq + 1])
                    .append("}\n");
        }
        return Cassette.read(new StringReader(text.toString()), "test.ndjson");
    }

    @Test
    void eachRequestHasItsOwnAnswerEvenWhenItsIdIsUsedAgain() throws IOException {
        Cassette c = cassette(
                "c2s", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
                "s2c", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"n\":1}}",
                "c2s", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
                "s2c", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}",
                "c2s", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
        CassetteAnswers answers = CassetteAnswers.of(c);
        assertThat(answers.exchanges()).extracting(e -> e.request().seq() + "->" + e.answer().seq())
                .containsExactly("0->1", "2->3");
        assertThat(answers.answerTo(c.entries().get(2)).seq()).isEqualTo(3);
        assertThat(answers.answerTo(c.entries().get(4))).isNull();
    }

    @Test
    void theRecordedClientAnswersAMethodInRecordedOrderThenTheLastAgainWithTheLiveId() throws IOException {
        Cassette c = cassette(
                "s2c", "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"roots/list\"}",
                "c2s", "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"roots\":[1]}}",
                "s2c", "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"roots/list\"}",
                "c2s", "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"result\":{\"roots\":[2]}}");
        UnaryOperator<com.fasterxml.jackson.databind.JsonNode> client = CassetteAnswers.of(c).recordedClient("who");
        List<String> answers = new java.util.ArrayList<>();
        for (String id : List.of("x", "y", "z")) {
            answers.add(client.apply(JSON.readTree("{\"jsonrpc\":\"2.0\",\"id\":\"" + id
                    + "\",\"method\":\"roots/list\"}")).toString());
        }
        assertThat(answers).containsExactly("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"roots\":[1]}}",
                "{\"jsonrpc\":\"2.0\",\"id\":\"y\",\"result\":{\"roots\":[2]}}",
                "{\"jsonrpc\":\"2.0\",\"id\":\"z\",\"result\":{\"roots\":[2]}}");
        assertThat(client.apply(JSON.readTree("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"sampling/createMessage\"}"))
                .toString()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":-32601,"
                + "\"message\":\"who: no recorded answer to sampling/createMessage\"}}");
    }
}
