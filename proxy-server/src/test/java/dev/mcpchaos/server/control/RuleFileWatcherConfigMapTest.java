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
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Rules from a mounted Kubernetes ConfigMap, laid out and updated exactly as the kubelet's atomic
 * writer does it, with real symbolic links and renames:
 * <pre>
 * dir/..2026_12_02_05_00_00.123/rules.yaml
 * dir/..data -> ..2026_12_02_05_00_00.123
 * dir/rules.yaml -> ..data/rules.yaml
 * </pre>
 * An update writes a new timestamped directory, points {@code ..data_tmp} at it, renames
 * {@code ..data_tmp} over {@code ..data} (atomic) and removes the old directory. Neither the
 * file the proxy was given ({@code dir/rules.yaml}, a link) nor its link changes: only what
 * {@code ..data} points at.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RuleFileWatcherConfigMapTest {

    @TempDir
    Path dir;

    private CatProxy cat;
    private int updates;

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

    /** The volume as the kubelet first lays it out; returns the path a pod's container is given. */
    private Path mount(String rules) throws IOException {
        Path version = writeVersion(rules);
        Files.createSymbolicLink(dir.resolve("..data"), version.getFileName());
        Path file = dir.resolve("rules.yaml");
        Files.createSymbolicLink(file, Path.of("..data", "rules.yaml"));
        return file;
    }

    private Path writeVersion(String rules) throws IOException {
        updates++;
        Path version = dir.resolve("..2026_12_02_05_0" + updates + "_00.123456789");
        Files.createDirectory(version);
        Files.writeString(version.resolve("rules.yaml"), rules, StandardCharsets.UTF_8);
        return version;
    }

    /** An update as the kubelet makes it: new directory, ..data_tmp, rename over ..data, old directory removed. */
    private void update(String rules) throws IOException {
        Path old = dir.resolve("..data").toRealPath();
        Path version = writeVersion(rules);
        Path tmp = dir.resolve("..data_tmp");
        Files.createSymbolicLink(tmp, version.getFileName());
        Files.move(tmp, dir.resolve("..data"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (Stream<Path> files = Files.walk(old)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Test
    void aSwapOfTheDataLinkIsAChangeAndABadUpdateKeepsTheRulesInForce() throws Exception {
        Path file = mount(dropRule("drop-a", "a"));
        assertThat(Files.isSymbolicLink(file)).isTrue();
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
            assertThat(cat.received.get(0)).contains("\"id\":2");

            // kubectl apply of the ConfigMap: the kubelet swaps ..data.
            update(dropRule("drop-b", "b"));
            assertThat(Files.isSymbolicLink(file)).as("the file given is the same link as before").isTrue();
            await().until(() -> cat.proxy.rules().ruleSet().rule("drop-b").isPresent());
            assertThat(cat.proxy.rules().ruleSet().rules()).extracting(Rule::name).containsExactly("drop-b");
            cat.send(CatProxy.call(3, "a"));
            cat.send(CatProxy.call(4, "b"));
            await().until(() -> cat.received.size() == 2);
            assertThat(cat.received.get(1)).contains("\"id\":3");
            assertThat(events.toString(StandardCharsets.UTF_8)).contains("\"event\":\"rules_changed\"")
                    .contains(file + " changed");

            // A bad update, by the same swap: refused with the reason, logged, an event; drop-b stays.
            update("rules:\n  - name: oops\n    fault: {type: latency, latency: soon}\n");
            await().until(() -> logged.list.stream().anyMatch(e -> e.getFormattedMessage().contains("not reloaded")));
            assertThat(logged.list).anySatisfy(e -> assertThat(e.getFormattedMessage())
                    .contains(file + " was not reloaded, the rules in force stay").contains("oops"));
            await().until(() -> events.toString(StandardCharsets.UTF_8).contains("\"event\":\"rules_refused\""));
            assertThat(cat.proxy.rules().ruleSet().rules()).extracting(Rule::name).containsExactly("drop-b");
            cat.send(CatProxy.call(5, "b"));
            cat.send(CatProxy.call(6, "a"));
            await().until(() -> cat.received.size() == 3);
            assertThat(cat.received.get(2)).contains("\"id\":6");

            // Fixed by the next update (and chaos turned off by an empty ConfigMap's rules).
            update("rules: []\n");
            await().until(() -> cat.proxy.rules().ruleSet().rules().isEmpty());
            cat.send(CatProxy.call(7, "b"));
            await().until(() -> cat.received.size() == 4);
            assertThat(cat.received.get(3)).contains("\"id\":7");
            try (Stream<Path> left = Files.list(dir)) {
                assertThat(left.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("..2026")))
                        .as("the kubelet removed every old version").hasSize(1);
            }
        } finally {
            watcherLog.detachAppender(logged);
        }
    }
}
