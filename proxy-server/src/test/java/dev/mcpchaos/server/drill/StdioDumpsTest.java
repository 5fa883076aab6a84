package dev.mcpchaos.server.drill;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.journal.JournalEntry;
import dev.mcpchaos.rules.journal.JournalJson;
import dev.mcpchaos.rules.journal.JournalSnapshot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The journals of the stdio proxies one scenario's client started (a probe process, then the one
 * it talks to), graded as one: in arrival order, each process a session of its own, the time
 * counted from the first proxy's start; and the drill waits until every proxy has written its own.
 */
class StdioDumpsTest {

    private static final Instant T = Instant.parse("2026-12-07T10:00:00Z");

    private static JournalEntry entry(long sequence, Duration elapsed, Instant start, Object id, String method) {
        return new JournalEntry(sequence, elapsed, start.plus(elapsed), "stdio", "stdio", Direction.CLIENT_TO_SERVER,
                MessageKind.REQUEST, id, method, null, null, null, null, null, true, null, null, null);
    }

    @Test
    void mergesTheProxiesJournalsInArrivalOrderEachProcessASessionOfItsOwn() {
        Instant second = T.plusSeconds(2);
        JournalSnapshot probe = new JournalSnapshot(List.of(
                entry(1, Duration.ofSeconds(1), T, "server-discover-probe-1", "server/discover"),
                entry(2, Duration.ofSeconds(3), T, 9L, "ping")), 100, 0, 3);
        JournalSnapshot session = new JournalSnapshot(List.of(
                entry(1, Duration.ofMillis(500), second, 0L, "tools/list"),
                entry(2, Duration.ofSeconds(2), second, 1L, "tools/call")), 100, 1, 3);

        // Given in the other order: the proxy that started first comes first whatever the files' order.
        JournalSnapshot merged = StdioDumps.merge(List.of(session, probe));

        assertThat(merged.entries()).extracting(JournalEntry::method)
                .containsExactly("server/discover", "tools/list", "ping", "tools/call");
        assertThat(merged.entries()).extracting(JournalEntry::session)
                .containsExactly("stdio", "stdio#2", "stdio", "stdio#2");
        assertThat(merged.entries()).extracting(JournalEntry::sequence).containsExactly(1L, 2L, 3L, 4L);
        assertThat(merged.entries()).extracting(JournalEntry::elapsed).containsExactly(Duration.ofSeconds(1),
                Duration.ofMillis(2500), Duration.ofSeconds(3), Duration.ofSeconds(4));
        assertThat(merged.capacity()).isEqualTo(200);
        assertThat(merged.evicted()).isEqualTo(1);
        assertThat(merged.next()).isEqualTo(5);
    }

    @Test
    void waitsForEveryProxyThatIsStillRunningAndReadsOneJournalAsItWasWritten(@TempDir Path dir) throws Exception {
        JournalSnapshot one = new JournalSnapshot(List.of(entry(1, Duration.ofSeconds(1), T, 0L, "tools/list")),
                100, 0, 2);
        assertThat(StdioDumps.done(dir)).as("no proxy wrote anything yet").isFalse();
        Files.writeString(dir.resolve("journal-11.json"), JournalJson.write(one));
        Files.writeString(dir.resolve("journal-12.running"), "");
        assertThat(StdioDumps.done(dir)).as("proxy 12 still runs").isFalse();
        assertThat(StdioDumps.await(dir, Duration.ofMillis(200))).as("what there is, after the wait")
                .isEqualTo(JournalJson.write(one));
        Files.delete(dir.resolve("journal-12.running"));
        assertThat(StdioDumps.done(dir)).isTrue();
    }
}
