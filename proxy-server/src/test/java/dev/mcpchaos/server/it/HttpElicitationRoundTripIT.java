package dev.mcpchaos.server.it;

import static dev.mcpchaos.server.it.HttpPeers.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.mcpchaos.server.HttpProxyBuilder.RunningHttp;
import dev.mcpchaos.server.McpChaosProxy;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Server-to-client requests on a POST's SSE stream, many at once: server-everything's
 * {@code trigger-elicitation-request} tool sends {@code elicitation/create} on the stream of the
 * {@code tools/call} POST, the MCP Java SDK client answers it with a POST of its own (on another
 * connection: the first is busy with the stream), and only then does the tool's result come, on
 * the first stream. Several clients make such round trips at the same time, many times, directly
 * and through the proxy, with no rules; every round trip must complete, with the answer the
 * client gave. 8 clients x 12 round trips per run (system properties {@code elicitation.clients}
 * and {@code elicitation.calls} change that).
 *
 * <p>This guards the path a request-scoped server-to-client request takes; it does not show the
 * timeouts of #14, which came from a server that sent its elicitation on the standalone GET
 * stream before the client had opened it (docs/architecture.md, "Order across connections").
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class HttpElicitationRoundTripIT {

    private static final int CLIENTS = Integer.getInteger("elicitation.clients", 8);
    private static final int CALLS_PER_CLIENT = Integer.getInteger("elicitation.calls", 12);
    /** A round trip takes milliseconds; one that takes this long is lost. */
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);
    /** The bound of one whole run. */
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(120);

    @TempDir
    static Path tempDir;

    private static HttpPeers.ServerEverything everything;

    @BeforeAll
    static void startServer() {
        everything = HttpPeers.ServerEverything.start(tempDir);
    }

    @AfterAll
    static void stopServer() {
        if (everything != null) {
            everything.close();
        }
    }

    @Test
    void everyRoundTripCompletesDirectly() throws Exception {
        Counts counts = run(everything.endpoint(), "direct");
        counts.assertAllCompleted();
    }

    @Test
    void everyRoundTripCompletesThroughTheProxyWithNothingOn() throws Exception {
        try (RunningHttp proxy = McpChaosProxy.http(everything.endpoint()).start()) {
            Counts counts = run(HttpPeers.endpoint(proxy.address()), "proxy, nothing on");
            counts.assertAllCompleted();
        }
    }

    @Test
    void everyRoundTripCompletesThroughTheProxyAsTheCliRunsIt() throws Exception {
        // The CLI's defaults for http: the control API (with its Prometheus metrics) on loopback;
        // the event log on too.
        ByteArrayOutputStream events = new ByteArrayOutputStream();
        try (RunningHttp proxy = McpChaosProxy.http(everything.endpoint())
                .control(new InetSocketAddress("127.0.0.1", 0))
                .events(events, false)
                .start()) {
            Counts counts = run(HttpPeers.endpoint(proxy.address()), "proxy, control API, metrics and events");
            counts.assertAllCompleted();
        }
    }

    /** What a run gave: round trips completed with the right answer, timed out, failed otherwise. */
    private static final class Counts {
        final String label;
        final AtomicInteger completed = new AtomicInteger();
        final AtomicInteger timedOut = new AtomicInteger();
        final AtomicInteger wrong = new AtomicInteger();
        final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        long wallMillis;

        Counts(String label) {
            this.label = label;
        }

        void assertAllCompleted() {
            System.out.printf("%s: %d clients x %d round trips: %d completed, %d timed out, %d failed otherwise,"
                            + " in %d ms%n", label, CLIENTS, CALLS_PER_CLIENT, completed.get(), timedOut.get(),
                    wrong.get(), wallMillis);
            assertThat(failures).as(label).isEmpty();
            assertThat(completed.get()).as(label).isEqualTo(CLIENTS * CALLS_PER_CLIENT);
        }
    }

    private static Counts run(URI endpoint, String label) throws Exception {
        Counts counts = new Counts(label);
        ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> clients = new ArrayList<>();
        long began = System.nanoTime();
        try {
            for (int c = 0; c < CLIENTS; c++) {
                int client = c;
                clients.add(pool.submit(() -> {
                    start.await();
                    oneClient(endpoint, client, counts);
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> client : clients) {
                client.get(RUN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            }
        } finally {
            counts.wallMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
            pool.shutdownNow();
        }
        return counts;
    }

    private static void oneClient(URI endpoint, int client, Counts counts) {
        AtomicInteger call = new AtomicInteger();
        AtomicInteger asked = new AtomicInteger();
        McpSyncClient sdk = HttpPeers.sdkClient(endpoint)
                .requestTimeout(CALL_TIMEOUT)
                .capabilities(McpSchema.ClientCapabilities.builder().elicitation().build())
                .elicitation(request -> {
                    asked.incrementAndGet();
                    return new McpSchema.ElicitResult(McpSchema.ElicitResult.Action.ACCEPT,
                            Map.of("name", "client-" + client + "-call-" + call.get()));
                })
                .build();
        try {
            sdk.initialize();
            for (int i = 0; i < CALLS_PER_CLIENT; i++) {
                call.set(i);
                String name = "client-" + client + "-call-" + i;
                long t0 = System.nanoTime();
                try {
                    McpSchema.CallToolResult result = sdk.callTool(
                            McpSchema.CallToolRequest.builder("trigger-elicitation-request").arguments(Map.of()).build());
                    if (text(result).contains(name)) {
                        counts.completed.incrementAndGet();
                    } else {
                        counts.wrong.incrementAndGet();
                        counts.failures.add(name + ": unexpected result " + text(result));
                    }
                } catch (RuntimeException e) {
                    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                    boolean timeout = hasTimeout(e);
                    (timeout ? counts.timedOut : counts.wrong).incrementAndGet();
                    counts.failures.add(name + ": " + (timeout ? "timed out" : "failed") + " after " + ms
                            + " ms (elicitations answered so far: " + asked.get() + "): " + e);
                }
            }
        } finally {
            sdk.closeGracefully();
        }
    }

    private static boolean hasTimeout(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.util.concurrent.TimeoutException || String.valueOf(t.getMessage()).contains("imeout")
                    || String.valueOf(t.getMessage()).contains("timed out")) {
                return true;
            }
        }
        return false;
    }
}
