package dev.mcpchaos.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.FaultListener;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongFunction;

/**
 * One soak's client side and its accounting: a bounded loop of tool calls through a
 * {@link RawJsonRpc} with a window of calls in flight, the answers received per request id, the
 * fault events the proxy reported, and the invariant that ties them: per id, 0 answers for a
 * logged drop, 2 for a logged duplicate, 1 otherwise.
 *
 * <p>Everything kept per id is in arrays sized by {@link Plan#calls} when the soak is made, and
 * everything else is bounded (the calls in flight, a few examples of what went wrong), so the
 * heap this client holds does not grow with the calls it makes: the heap samples
 * ({@link #sampleHeap}) of a JVM that runs the proxy in-process then show the proxy's.
 */
final class AnswerSoak implements RawJsonRpc.Listener, FaultListener {

    /** How many examples of each kind of trouble are kept for the failure message. */
    private static final int EXAMPLES = 20;

    private static final int DROPPED = 1;
    private static final int DUPLICATED = 2;
    private static final int EXPIRED = 4;
    private static final int ENDED_WITHOUT = 8;

    /** The calls one server answers, and what each answer must say. */
    record Calls(String serverName, LongFunction<String> params, LongFunction<String> expectedText) {

        /** server-everything's {@code echo} and {@code get-sum}, alternately. */
        static final Calls SERVER_EVERYTHING = new Calls("mcp-servers/everything",
                id -> id % 2 == 0
                        ? "\"name\":\"echo\",\"arguments\":{\"message\":\"soak-" + id + "\"}"
                        : "\"name\":\"get-sum\",\"arguments\":{\"a\":" + id + ",\"b\":1}",
                id -> id % 2 == 0 ? "Echo: soak-" + id : "The sum of " + id + " and 1 is " + (id + 1) + ".");

        /** The built-in demo server's {@code echo} and {@code add}, alternately. */
        static final Calls DEMO = new Calls("mcp-chaos-demo",
                id -> id % 2 == 0
                        ? "\"name\":\"echo\",\"arguments\":{\"text\":\"soak-" + id + "\"}"
                        : "\"name\":\"add\",\"arguments\":{\"a\":" + id + ",\"b\":1}",
                id -> id % 2 == 0 ? "soak-" + id : Long.toString(id + 1));

        /**
         * The built-in demo server over HTTP: {@code slow} of 0 ms with a progress token, which it
         * answers on an SSE stream (five progress notifications, then the result), the answer
         * body {@code duplicate} can act on and a {@code drop} ends at once (a dropped JSON answer
         * leaves its exchange open until the client gives up: docs/rules.md). The result does not
         * name the call, so only its id ties an answer to its request here.
         */
        static final Calls DEMO_HTTP = new Calls("mcp-chaos-demo",
                id -> "\"name\":\"slow\",\"arguments\":{\"ms\":0},\"_meta\":{\"progressToken\":\"soak-" + id + "\"}",
                id -> "slept 0 ms");

        String request(long id) {
            return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{" + params.apply(id) + "}}";
        }
    }

    /**
     * The bounds of one soak: at most {@code calls} calls, sent for at most {@code sendCap}, with
     * at most {@code inFlight} unanswered; a call without an answer is given up (its place in the
     * window freed) after {@code giveUpAfter}; fewer than {@code minCalls} sent fails the soak.
     */
    record Plan(int calls, Duration sendCap, int inFlight, Duration giveUpAfter, int minCalls) {
    }

    /** Used heap after a full GC, and the process's resident set, at one point of the soak. */
    record HeapSample(String label, long callsSent, long heapUsed, long residentSet) {
        @Override
        public String toString() {
            return String.format("%s (%,d calls) heap %.1f MB, RSS %.0f MB", label, callsSent, heapUsed / 1e6,
                    residentSet / 1e6);
        }
    }

    final Plan plan;
    final Calls calls;
    private final AtomicIntegerArray answers;
    private final AtomicIntegerArray flags;
    private final Map<String, LongAdder> eventsByType = new ConcurrentHashMap<>();
    private final LongAdder wrongCount = new LongAdder();
    private final List<String> wrong = new CopyOnWriteArrayList<>();
    private final LongAdder endedWithoutCount = new LongAdder();
    /** How the first exchanges that ended without their answer ended, for the failure message. */
    private final Map<Long, String> endedWithout = new ConcurrentHashMap<>();
    private final LongAdder otherEndings = new LongAdder();
    private final List<String> otherEndingExamples = new CopyOnWriteArrayList<>();
    private final Map<Long, Long> pending = new ConcurrentHashMap<>();
    private final Semaphore window;
    private final List<HeapSample> heap = new CopyOnWriteArrayList<>();
    private final AtomicLong expiredCount = new AtomicLong();
    private volatile long sent;
    private Duration sendTime;
    private Duration settleTime;

    AnswerSoak(Plan plan, Calls calls) {
        this.plan = plan;
        this.calls = calls;
        this.answers = new AtomicIntegerArray(plan.calls() + 1);
        this.flags = new AtomicIntegerArray(plan.calls() + 1);
        this.window = new Semaphore(plan.inFlight());
    }

    // ------------------------------------------------------------------ what the client reads

    @Override
    public void answer(JsonNode message) {
        JsonNode idNode = message.path("id");
        long id = idNode.isIntegralNumber() ? idNode.longValue() : -1;
        if (id < 1 || id > sent) {
            wrong("an answer to an id never sent: " + message);
            return;
        }
        answers.incrementAndGet((int) id);
        String text = message.path("result").path("content").path(0).path("text").asText(null);
        if (!calls.expectedText().apply(id).equals(text)) {
            wrong("the answer to " + id + " is not its own: " + message);
        }
        settle(id);
    }

    @Override
    public void ended(long id, boolean answered, String problem) {
        if (!answered) {
            setFlag(id, ENDED_WITHOUT);
            endedWithoutCount.increment();
            if (endedWithout.size() < 1000) {
                endedWithout.put(id, problem);
            }
            if (!problem.startsWith("no answer in:")) {
                otherEndings.increment();
                if (otherEndingExamples.size() < EXAMPLES) {
                    otherEndingExamples.add("id " + id + ": " + problem);
                }
            }
        }
        settle(id);
    }

    // ------------------------------------------------------------------ what the proxy reports

    /** A fault event of the proxy: counted, and its id marked; one that does not fit the rules is wrong. */
    @Override
    public void onFault(FaultEvent event) {
        eventsByType.computeIfAbsent(event.fault(), k -> new LongAdder()).increment();
        if (event.direction() != Direction.SERVER_TO_CLIENT || event.kind() != MessageKind.RESPONSE
                || !"tools/call".equals(event.method()) || !(event.id() instanceof Long)
                || (Long) event.id() < 1 || (Long) event.id() > sent) {
            wrong("an event the rules cannot have made: " + event);
            return;
        }
        long id = (Long) event.id();
        int flag = event.fault().equals("drop") ? DROPPED : event.fault().equals("duplicate") ? DUPLICATED : 0;
        if (flag != 0 && (setFlag(id, flag) & (DROPPED | DUPLICATED)) != 0) {
            // drop ends the chain, so no answer is both dropped and copied, nor either twice
            wrong("a second drop or duplicate of id " + id + ": " + event);
        }
    }

    private void wrong(String what) {
        wrongCount.increment();
        if (wrong.size() < EXAMPLES) {
            wrong.add(what);
        }
    }

    /** Sets a flag of an id; returns the flags it had before. */
    private int setFlag(long id, int flag) {
        int i = (int) id;
        while (true) {
            int before = flags.get(i);
            if (flags.compareAndSet(i, before, before | flag)) {
                return before;
            }
        }
    }

    private boolean has(long id, int flag) {
        return (flags.get((int) id) & flag) != 0;
    }

    private void settle(long id) {
        if (pending.remove(id) != null) {
            window.release();
        }
    }

    // ------------------------------------------------------------------ the loop

    /**
     * Handshake, then the bounded loop, then the wait for what is still on its way; the heap is
     * sampled after the handshake, a tenth of the way (warm), half of the way, and at the end.
     */
    void run(RawJsonRpc rpc) {
        JsonNode init = rpc.initialize();
        assertThat(init.path("result").path("serverInfo").path("name").asText()).isEqualTo(calls.serverName());
        sampleHeap("start");
        ScheduledExecutorService sweeper = Executors.newSingleThreadScheduledExecutor();
        // One sweep over the (at most inFlight) calls pending, rather than a timer per call: what
        // the harness holds stays the same however fast the calls go.
        long giveUpNanos = plan.giveUpAfter().toNanos();
        sweeper.scheduleWithFixedDelay(() -> {
            long now = System.nanoTime();
            pending.forEach((id, sentAt) -> {
                if (now - sentAt > giveUpNanos && pending.remove(id) != null) {
                    setFlag(id, EXPIRED);
                    expiredCount.incrementAndGet();
                    window.release();
                }
            });
        }, 50, 50, TimeUnit.MILLISECONDS);
        long start = System.nanoTime();
        long capNanos = plan.sendCap().toNanos();
        try {
            for (long id = 1; id <= plan.calls(); id++) {
                long left = capNanos - (System.nanoTime() - start);
                if (left <= 0 || !window.tryAcquire(left, TimeUnit.NANOSECONDS)) {
                    break;
                }
                pending.put(id, System.nanoTime());
                sent = id;
                rpc.send(id, calls.request(id));
                // A tenth and a half of the way, in calls or in time, whichever comes first.
                long elapsed = System.nanoTime() - start;
                if (!sampled("warm") && (id >= plan.calls() / 10 || elapsed >= capNanos / 10)) {
                    sampleHeap("warm");
                } else if (!sampled("middle") && (id >= plan.calls() / 2 || elapsed >= capNanos / 2)) {
                    sampleHeap("middle");
                }
            }
            sendTime = Duration.ofNanos(System.nanoTime() - start);
            // Every request is answered or given up within giveUpAfter of being sent; then the
            // answers must add up as the events say, or the per-id check tells why not.
            long deadline = System.nanoTime() + plan.giveUpAfter().plusSeconds(3).toNanos();
            while (System.nanoTime() < deadline && (!pending.isEmpty() || total() != expectedTotal())) {
                Thread.sleep(20);
            }
            settleTime = Duration.ofNanos(System.nanoTime() - start);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        } finally {
            sweeper.shutdownNow();
        }
        sampleHeap("end");
    }

    /** Used heap after full collections (until it stops falling), and the resident set now. */
    void sampleHeap(String label) {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            long now = memory.getHeapMemoryUsage().getUsed();
            if (now >= used - 64 * 1024) {
                used = Math.min(used, now);
                break;
            }
            used = now;
        }
        heap.add(new HeapSample(label, sent, used, residentSet()));
    }

    /** This process's resident set in bytes (Linux), or -1. */
    static long residentSet() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: no figure
        }
        return -1;
    }

    private boolean sampled(String label) {
        return heap.stream().anyMatch(s -> s.label().equals(label));
    }

    List<HeapSample> heap() {
        return List.copyOf(heap);
    }

    HeapSample heapAt(String label) {
        return heap.stream().filter(s -> s.label().equals(label)).findFirst()
                .orElseThrow(() -> new AssertionError("no heap sample " + label + " (calls sent: " + sent + ")"));
    }

    long sent() {
        return sent;
    }

    long total() {
        long total = 0;
        for (long id = 1; id <= sent; id++) {
            total += answers.get((int) id);
        }
        return total;
    }

    long events(String fault) {
        LongAdder count = eventsByType.get(fault);
        return count == null ? 0 : count.sum();
    }

    private long expectedTotal() {
        return sent - events("drop") + events("duplicate");
    }

    /** How many requests were given up at the client for want of an answer. */
    long expired() {
        return expiredCount.get();
    }

    /** How many exchanges ended without their answer (HTTP). */
    long endedWithoutAnswer() {
        return endedWithoutCount.sum();
    }

    /** How many exchanges ended some other way than a 200 without the answer: an error, a timeout (HTTP). */
    long otherEndings() {
        return otherEndings.sum();
    }

    List<String> otherEndingExamples() {
        return List.copyOf(otherEndingExamples);
    }

    /** The ids sent with flag {@code a} and not {@code b}, the first few. */
    private List<Long> withWithout(int a, int b, List<Long> into) {
        for (long id = 1; id <= sent && into.size() < EXAMPLES; id++) {
            if (has(id, a) && !has(id, b)) {
                into.add(id);
            }
        }
        return into;
    }

    /** Ids dropped by the proxy that the client did not give up (stdio: a dropped answer never comes). */
    List<Long> droppedNotGivenUp() {
        return withWithout(DROPPED, EXPIRED, new ArrayList<>());
    }

    /** HTTP: ids whose exchange ended without the answer that were not dropped, and the other way round. */
    List<Long> endedWithoutAnswerUnlikeDrops() {
        List<Long> ids = withWithout(ENDED_WITHOUT, DROPPED, new ArrayList<>());
        return withWithout(DROPPED, ENDED_WITHOUT, ids);
    }

    /** How the exchange of a request that lacks an answer ended, in a few words. */
    private String bodyKind(long id) {
        String problem = endedWithout.get(id);
        if (problem == null) {
            return has(id, EXPIRED) ? "given up" : has(id, ENDED_WITHOUT) ? "ended without" : "exchange complete";
        }
        if (problem.equals("no answer in: ")) {
            return "200 with an empty body";
        }
        if (problem.startsWith("no answer in: ") && problem.contains("data: ") && !problem.contains("{")) {
            return "SSE with the priming event only";
        }
        return problem.length() > 60 ? problem.substring(0, 60) + "..." : problem;
    }

    /** One line of figures. */
    String summary(String transport) {
        Map<String, Long> byType = new TreeMap<>();
        eventsByType.forEach((type, count) -> byType.put(type, count.sum()));
        long once = 0;
        long twice = 0;
        for (long id = 1; id <= sent; id++) {
            int n = answers.get((int) id);
            once += n == 1 ? 1 : 0;
            twice += n == 2 ? 1 : 0;
        }
        long total = total();
        return String.format("%s soak: %,d calls (%,d messages through the proxy) sent in %d ms (%d in flight at most),"
                        + " settled after %d ms, %,.0f calls/s; %,d answers; events %s; ids answered once %,d,"
                        + " twice %,d, never %,d; given up at the client %d; heap after GC: %s",
                transport, sent, sent + total, sendTime.toMillis(), plan.inFlight(), settleTime.toMillis(),
                sent / Math.max(0.001, settleTime.toNanos() / 1e9), total, byType, once, twice, sent - once - twice,
                expired(), heap);
    }

    /**
     * The invariant, per id: 0 answers for an id the events name as dropped, 2 for one named as
     * duplicated, 1 for any other; every rule fired; every answer the one to its own request.
     */
    void assertAccounting(String transport, Set<String> faultsExpected) {
        System.out.println(summary(transport));
        assertThat(sent).as("calls sent within %s", plan.sendCap()).isGreaterThanOrEqualTo(plan.minCalls());
        assertThat(eventsByType.keySet()).as("each rule fired").isEqualTo(faultsExpected);
        assertThat(wrong).as("answers or events that do not fit, %d in all", wrongCount.sum()).isEmpty();

        List<String> mismatches = new ArrayList<>();
        Map<String, Integer> causes = new TreeMap<>();
        long drops = 0;
        long duplicates = 0;
        for (long id = 1; id <= sent; id++) {
            boolean dropped = has(id, DROPPED);
            boolean duplicated = has(id, DUPLICATED);
            drops += dropped ? 1 : 0;
            duplicates += duplicated ? 1 : 0;
            int expected = dropped ? 0 : duplicated ? 2 : 1;
            int received = answers.get((int) id);
            if (received != expected) {
                String faults = (dropped ? "drop " : "") + (duplicated ? "duplicate" : "");
                if (mismatches.size() < EXAMPLES) {
                    String ending = endedWithout.containsKey(id) ? "; " + endedWithout.get(id) : "";
                    mismatches.add("id " + id + ": " + received + " answers, expected " + expected + " (events ["
                            + faults.trim() + "]" + ending + ")");
                }
                causes.merge(received + " of " + expected + " answers, events [" + faults.trim() + "], " + bodyKind(id), 1,
                        Integer::sum);
            }
        }
        assertThat(drops).as("ids dropped").isEqualTo(events("drop"));
        assertThat(duplicates).as("ids duplicated").isEqualTo(events("duplicate"));
        assertThat(causes.values().stream().mapToInt(Integer::intValue).sum())
                .as("ids whose answers differ from what the fault events say, of %d; by kind: %s; the first ones:\n%s",
                        sent, causes, String.join("\n", mismatches))
                .isZero();
        assertThat(total()).as("answers").isEqualTo(sent - drops + duplicates);
    }
}
