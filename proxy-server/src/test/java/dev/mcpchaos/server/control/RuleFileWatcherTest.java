package dev.mcpchaos.server.control;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.mcpchaos.rules.Rule;
import dev.mcpchaos.server.testing.CatProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Hot reload of the --rules file: valid edits apply, invalid ones are refused and the rules stay. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RuleFileWatcherTest {

    @TempDir
    Path dir;

    private CatProxy cat;

    @AfterEach
    void close() {
        if (cat != null) {
            cat.close();
        }
    }

    private static String dropRule(String name, String tool) {
        return "rules:\n  - name: " + name + "\n    match: {direction: client_to_server, tool: " + tool + "}\n"
                + "    fault: {type: drop}\n";
    }

    @Test
    void validEditsApplyAndInvalidOnesAreRefused() throws Exception {
        Path file = dir.resolve("rules.yaml");
        Files.writeString(file, dropRule("drop-a", "a"));
        ByteArrayOutputStream events = new ByteArrayOutputStream();
        Logger watcherLog = (Logger) LoggerFactory.getLogger(RuleFileWatcher.class);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        watcherLog.addAppender(logged);
        try {
            cat = new CatProxy(b -> b.rules(file).events(events, false));
            cat.send(CatProxy.call(1, "a"));
            cat.send(CatProxy.call(2, "b"));
            await().until(() -> cat.received.size() == 1);

            // An editor's save: a new file renamed over the old one.
            Path temp = dir.resolve(".rules.yaml.swp");
            Files.writeString(temp, dropRule("drop-b", "b"));
            Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            await().until(() -> cat.proxy.rules().ruleSet().rule("drop-b").isPresent());
            cat.send(CatProxy.call(3, "a"));
            cat.send(CatProxy.call(4, "b"));
            await().until(() -> cat.received.size() == 2);

            // A broken edit, written in place: refused, logged, and drop-b stays.
            Files.writeString(file, "rules:\n  - name: oops\n    fault: {type: latency, latency: soon}\n");
            await().until(() -> logged.list.stream().anyMatch(e -> e.getFormattedMessage().contains("not reloaded")));
            assertThat(cat.proxy.rules().ruleSet().rules()).extracting(Rule::name).containsExactly("drop-b");
            cat.send(CatProxy.call(5, "b"));
            cat.send(CatProxy.call(6, "a"));
            await().until(() -> cat.received.size() == 3);

            // Fixed again.
            Files.writeString(file, dropRule("drop-a", "a"));
            await().until(() -> cat.proxy.rules().ruleSet().rule("drop-a").isPresent());
            cat.send(CatProxy.call(7, "a"));
            cat.send(CatProxy.call(8, "b"));
            cat.finish();

            assertThat(cat.received).containsExactly(CatProxy.call(2, "b"), CatProxy.call(3, "a"),
                    CatProxy.call(6, "a"), CatProxy.call(8, "b"));
            String refusal = logged.list.stream().map(ILoggingEvent::getFormattedMessage)
                    .filter(m -> m.contains("not reloaded")).findFirst().orElseThrow();
            assertThat(refusal).isEqualTo(file + " was not reloaded, the rules in force stay: " + file
                    + ": rule 'oops': fault.latency: 'soon' (expected: a duration >= 0, such as 250ms)");
            String log = events.toString(StandardCharsets.UTF_8);
            assertThat(log).contains("\"event\":\"rules_changed\",\"cause\":\"" + file + " changed\"")
                    .contains("\"event\":\"rules_refused\"");
        } finally {
            watcherLog.detachAppender(logged);
        }
    }

    @Test
    void editsUnderTrafficLoseNoMessage() throws Exception {
        Path file = dir.resolve("rules.yaml");
        Files.writeString(file, dropRule("drop-victim", "victim"));
        cat = new CatProxy(b -> b.rules(file));
        Thread editor = new Thread(() -> {
            try {
                for (int i = 0; i < 20; i++) {
                    // Alternate between dropping the victims and letting them through, and a broken file.
                    String text = i % 3 == 2 ? "rules: [" : i % 2 == 0 ? dropRule("pass", "nobody")
                            : dropRule("drop-victim", "victim");
                    Files.writeString(file, text);
                    Thread.sleep(RuleFileWatcher.SETTLE_MILLIS / 2 + i % 4 * 40);
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        editor.start();
        // Traffic for as long as the editor edits (bounded in count), in bursts of 50.
        int messages = 0;
        while (editor.isAlive() && messages < 40_000) {
            cat.send(CatProxy.call(messages, messages % 2 == 0 ? "keep" : "victim"));
            if (++messages % 50 == 0) {
                Thread.sleep(2);
            }
        }
        if (messages % 2 == 1) { // even out: as many victims as keepers
            cat.send(CatProxy.call(messages++, "victim"));
        }
        editor.join();
        cat.finish();

        // Every "keep" message arrived once, in order; victims arrived unless a rule dropped them.
        assertThat(cat.received.stream().filter(l -> l.contains("\"keep\""))).hasSize(messages / 2)
                .isSortedAccordingTo((x, y) -> Long.compare(id(x), id(y)));
        long victims = cat.received.stream().filter(l -> l.contains("\"victim\"")).count();
        assertThat(cat.received.stream().distinct()).hasSameSizeAs(cat.received);
        assertThat(victims + cat.faults.get()).isEqualTo(messages / 2);
        // The edits landed while traffic flowed: some victims were dropped, some were not.
        assertThat(victims).isPositive();
        assertThat(cat.faults.get()).isPositive();
    }

    private static long id(String line) {
        int at = line.indexOf("\"id\":") + 5;
        return Long.parseLong(line.substring(at, line.indexOf(',', at)));
    }
}
