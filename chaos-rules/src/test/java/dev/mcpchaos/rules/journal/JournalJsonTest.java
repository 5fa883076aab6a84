package dev.mcpchaos.rules.journal;

import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JournalJsonTest {

    @Test
    void writesStableKeysAndReadsBackTheSameEntries() {
        Entries entries = new Entries(10);
        long call = entries.at(1234).toolCall("abc", 3, "search", "{\"q\":\"x\"}");
        entries.fault(call, "busy", "http_status", "answered HTTP 503").http(call, 503, Map.of("Retry-After", "2"));
        entries.passed(entries.cancelled("abc", 3));
        entries.add("abc", dev.mcpchaos.core.frame.Direction.SERVER_TO_CLIENT,
                dev.mcpchaos.core.frame.MessageKind.ERROR, "id-\"7\"", "tools/call", "search", null, null);
        entries.add("abc", dev.mcpchaos.core.frame.Direction.SERVER_TO_CLIENT,
                dev.mcpchaos.core.frame.MessageKind.RESPONSE, new BigDecimal("1.5"), null, null, null, null);
        JournalSnapshot snapshot = entries.ring().snapshot();

        String json = JournalJson.write(snapshot);
        String fingerprint = snapshot.entries().get(0).paramsFingerprint();
        assertThat(json).startsWith("{\"capacity\":10,\"evicted\":0,\"next\":5,\"entries\":[{\"seq\":1,"
                + "\"elapsed_ns\":1234000000,\"time\":\"2026-12-02T06:00:01.234Z\",\"session\":\"abc\","
                + "\"transport\":\"http\",\"direction\":\"client_to_server\",\"kind\":\"request\",\"id\":3,"
                + "\"method\":\"tools/call\",\"tool\":\"search\",\"http_status\":503,"
                + "\"http_headers\":{\"Retry-After\":\"2\"},\"params_fingerprint\":\"" + fingerprint + "\","
                + "\"faults\":[{\"rule\":\"busy\",\"fault\":\"http_status\",\"detail\":\"answered HTTP 503\"}],"
                + "\"delivered\":false},{\"seq\":2,");
        assertThat(json).contains("\"method\":\"notifications/cancelled\",\"request_id\":3,\"delivered\":true}");
        assertThat(JournalJson.read(json)).isEqualTo(snapshot);
    }

    @Test
    void keepsTheMessageOnlyWhenItWasKept() throws Exception {
        JournalEntry withMessage = new JournalEntry(1, java.time.Duration.ZERO, Entries.START, "stdio", "stdio",
                dev.mcpchaos.core.frame.Direction.CLIENT_TO_SERVER, dev.mcpchaos.core.frame.MessageKind.REQUEST,
                1L, "ping", null, null, null, null, null, true, null, "{\"id\":1,\"method\":\"ping\"}");
        String json = JournalJson.write(withMessage);
        assertThat(json).endsWith("\"delivered\":true,\"message\":\"{\\\"id\\\":1,\\\"method\\\":\\\"ping\\\"}\"}");
        assertThat(JournalJson.readEntry(new com.fasterxml.jackson.databind.ObjectMapper().readTree(json)))
                .isEqualTo(withMessage);
        assertThat(JournalJson.write(withMessage.withSequence(2))).contains("\"seq\":2,");
    }

    /** When a client closed a request's exchange before its answer: written, read back, and shown. */
    @Test
    void theClientsCloseIsWrittenAndReadBack() throws Exception {
        JournalEntry request = new JournalEntry(1, java.time.Duration.ofSeconds(2), Entries.START, "http-3", "http",
                dev.mcpchaos.core.frame.Direction.CLIENT_TO_SERVER, dev.mcpchaos.core.frame.MessageKind.REQUEST,
                1L, "tools/call", "slow", null, null, null, null, true, null, null);
        JournalEntry closed = request.withClientClosed(java.time.Duration.ofMillis(6500));
        assertThat(closed.clientClosedAt()).isEqualTo(Entries.START.plusMillis(4500));
        assertThat(closed.withClientClosed(java.time.Duration.ofSeconds(9))).as("the first close is kept")
                .isSameAs(closed);
        assertThat(closed.toString()).endsWith("delivered; the client closed its stream at +6.500s");
        String json = JournalJson.write(closed);
        assertThat(json).endsWith("\"delivered\":true,\"client_closed_ns\":6500000000}");
        assertThat(JournalJson.write(request)).doesNotContain("client_closed");
        assertThat(JournalJson.readEntry(new com.fasterxml.jackson.databind.ObjectMapper().readTree(json)))
                .isEqualTo(closed);
        assertThat(closed.withoutDelivery().delivered()).isFalse();
    }

    @Test
    void theWriteFingerprintIsWrittenOnlyWhenAKeyMadeItDiffer() {
        Entries entries = new Entries(10);
        entries.passed(entries.toolCall("abc", 1, "write", "{\"row\":7}"));
        entries.passed(entries.toolCall("abc", 2, "write", "{\"row\":7,\"request_id\":\"k2\"}"));
        JournalSnapshot snapshot = entries.ring().snapshot();
        JournalEntry plain = snapshot.entries().get(0);
        JournalEntry keyed = snapshot.entries().get(1);
        assertThat(keyed.writeFingerprint()).isEqualTo(plain.paramsFingerprint())
                .isNotEqualTo(keyed.paramsFingerprint());

        String json = JournalJson.write(snapshot);
        assertThat(JournalJson.write(plain)).doesNotContain("write_fingerprint");
        assertThat(JournalJson.write(keyed)).contains("\"params_fingerprint\":\"" + keyed.paramsFingerprint()
                + "\",\"write_fingerprint\":\"" + keyed.writeFingerprint() + "\",");
        JournalSnapshot back = JournalJson.read(json);
        assertThat(back).isEqualTo(snapshot);
        assertThat(back.entries().get(0).writeFingerprint()).as("absent: the params fingerprint")
                .isEqualTo(plain.paramsFingerprint());
        assertThat(back.entries().get(1).sameArgumentsAs(back.entries().get(0))).isTrue();
        assertThat(keyed.toString()).contains(" params=" + keyed.paramsFingerprint() + " write="
                + keyed.writeFingerprint() + " delivered");
        assertThat(plain.toString()).doesNotContain("write=");
    }

    @Test
    void refusesWhatIsNotAJournal() {
        assertThatThrownBy(() -> JournalJson.read("[]")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("journal: [] (expected: an object with capacity, evicted, next and an entries array)");
        assertThatThrownBy(() -> JournalJson.read("{\"entries\":[{\"seq\":1}]}"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("journal entry: {\"seq\":1} (missing 'elapsed_ns')");
        assertThatThrownBy(() -> JournalJson.read("{")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("journal: not JSON");
    }
}
