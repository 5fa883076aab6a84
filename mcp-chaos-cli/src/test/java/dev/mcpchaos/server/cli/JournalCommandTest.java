package dev.mcpchaos.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.journal.JournalEntry;
import dev.mcpchaos.rules.journal.JournalJson;
import dev.mcpchaos.rules.journal.JournalSnapshot;
import dev.mcpchaos.rules.journal.ParamsFingerprint;
import dev.mcpchaos.server.testing.CatProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code mcp-chaos journal}: against a real stdio proxy (its server is {@code cat}) with a rule
 * dropping one tool's calls, and against a stub control API serving journals written here entry by
 * entry, for the outcomes a live run cannot stage as exactly.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class JournalCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String DROP_X = """
            rules:
              - name: drop-x
                match: {direction: client_to_server, tool: x}
                fault: {type: drop}
            """;

    private CatProxy cat;
    private HttpServer stub;

    @AfterEach
    void close() {
        if (cat != null) {
            cat.close();
        }
        if (stub != null) {
            stub.stop(0);
        }
    }

    private record Run(int code, String out, String err) {
        List<String> lines() {
            return out.isEmpty() ? List.of() : Arrays.asList(out.split("\n"));
        }
    }

    private static Run main(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Run(code, out.toString(), err.toString());
    }

    /** {@code mcp-chaos journal ARGS... --control URL}. */
    private static Run journal(String url, String... args) {
        List<String> all = new ArrayList<>();
        all.add("journal");
        all.addAll(Arrays.asList(args));
        all.add("--control");
        all.add(url);
        return main(all.toArray(String[]::new));
    }

    /** A cat proxy that got a call of x (dropped before cat) and of y (which cat sent back). */
    private String liveProxy() throws Exception {
        cat = CatProxy.withControl(DROP_X, null);
        cat.send(CatProxy.call(1, "x"));
        cat.send(CatProxy.call(2, "y"));
        await().until(() -> cat.received.size() == 1 && cat.proxy.journal().entries().size() == 3
                && cat.proxy.journal().entries().get(2).delivered());
        return cat.url();
    }

    @Test
    void printsEachEntryAsAssertionsShowItAndFiltersWithTheJournalsPatterns() throws Exception {
        String url = liveProxy();

        Run all = journal(url);
        assertThat(all.code()).isZero();
        assertThat(all.err()).isEmpty();
        assertThat(all.lines()).hasSize(3);
        assertThat(all.lines().get(0)).matches("#1 \\+\\d+\\.\\d{3}s stdio c->s request id=1 tools/call x "
                + "params=[0-9a-f]{16} drop\\(rule 'drop-x'\\): dropped; not delivered");
        assertThat(all.lines().get(1)).matches("#2 .* c->s request id=2 tools/call y params=[0-9a-f]{16} delivered");
        assertThat(all.lines().get(2)).matches("#3 .* s->c request id=2 tools/call y params=[0-9a-f]{16} delivered");
        List<String> expected = cat.proxy.journal().entries().stream().map(JournalEntry::toString).toList();
        assertThat(all.lines()).isEqualTo(expected);

        assertThat(journal(url, "--direction", "c2s", "--not-delivered").lines()).containsExactly(expected.get(0));
        assertThat(journal(url, "--direction", "client_to_server", "--delivered").lines())
                .containsExactly(expected.get(1));
        assertThat(journal(url, "--direction", "s2c").lines()).containsExactly(expected.get(2));
        assertThat(journal(url, "--tool", "y").lines()).containsExactly(expected.get(1), expected.get(2));
        assertThat(journal(url, "--tool", "x*", "--method", "tools/*").lines()).containsExactly(expected.get(0));
        assertThat(journal(url, "--kind", "request", "--session", "stdio", "--delivered").lines())
                .containsExactly(expected.get(1), expected.get(2));
        assertThat(journal(url, "--session", "other").lines()).isEmpty();
        assertThat(journal(url, "--faulted").lines()).containsExactly(expected.get(0));
        assertThat(journal(url, "--faulted", "drop").lines()).containsExactly(expected.get(0));
        assertThat(journal(url, "--faulted", "drop-x").lines()).containsExactly(expected.get(0));
        assertThat(journal(url, "--faulted", "latency").lines()).isEmpty();
        assertThat(journal(url, "--dropped").lines()).containsExactly(expected.get(0));
        assertThat(journal(url, "--since", "2").lines()).containsExactly(expected.get(2));
        assertThat(journal(url, "--same-arguments-as", "2").lines()).containsExactly(expected.get(1), expected.get(2));
    }

    @Test
    void jsonIsTheControlApisAnswerOrItsFormWithOnlyTheEntriesKept() throws Exception {
        String url = liveProxy();

        Run raw = journal(url, "--json");
        assertThat(raw.code()).isZero();
        JournalSnapshot all = JournalJson.read(raw.out());
        assertThat(all.entries()).isEqualTo(cat.proxy.journal().entries());
        assertThat(all.next()).isEqualTo(4);

        Run kept = journal(url, "--json", "--tool", "y");
        JsonNode filtered = JSON.readTree(kept.out());
        assertThat(filtered.path("entries").findValuesAsText("seq")).containsExactly("2", "3");
        assertThat(filtered.path("next").asLong()).as("the journal's own counts stay").isEqualTo(4);
        assertThat(filtered.path("capacity").asInt()).isEqualTo(all.capacity());
    }

    /** Serves {@code entries} (numbered from 1) as GET /journal does, with {@code evicted} dropped for capacity. */
    private String stub(long evicted, JournalEntry... entries) throws IOException {
        List<JournalEntry> numbered = new ArrayList<>();
        for (int i = 0; i < entries.length; i++) {
            numbered.add(entries[i].withSequence(i + 1));
        }
        byte[] body = JournalJson.write(new JournalSnapshot(numbered, 100, evicted, entries.length + 1))
                .getBytes(StandardCharsets.UTF_8);
        stub = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        stub.createContext("/journal", exchange -> {
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        stub.start();
        return "http://127.0.0.1:" + stub.getAddress().getPort();
    }

    private static JournalEntry write(long id, String arguments, boolean delivered) {
        ParamsFingerprint.Fingerprints f = ParamsFingerprint.ofRequest("{\"jsonrpc\":\"2.0\",\"id\":" + id
                + ",\"method\":\"tools/call\",\"params\":{\"name\":\"write\",\"arguments\":" + arguments + "}}");
        return entry(Direction.CLIENT_TO_SERVER, MessageKind.REQUEST, id, delivered, f.params(), f.write(), false);
    }

    private static JournalEntry answer(long id, boolean delivered) {
        return entry(Direction.SERVER_TO_CLIENT, MessageKind.RESPONSE, id, delivered, null, null, !delivered);
    }

    private static JournalEntry entry(Direction direction, MessageKind kind, long id, boolean delivered,
                                      String params, String write, boolean dropped) {
        return new JournalEntry(1, Duration.ZERO, Instant.parse("2026-12-02T06:00:00Z"), "s1", "http", direction,
                kind, id, "tools/call", "write", null, null, null,
                dropped ? List.of(new JournalEntry.FaultAction("lose", "drop", "dropped")) : List.of(), delivered,
                params, write, null);
    }

    @Test
    void duplicateWritesShowsAResendUnderANewKeyAndNeverASafeRetry() throws Exception {
        String lostAnswer = stub(0, write(1, "{\"row\":7,\"request_id\":\"k1\"}", true), answer(1, false),
                write(2, "{\"row\":7,\"request_id\":\"k2\"}", true), answer(2, true));
        Run duplicates = journal(lostAnswer, "--duplicate-writes", "--tool", "write");
        assertThat(duplicates.code()).isZero();
        assertThat(duplicates.lines()).hasSize(1);
        assertThat(duplicates.lines().get(0)).startsWith("#3 +0.000s s1 c->s request id=2 tools/call write params=")
                .contains(" write=").endsWith(" delivered");
        assertThat(journal(lostAnswer, "--same-arguments-as", "1").lines()).hasSize(2);
        stub.stop(0);

        String safeRetry = stub(0, entry(Direction.CLIENT_TO_SERVER, MessageKind.REQUEST, 1, false,
                        write(1, "{\"row\":7}", false).paramsFingerprint(), null, true),
                write(2, "{\"row\":7}", true), answer(2, true));
        Run none = journal(safeRetry, "--duplicate-writes");
        assertThat(none.code()).isZero();
        assertThat(none.out()).isEmpty();
        assertThat(journal(safeRetry, "--direction", "c2s", "--not-delivered").lines()).hasSize(1);
    }

    @Test
    void entriesDroppedForCapacityAreNotedOnStderr() throws Exception {
        String url = stub(42, answer(1, true));
        Run run = journal(url);
        assertThat(run.code()).isZero();
        assertThat(run.lines()).hasSize(1);
        assertThat(run.err()).isEqualTo("mcp-chaos: note: 42 older entries were dropped for capacity 100 (the journal "
                + "keeps the newest; mcp-chaos http|stdio --journal N keeps more)\n");
    }

    @Test
    void refusalsAndUsageErrorsSayWhatIsWrong() throws Exception {
        cat = new CatProxy(b -> b.control(new InetSocketAddress("127.0.0.1", 0)).journal(0));
        Run off = journal(cat.url());
        assertThat(off.code()).isEqualTo(1);
        assertThat(off.err()).isEqualTo("mcp-chaos: /journal: this proxy keeps no journal (it was turned off)\n");
        assertThat(off.out()).isEmpty();
        cat.close();

        cat = CatProxy.withControl(null, "s3cret");
        Run noToken = journal(cat.url());
        assertThat(noToken.code()).isEqualTo(1);
        assertThat(noToken.err()).contains("give the proxy's control token with --token");
        assertThat(journal(cat.url(), "--token", "s3cret").code()).isZero();

        Run both = journal(cat.url(), "--delivered", "--not-delivered");
        assertThat(both.code()).isEqualTo(2);
        assertThat(both.err()).startsWith("--delivered and --not-delivered: only one of them");
        Run direction = journal(cat.url(), "--direction", "up");
        assertThat(direction.code()).isEqualTo(2);
        assertThat(direction.err()).startsWith("--direction: 'up' (expected: client_to_server, server_to_client, c2s "
                + "or s2c)");
        Run kind = journal(cat.url(), "--kind", "reply");
        assertThat(kind.code()).isEqualTo(2);
        assertThat(kind.err()).startsWith("--kind: 'reply' (expected: request, response");
        assertThat(journal(cat.url(), "--since", "-1").err()).startsWith("--since: -1 (expected: a whole number >= 0)");
        Run missing = journal(cat.url(), "--token", "s3cret", "--same-arguments-as", "9");
        assertThat(missing.code()).isEqualTo(1);
        assertThat(missing.err()).isEqualTo("mcp-chaos: --same-arguments-as: #9 is not in the journal (it holds no "
                + "entries)\n");
    }

    @Test
    void somethingElseAtTheAddressIsSaidSo() throws Exception {
        stub = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        stub.createContext("/", exchange -> {
            byte[] body = "{\"hello\":1}".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        stub.start();
        String url = "http://127.0.0.1:" + stub.getAddress().getPort();
        Run run = journal(url);
        assertThat(run.code()).isEqualTo(1);
        assertThat(run.err()).isEqualTo("mcp-chaos: GET " + url + "/journal?since=0: the answer is not a journal "
                + "(journal: {\"hello\":1} (expected: an object with capacity, evicted, next and an entries array); "
                + "is --control pointing at mcp-chaos?)\n");
    }
}
