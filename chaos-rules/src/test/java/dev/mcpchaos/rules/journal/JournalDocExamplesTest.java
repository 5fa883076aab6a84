package dev.mcpchaos.rules.journal;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.mcpchaos.rules.journal.Messages.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The Java examples of docs/journal.md, compiled and run here against journals written entry by
 * entry: each block between {@code // journal.md:begin} and {@code // journal.md:end} is in the
 * document word for word, and every Java block of the document is one of them (its
 * {@code import} lines aside), so that neither can drift from the other.
 */
class JournalDocExamplesTest {

    private static final Path DOC = Path.of("../docs/journal.md");
    private static final Path SOURCE = Path.of("src/test/java/dev/mcpchaos/rules/journal/JournalDocExamplesTest.java");
    private static final String ROW_7 = "{\"row\":7,\"v\":\"x\"}";

    /** Stands for McpChaosProxy.Running here, which this module does not know. */
    private interface Proxy {
        Journal journal();
    }

    @Test
    void theOverviewRunsAgainstAJournalOfAWellBehavedClient() {
        Entries written = new Entries();
        written.at(0).passed(written.request("abc", 0, "initialize", null, "{\"protocolVersion\":\"2025-06-18\"}"));
        written.passed(written.response("abc", 0, "initialize", null));
        long refused = written.at(1000).toolCall("abc", 1, "search", "{\"q\":\"a\"}");
        written.fault(refused, "busy", "http_status", "answered HTTP 503").http(refused, 503,
                Map.of("Retry-After", "1"));
        written.at(2500).passed(written.toolCall("abc", 2, "search", "{\"q\":\"a\"}"));
        written.passed(written.response("abc", 2, "tools/call", "search"));
        written.at(2600).passed(written.toolCall("abc", 3, "write", ROW_7));
        written.passed(written.response("abc", 3, "tools/call", "write"));
        written.at(2700).passed(written.toolCall("abc", 4, "slow", "{\"ms\":5000}"));
        written.passed(written.add("abc", Direction.SERVER_TO_CLIENT, MessageKind.NOTIFICATION, null,
                "notifications/progress", null, null, null));
        written.at(3700).passed(written.cancelled("abc", 4));
        long expired = written.at(3800).request("abc", 5, "tools/list", null, "{}");
        written.fault(expired, "expire", "session_expire", "session expired; this request answered 404")
                .http(expired, 404, Map.of());
        written.at(3900).passed(written.request("http-2", 0, "initialize", null,
                "{\"protocolVersion\":\"2025-06-18\"}"));
        Proxy proxy = written::ring;

        // journal.md:begin
        Journal journal = proxy.journal();            // McpChaosProxy.Running, HttpProxyBuilder.RunningHttp,
                                                      // or McpChaosContainer.journal() (over the control API)
        journal.verify().client().sent(toolCall("search")).times(2);
        journal.verify().client().sent(toolCall("delete_*")).never();
        journal.verify().client().duplicateWrites(toolCall("write")).never();   // see "Outcomes" below
        journal.verify().client().reinitializedAfter("session_expire");
        journal.verify().client().cancelled(toolCall("slow"));
        journal.verify().client().honoredRetryAfter();
        journal.verify().server().sent(notification("notifications/progress")).atLeast(1);

        journal.entries();                        // List<JournalEntry>, oldest first
        journal.filter(toolCall("search"));       // any Predicate<JournalEntry>
        journal.clear();                          // between tests
        // journal.md:end

        assertThat(journal.entries()).isEmpty();
    }

    /** The server did the write; a rule dropped its answer; then the client did {@code after}. */
    private static Entries lostAnswer(boolean resendUnderANewKey) {
        Entries written = new Entries();
        written.at(0).passed(written.toolCall("0d76b87c", 1, "write", "{\"row\":7,\"request_id\":\"k-1\"}"));
        written.at(12).fault(written.response("0d76b87c", 1, "tools/call", "write"), "lose-answer", "drop",
                "dropped");
        if (resendUnderANewKey) {
            written.at(3010).passed(written.toolCall("0d76b87c", 2, "write", "{\"row\":7,\"request_id\":\"k-2\"}"));
        } else {
            written.at(3010).passed(written.toolCall("0d76b87c", 2, "read", "{\"row\":7}"));
        }
        written.at(3021).passed(written.response("0d76b87c", 2, "tools/call", resendUnderANewKey ? "write" : "read"));
        return written;
    }

    @Test
    void aClientThatReadsBackAfterALostAnswerPasses() {
        Journal journal = lostAnswer(false).ring();

        // journal.md:begin
        // The server did the write and its answer was lost: the client must not write again.
        journal.verify().server().sent(notReachedClient(toolCall("write"))).once();      // the rule did its part
        journal.verify().client().notRetriedAfter(notReachedClient(toolCall("write")));  // it read back instead
        journal.verify().client().duplicateWrites(toolCall("write")).never();
        // journal.md:end
    }

    @Test
    void aClientThatWritesAgainUnderANewKeyFailsAsTheDocumentShows() throws IOException {
        Journal journal = lostAnswer(true).ring();

        AssertionError failure = null;
        try {
            journal.verify().client().duplicateWrites(toolCall("write")).never();
        } catch (AssertionError e) {
            failure = e;
        }
        assertThat(failure).as("a resend under a new key is a duplicate write").isNotNull();
        assertThat(Files.readString(DOC)).as("docs/journal.md shows this failure word for word")
                .contains("```\n" + failure.getMessage() + "\n```");
        assertThatThrownBy(() -> journal.verify().client().notRetriedAfter(notReachedClient(toolCall("write"))))
                .hasMessageContaining("but it did: #3 after #2.");

        // journal.md:begin
        JournalEntry first = journal.verify().client().sent(toolCall("write")).atLeast(1).get(0);
        journal.verify().client().sent(sameArgumentsAs(first)).times(2);          // idempotency keys aside
        journal.verify().client().sent(toolCall("write", "{\"row\":7}")).times(2);  // the same, from the arguments
        journal.verify().client().retriedAfter(notReachedClient(toolCall("write"))).withSameArguments();
        // journal.md:end
    }

    @Test
    void aSafeRetryPasses() {
        Entries written = new Entries();
        long dropped = written.at(0).toolCall("0d76b87c", 1, "write", ROW_7);
        written.fault(dropped, "lose-request", "drop", "dropped");
        written.at(3000).passed(written.toolCall("0d76b87c", 2, "write", ROW_7));
        written.at(3011).passed(written.response("0d76b87c", 2, "tools/call", "write"));
        Journal journal = written.ring();

        // journal.md:begin
        // A rule dropped the write before the server: sending it again is a safe retry.
        journal.verify().client().sent(notReachedServer(toolCall("write"))).once();
        journal.verify().client().retriedAfter(notReachedServer(toolCall("write"))).withSameArguments();
        journal.verify().client().duplicateWrites(toolCall("write")).never();
        // journal.md:end
    }

    @Test
    void theDocumentShowsTheseExamplesAndNoOthers() throws IOException {
        List<String> compiled = blocks(Files.readString(SOURCE));
        assertThat(compiled).as("blocks marked in " + SOURCE).hasSize(4);
        List<String> shown = new ArrayList<>();
        Matcher fences = Pattern.compile("```java\n(.*?)\n```", Pattern.DOTALL).matcher(Files.readString(DOC));
        while (fences.find()) {
            shown.add(fences.group(1).replaceAll("(?m)^import [^\n]*\n\n?", ""));
        }
        assertThat(shown).as("the Java blocks of docs/journal.md, import lines aside, are those compiled here")
                .containsExactlyInAnyOrderElementsOf(compiled);
    }

    /** The blocks between the markers, without their common indentation. */
    private static List<String> blocks(String source) {
        List<String> blocks = new ArrayList<>();
        Matcher m = Pattern.compile("\n( *)// journal\\.md:begin\n(.*?)\n *// journal\\.md:end", Pattern.DOTALL)
                .matcher(source);
        while (m.find()) {
            String indent = m.group(1);
            List<String> lines = new ArrayList<>();
            for (String line : m.group(2).split("\n", -1)) {
                lines.add(line.startsWith(indent) ? line.substring(indent.length()) : line.strip());
            }
            blocks.add(String.join("\n", lines));
        }
        return blocks;
    }
}
