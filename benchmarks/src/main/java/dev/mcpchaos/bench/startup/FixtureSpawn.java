package dev.mcpchaos.bench.startup;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * mcp-chaos as a fixture a test spawns per test (issue #34): cold spawns of {@code ./mcp-chaos}
 * timed as an MCP client with a short timeout meets them, each case's median beside its target.
 *
 * <ul>
 *   <li><b>First answer</b>: from spawning the command to the first line of its answer to an
 *       {@code initialize} written at once; for {@code demo-server}, for {@code replay} of a
 *       cassette, for a tiny Node server alone and for {@code stdio} in front of it (the target
 *       there is the difference of the medians).</li>
 *   <li><b>Exit after the server's own exit</b>: the server (the tiny Node one, started with
 *       {@code FIXTURE_EXIT_CODE=70}) answers {@code initialize} and exits; it writes the time of
 *       its exit on the monotonic clock ({@code process.hrtime}, which is {@link System#nanoTime}'s
 *       clock on Linux) to a file, and the time is from there to the process's exit as this
 *       harness sees it. The server alone is measured the same way, for reference.</li>
 *   <li><b>Exit after a crash</b>: {@code stdio} (in front of the tiny server) and {@code replay},
 *       each with a rule that crashes the server on {@code tools/call}: {@code initialize},
 *       its answer, then a {@code tools/call}; the time is from the end of stdout to the exit.</li>
 * </ul>
 *
 * <p>Every case checks the exit code it documents (the server's 70, 137 after a crash, 0 for the
 * others). Cases run round-robin, {@code --runs} times each (at most 50), so a burst of load
 * hits them alike; each spawn is bounded by {@code --timeout} seconds. Pipes only.
 *
 * <p>Usage: {@code FixtureSpawn --launcher ./mcp-chaos --node node --server bench/fixture-server.js
 * --cassette fixture.ndjson --crash-rules crash.yaml [--runs 7] [--timeout 30]}.
 */
public final class FixtureSpawn {

    private static final String INITIALIZE = FirstResponseTime.INITIALIZE;
    private static final String CALL = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
            + "{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}\n";

    private static final double FIRST_ANSWER_TARGET_MS = 300;
    private static final double STDIO_ADDED_TARGET_MS = 150;
    private static final double EXIT_TARGET_MS = 50;

    private final long timeoutSeconds;
    private final Path work;

    private FixtureSpawn(long timeoutSeconds, Path work) {
        this.timeoutSeconds = timeoutSeconds;
        this.work = work;
    }

    /** What one spawn gave: the time measured, in ms, and the exit code. */
    private record Sample(double millis, int exitCode) {
    }

    /** A case: its label, how to measure it once, the exit code it must give. */
    private record Case(String label, int expectedCode, Measure measure) {
    }

    @FunctionalInterface
    private interface Measure {
        Sample once() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("option: " + args[i] + " (expected: --name value)");
            }
            options.put(args[i].substring(2), args[i + 1]);
        }
        int runs = Integer.parseInt(options.getOrDefault("runs", "7"));
        long timeout = Long.parseLong(options.getOrDefault("timeout", "30"));
        if (runs < 1 || runs > 50 || timeout < 1 || timeout > 300 || !options.keySet().containsAll(
                List.of("launcher", "node", "server", "cassette", "crash-rules"))) {
            System.err.println("usage: FixtureSpawn --launcher PATH --node PATH --server FILE.js --cassette FILE "
                    + "--crash-rules FILE [--runs 1..50] [--timeout 1..300]");
            System.exit(2);
        }
        String launcher = options.get("launcher");
        List<String> server = List.of(options.get("node"), options.get("server"));
        String cassette = options.get("cassette");
        String crash = options.get("crash-rules");
        FixtureSpawn bench = new FixtureSpawn(timeout, Files.createTempDirectory("fixture-spawn"));

        List<String> stdio = join(List.of(launcher, "stdio", "--quiet", "--"), server);
        List<Case> firstAnswer = List.of(
                new Case("demo-server", 0, () -> bench.firstAnswer(List.of(launcher, "demo-server"))),
                new Case("replay of a cassette", 0, () -> bench.firstAnswer(List.of(launcher, "replay", cassette, "--quiet"))),
                new Case("tiny Node server alone", 0, () -> bench.firstAnswer(server)),
                new Case("stdio in front of it", 0, () -> bench.firstAnswer(stdio)));
        List<Case> exits = List.of(
                new Case("server exits (70): server alone", 70, () -> bench.afterServerExit(server)),
                new Case("server exits (70): stdio", 70, () -> bench.afterServerExit(stdio)),
                new Case("crash rule: stdio", 137, () -> bench.afterCrash(join(
                        List.of(launcher, "stdio", "--quiet", "--rules", crash, "--"), server))),
                new Case("crash rule: replay", 137, () -> bench.afterCrash(
                        List.of(launcher, "replay", cassette, "--quiet", "--rules", crash))));

        Map<String, List<Sample>> samples = new LinkedHashMap<>();
        List<Case> all = new ArrayList<>(firstAnswer);
        all.addAll(exits);
        all.forEach(c -> samples.put(c.label(), new ArrayList<>()));
        for (int run = 0; run < runs; run++) {
            for (Case c : all) {
                samples.get(c.label()).add(c.measure().once());
            }
        }

        System.out.println("first answer to initialize, from spawn (median of " + runs + " cold spawns):");
        header();
        for (Case c : firstAnswer) {
            String target = switch (c.label()) {
                case "demo-server", "replay of a cassette" -> verdict(median(samples.get(c.label())), FIRST_ANSWER_TARGET_MS,
                        "<= 300 ms");
                case "stdio in front of it" -> {
                    double added = median(samples.get(c.label())) - median(samples.get("tiny Node server alone"));
                    yield String.format("adds %+.0f ms to the server alone: %s", added,
                            verdict(added, STDIO_ADDED_TARGET_MS, "<= +150 ms"));
                }
                default -> "";
            };
            row(c, samples.get(c.label()), target);
        }
        System.out.println();
        System.out.println("exit: after the server's own exit (its stamp), or after stdout's end (crash):");
        header();
        for (Case c : exits) {
            String target = c.label().endsWith("server alone") ? "(reference)"
                    : verdict(median(samples.get(c.label())), EXIT_TARGET_MS, "<= 50 ms");
            row(c, samples.get(c.label()), target);
        }
    }

    private static void header() {
        System.out.printf("  %-34s %8s %8s %8s  %-10s %s%n", "case", "median", "min", "max", "exit codes", "target");
    }

    private static void row(Case c, List<Sample> values, String target) {
        Map<Integer, Integer> codes = new TreeMap<>();
        values.forEach(s -> codes.merge(s.exitCode(), 1, Integer::sum));
        String codeText = codes.keySet().equals(java.util.Set.of(c.expectedCode()))
                ? String.valueOf(c.expectedCode()) : "WRONG " + codes + " (expected " + c.expectedCode() + ")";
        double[] sorted = values.stream().mapToDouble(Sample::millis).sorted().toArray();
        System.out.printf("  %-34s %5.0f ms %5.0f ms %5.0f ms  %-10s %s%n", c.label(), median(values), sorted[0],
                sorted[sorted.length - 1], codeText, target);
    }

    private static String verdict(double value, double target, String text) {
        return text + (value <= target ? " (met)" : " (not met)");
    }

    private static double median(List<Sample> values) {
        double[] sorted = values.stream().mapToDouble(Sample::millis).sorted().toArray();
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static List<String> join(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    /** Spawn to the first line of the answer to {@code initialize}; then stdin is closed. */
    private Sample firstAnswer(List<String> command) throws Exception {
        long start = System.nanoTime();
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try (Session session = new Session(process)) {
            session.send(INITIALIZE);
            session.awaitAnswer(1);
            double millis = (System.nanoTime() - start) / 1e6;
            process.getOutputStream().close();
            return new Sample(millis, session.awaitExit());
        }
    }

    /** The server answers {@code initialize} and exits with 70: from its exit stamp to the exit. */
    private Sample afterServerExit(List<String> command) throws Exception {
        Path stamp = work.resolve("exit-stamp");
        Files.deleteIfExists(stamp);
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD);
        builder.environment().put("FIXTURE_EXIT_CODE", "70");
        builder.environment().put("FIXTURE_EXIT_STAMP", stamp.toString());
        try (Session session = new Session(builder.start())) {
            session.send(INITIALIZE); // stdin stays open, as a client keeps it
            session.awaitAnswer(1);
            int code = session.awaitExit();
            long exited = session.exitedAt;
            long serverExit = Long.parseLong(Files.readString(stamp).trim());
            return new Sample((exited - serverExit) / 1e6, code);
        }
    }

    /** {@code initialize}, its answer, then a {@code tools/call} that a rule crashes: stdout's end to the exit. */
    private Sample afterCrash(List<String> command) throws Exception {
        try (Session session = new Session(new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.DISCARD).start())) {
            session.send(INITIALIZE);
            session.awaitAnswer(1);
            session.send(CALL);
            long end = session.awaitEndOfOutput();
            int code = session.awaitExit();
            return new Sample((session.exitedAt - end) / 1e6, code);
        }
    }

    /** One spawned process as its client sees it; every wait is bounded by the timeout. */
    private final class Session implements AutoCloseable {
        private final Process process;
        private final OutputStream stdin;
        private final BufferedReader stdout;
        private final CompletableFuture<Integer> exit;
        private volatile long exitedAt;

        Session(Process process) {
            this.process = process;
            this.stdin = process.getOutputStream();
            this.stdout = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            // A thread of its own waits for the exit, so that the time is taken as it happens.
            this.exit = CompletableFuture.supplyAsync(() -> {
                try {
                    int code = process.waitFor();
                    exitedAt = System.nanoTime();
                    return code;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            });
        }

        void send(String line) throws IOException {
            stdin.write(line.getBytes(StandardCharsets.UTF_8));
            stdin.flush();
        }

        void awaitAnswer(int id) throws Exception {
            bounded(() -> {
                for (String line = stdout.readLine(); line != null; line = stdout.readLine()) {
                    if (line.contains("\"id\":" + id) && (line.contains("\"result\"") || line.contains("\"error\""))) {
                        return 0L;
                    }
                }
                throw new IllegalStateException("the output ended before the answer to request " + id);
            }, "the answer to request " + id);
        }

        /** Reads to the end of stdout; when it came. */
        long awaitEndOfOutput() throws Exception {
            return bounded(() -> {
                while (stdout.readLine() != null) {
                    // whatever is left: the crash drops the call
                }
                return System.nanoTime();
            }, "the end of stdout");
        }

        int awaitExit() throws Exception {
            try {
                return exit.get(timeoutSeconds, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                throw new IllegalStateException("no exit within " + timeoutSeconds + " s: " + process.info().commandLine()
                        .orElse("?"), e);
            }
        }

        private long bounded(java.util.concurrent.Callable<Long> read, String what) throws Exception {
            CompletableFuture<Long> result = CompletableFuture.supplyAsync(() -> {
                try {
                    return read.call();
                } catch (Exception e) {
                    throw new IllegalStateException(e.getMessage(), e);
                }
            });
            try {
                return result.get(timeoutSeconds, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                throw new IllegalStateException("no " + what + " within " + timeoutSeconds + " s", e);
            } catch (ExecutionException e) {
                throw new IllegalStateException(e.getCause().getMessage(), e.getCause());
            }
        }

        @Override
        public void close() throws InterruptedException {
            try {
                stdin.close();
            } catch (IOException ignored) {
                // already gone
            }
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
    }
}
