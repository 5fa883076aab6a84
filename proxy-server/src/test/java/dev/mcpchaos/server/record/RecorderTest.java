package dev.mcpchaos.server.record;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.testing.CatProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The recorder on a stdio proxy whose server is {@code cat}: every message comes back. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RecorderTest {

    private static final String DROP_X = """
            rules:
              - name: drop-x
                match: {direction: client_to_server, tool: x}
                fault: {type: drop}
            """;

    @TempDir
    Path dir;

    private static String call(int id, String tool) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool + "\"}}";
    }

    @Test
    void everyMessageBothWaysIsRecordedInOrderMalformedOnesAsText() throws Exception {
        Path file = dir.resolve("cat.ndjson");
        try (CatProxy cat = new CatProxy(b -> b.record(file))) {
            cat.send(call(1, "a"));
            cat.send("{\"jsonrpc\":\"2.0\",\"id\":2,");
            cat.send(call(3, "b"));
            await().atMost(Duration.ofSeconds(20)).until(() -> cat.received.size() == 3);
        }
        Cassette cassette = Cassette.read(file);
        // Each direction in its order; how the two interleave is the threads' business.
        for (Direction direction : Direction.values()) {
            List<CassetteEntry> way = cassette.entries().stream().filter(e -> e.direction() == direction).toList();
            assertThat(way).as(direction.arrow()).hasSize(3);
            assertThat(way.get(0).message().toString()).isEqualTo(call(1, "a"));
            assertThat(way.get(1).message()).isNull();
            assertThat(way.get(1).raw()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":2,");
            assertThat(way.get(2).message().toString()).isEqualTo(call(3, "b"));
            assertThat(way).extracting(CassetteEntry::timeMillis).isSorted();
        }
        assertThat(cassette.entries()).extracting(CassetteEntry::seq).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
        assertThat(cassette.header().transport()).isEqualTo("stdio");
        assertThat(cassette.header().protocolVersion()).as("no initialize seen").isNull();
        for (String line : Files.readAllLines(file)) {
            assertThat(CassetteLineSchema.errors(line)).as(line).isEmpty();
        }
    }

    @Test
    void beforeFaultsRecordsWhatTheClientSentAfterFaultsWhatTheServerGot() throws Exception {
        Path before = dir.resolve("before.ndjson");
        Path after = dir.resolve("after.ndjson");
        for (Path file : List.of(before, after)) {
            try (CatProxy cat = new CatProxy(b -> b.rules(RuleSet.parse(DROP_X, "r.yaml"))
                    .record(Recording.to(file).afterFaults(file == after)))) {
                cat.send(call(1, "x"));
                cat.send(call(2, "y"));
                await().atMost(Duration.ofSeconds(20)).until(() -> cat.received.size() == 1);
                assertThat(cat.received).containsExactly(call(2, "y"));
            }
        }
        assertThat(Cassette.read(before).entries()).extracting(e -> e.direction() + " " + e.message().path("id"))
                .containsExactly("CLIENT_TO_SERVER 1", "CLIENT_TO_SERVER 2", "SERVER_TO_CLIENT 2");
        assertThat(Cassette.read(after).entries()).extracting(e -> e.direction() + " " + e.message().path("id"))
                .containsExactly("CLIENT_TO_SERVER 2", "SERVER_TO_CLIENT 2");
    }

    @Test
    void aDirectoryGetsOneCassettePerSessionNamedAfterIt() throws Exception {
        Path cassettes = dir.resolve("cassettes");
        try (CatProxy cat = new CatProxy(b -> b.record(Recording.toDirectory(cassettes)))) {
            cat.send(call(1, "a"));
            await().atMost(Duration.ofSeconds(20)).until(() -> cat.received.size() == 1);
        }
        try (var files = Files.list(cassettes)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly("stdio.ndjson");
        }
        assertThat(Cassette.read(cassettes.resolve("stdio.ndjson")).entries()).hasSize(2);
    }

    @Test
    void aWriteErrorIsLoggedOnceAndRecordingStopsWhileTheProxyGoesOn() throws Exception {
        Path full = Path.of("/dev/full"); // every write fails: no space left on device
        Logger logger = (Logger) LoggerFactory.getLogger(Recorder.class);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        logger.addAppender(logged);
        try (CatProxy cat = new CatProxy(b -> b.record(Recording.toFile(full)))) {
            for (int i = 1; i <= 50; i++) {
                cat.send(call(i, "a"));
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> cat.received.size() == 50);
            // The writer holds a session's lines until it is past the wait for initialize: then it writes, and fails.
            await().atMost(Duration.ofSeconds(20)).until(() -> logged.list.stream()
                    .anyMatch(e -> e.getFormattedMessage().startsWith("record: cannot write /dev/full")));
            for (int i = 51; i <= 60; i++) {
                cat.send(call(i, "a"));
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> cat.received.size() == 60);
        } finally {
            logger.detachAppender(logged);
        }
        assertThat(logged.list.stream().filter(e -> e.getFormattedMessage().startsWith("record: cannot write")))
                .hasSize(1);
    }
}
