package dev.mcpchaos.server.drill;

import dev.mcpchaos.rules.journal.JournalEntry;
import dev.mcpchaos.rules.journal.JournalJson;
import dev.mcpchaos.rules.journal.JournalSnapshot;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The journals of a stdio scenario: one per stdio proxy the client started, each written into
 * the scenario's directory by {@code mcp-chaos stdio --journal-dump DIR} as
 * {@code journal-PID.json}, with {@code journal-PID.running} there while that proxy runs. A
 * client may start the server command more than once: the TypeScript SDK 2.4 client in its
 * 2026-07-28 negotiation probes {@code server/discover} on a process of its own before it starts
 * the one it talks to, and the 2026-07-28 stdio page asks a client to restart a server that died.
 * One file per process keeps each whole (one path for all of them would keep the last written,
 * and a reader could take the probe's for the run's); they are graded as one journal.
 */
final class StdioDumps {

    private static final String PREFIX = "journal-";

    private StdioDumps() {
    }

    /** Whether every proxy started with {@code dir} has written its journal, and at least one did. */
    static boolean done(Path dir) throws IOException {
        boolean any = false;
        for (Path file : files(dir)) {
            String name = file.getFileName().toString();
            if (name.endsWith(".running")) {
                return false;
            }
            any |= name.endsWith(".json");
        }
        return any;
    }

    /**
     * The journal of the run once every proxy has written its own, as JSON (one journal as it
     * was written; several merged, {@link #merge}); null when none came within {@code wait}.
     */
    static String await(Path dir, Duration wait) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        while (!done(dir)) {
            if (System.nanoTime() > deadline) {
                break;
            }
            Thread.sleep(50);
        }
        List<String> journals = new ArrayList<>();
        for (Path file : files(dir)) {
            if (file.getFileName().toString().endsWith(".json")) {
                journals.add(Files.readString(file, StandardCharsets.UTF_8));
            }
        }
        if (journals.isEmpty()) {
            return null;
        }
        if (journals.size() == 1) {
            return journals.get(0);
        }
        return JournalJson.write(merge(journals.stream().map(JournalJson::read).toList()));
    }

    /**
     * Several proxies' journals as one, in the order their messages arrived: the proxy that started
     * first keeps its session's name, the others' sessions are named {@code <session>#2},
     * {@code #3} in the order they started (each process is a connection of its own, and its
     * request ids may repeat another's); {@code elapsed} counts from the first proxy's start, and
     * the entries are numbered afresh.
     */
    static JournalSnapshot merge(List<JournalSnapshot> journals) {
        List<JournalSnapshot> byStart = journals.stream().filter(j -> !j.entries().isEmpty())
                .sorted(Comparator.comparing(StdioDumps::start)).toList();
        List<JournalEntry> entries = new ArrayList<>();
        int capacity = 0;
        long evicted = 0;
        Instant first = byStart.isEmpty() ? null : start(byStart.get(0));
        for (int i = 0; i < byStart.size(); i++) {
            JournalSnapshot journal = byStart.get(i);
            Duration offset = Duration.between(first, start(journal));
            for (JournalEntry e : journal.entries()) {
                String session = i == 0 ? e.session() : e.session() + "#" + (i + 1);
                entries.add(new JournalEntry(0, e.elapsed().plus(offset), e.wallTime(), session, e.transport(),
                        e.direction(), e.kind(), e.id(), e.method(), e.tool(), e.requestId(), e.httpStatus(),
                        e.httpHeaders(), e.faults(), e.delivered(), e.paramsFingerprint(), e.writeFingerprint(),
                        e.message()));
            }
        }
        for (JournalSnapshot journal : journals) {
            capacity += journal.capacity();
            evicted += journal.evicted();
        }
        // Stable: a process's own entries keep their order when two share an instant.
        entries.sort(Comparator.comparing(JournalEntry::wallTime));
        List<JournalEntry> numbered = new ArrayList<>(entries.size());
        for (int i = 0; i < entries.size(); i++) {
            numbered.add(entries.get(i).withSequence(i + 1));
        }
        return new JournalSnapshot(numbered, capacity, evicted, numbered.size() + 1L);
    }

    /** When a proxy started: its first entry's wall time less its elapsed time. */
    private static Instant start(JournalSnapshot journal) {
        JournalEntry e = journal.entries().get(0);
        return e.wallTime().minus(e.elapsed());
    }

    private static List<Path> files(Path dir) throws IOException {
        try (Stream<Path> list = Files.list(dir)) {
            return list.filter(f -> f.getFileName().toString().startsWith(PREFIX)).sorted().toList();
        }
    }
}
