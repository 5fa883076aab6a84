package dev.mcpchaos.bench.startup;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Start-up time of a stdio MCP server command: from launching it to reading the first line of its
 * answer to an {@code initialize} request written on its stdin at once (the time an MCP client
 * waits before it can do anything). Each case is a shell command run as
 * {@code /bin/sh -c "exec COMMAND"}, so every case pays the same shell start.
 *
 * <p>Usage: {@code FirstResponseTime [--runs N] [--timeout SECONDS] LABEL=COMMAND...}. The cases
 * run round-robin, {@code N} times each, so a burst of load on the machine hits all of them
 * alike. Prints each case's median, p90, min and max in milliseconds, and the median's difference
 * to the first case's. Bounded: each run is killed after the timeout (default 30 s).
 */
public final class FirstResponseTime {

    static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
            + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
            + "\"clientInfo\":{\"name\":\"mcp-chaos-bench\",\"version\":\"0\"}}}\n";

    private FirstResponseTime() {
    }

    public static void main(String[] args) throws Exception {
        int runs = 10;
        long timeoutSeconds = 30;
        Map<String, String> cases = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--runs")) {
                runs = Integer.parseInt(args[++i]);
            } else if (args[i].equals("--timeout")) {
                timeoutSeconds = Long.parseLong(args[++i]);
            } else {
                int eq = args[i].indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException("case: " + args[i] + " (expected: LABEL=COMMAND)");
                }
                cases.put(args[i].substring(0, eq), args[i].substring(eq + 1));
            }
        }
        if (cases.isEmpty() || runs < 1 || runs > 1000) {
            System.err.println("usage: FirstResponseTime [--runs 1..1000] [--timeout SECONDS] LABEL=COMMAND...");
            System.exit(2);
        }
        Map<String, List<Double>> millis = new LinkedHashMap<>();
        cases.keySet().forEach(label -> millis.put(label, new ArrayList<>()));
        for (int run = 0; run < runs; run++) {
            for (Map.Entry<String, String> c : cases.entrySet()) {
                millis.get(c.getKey()).add(once(c.getValue(), timeoutSeconds));
            }
        }
        String first = cases.keySet().iterator().next();
        double base = percentile(millis.get(first), 50);
        System.out.printf("%-34s %6s %9s %9s %9s %9s %12s%n", "case", "runs", "median", "p90", "min", "max", "added (med)");
        for (Map.Entry<String, List<Double>> e : millis.entrySet()) {
            List<Double> v = e.getValue();
            double median = percentile(v, 50);
            System.out.printf("%-34s %6d %7.0f ms %6.0f ms %6.0f ms %6.0f ms %+9.0f ms%n", e.getKey(), v.size(), median,
                    percentile(v, 90), percentile(v, 0), percentile(v, 100), median - base);
        }
    }

    /** Milliseconds from start to the first line of the answer. */
    static double once(String command, long timeoutSeconds) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("/bin/sh", "-c", "exec " + command)
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        long start = System.nanoTime();
        Process process = pb.start();
        try {
            CompletableFuture<Long> answered = CompletableFuture.supplyAsync(() -> {
                try (BufferedReader out = new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    OutputStream in = process.getOutputStream();
                    in.write(INITIALIZE.getBytes(StandardCharsets.UTF_8));
                    in.flush();
                    String line;
                    while ((line = out.readLine()) != null) {
                        if (line.contains("\"id\":1") && (line.contains("\"result\"") || line.contains("\"error\""))) {
                            return System.nanoTime();
                        }
                    }
                    throw new IllegalStateException("the output ended before the answer to initialize: " + command);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            long end;
            try {
                end = answered.get(timeoutSeconds, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                throw new IllegalStateException("no answer within " + timeoutSeconds + " s: " + command, e);
            } catch (ExecutionException e) {
                throw new IllegalStateException(e.getCause().getMessage(), e.getCause());
            }
            return (end - start) / 1e6;
        } finally {
            stop(process);
        }
    }

    /** Closes the command's stdin (the MCP way to end a stdio server), then terminates what is left. */
    private static void stop(Process process) throws InterruptedException {
        try {
            process.getOutputStream().close();
        } catch (IOException ignored) {
            // already gone
        }
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.descendants().forEach(ProcessHandle::destroy);
            process.destroy();
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
    }

    static double percentile(List<Double> values, double p) {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(sorted);
        // Nearest rank: the smallest value with at least p % of the values at or below it.
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }
}
