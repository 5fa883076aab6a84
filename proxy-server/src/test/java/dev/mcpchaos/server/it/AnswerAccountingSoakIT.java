package dev.mcpchaos.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.testing.LeakFailureExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The accounting invariant under load: with {@code drop}, {@code duplicate} and {@code latency}
 * on the answers to tool calls, each with a probability below 1 and a fixed seed, every answer
 * the client misses is one the proxy logged as dropped, and every extra answer one it logged as
 * duplicated, to the message: per request id, the answers received are 0 for a logged drop, 2
 * for a logged duplicate, 1 otherwise.
 *
 * <p>A raw JSON-RPC client ({@link RawJsonRpc}; an SDK client would time out on a dropped answer
 * and hide a duplicate) keeps {@link #IN_FLIGHT} calls of server-everything's {@code echo} and
 * {@code get-sum} in flight, each with its own numeric id and arguments, for {@link #CALLS} calls
 * or {@link #SEND_CAP} of sending, whichever comes first, and checks that each answer is the one
 * to its own request. Over stdio a request is given up (its place in the window freed) after
 * {@link #STDIO_GIVE_UP}, since a dropped answer never comes; an answer that comes later still
 * counts. Over HTTP a dropped answer ends its POST's stream without it, so the client's timeout,
 * {@link #HTTP_TIMEOUT}, is only a bound: a timed-out exchange cannot be told from a lost answer. Netty's paranoid leak detection (on in failsafe) must find nothing.
 * The client and the accounting are {@link AnswerSoak}'s, which {@link SoakIT} runs longer, in
 * front of the built-in demo server, with the heap measured.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class AnswerAccountingSoakIT {

    static final int CALLS = 3000;
    static final Duration SEND_CAP = Duration.ofSeconds(15);
    static final int IN_FLIGHT = 16;
    static final Duration STDIO_GIVE_UP = Duration.ofSeconds(2);
    static final Duration HTTP_TIMEOUT = Duration.ofSeconds(10);
    static final long SEED = 1414;
    /**
     * Below this many calls sent within the cap, the counts would prove too little. Measured here
     * (2 cores, shared): stdio 3,000 calls in about 8 s; HTTP 80 to 175 calls a second.
     */
    static final int MIN_CALLS = 500;

    private static final String ANSWERS = "{direction: server_to_client, kind: response, method: tools/call}";
    /** drop before duplicate: a dropped answer ends the chain, so no id is both dropped and copied. */
    static final String DROP_AND_DUPLICATE = "rules:\n"
            + "  - name: soak-drop\n    match: " + ANSWERS + "\n    probability: 0.02\n    fault: {type: drop}\n"
            + "  - name: soak-duplicate\n    match: " + ANSWERS + "\n    probability: 0.02\n    fault: {type: duplicate}\n";
    static final String AND_LATENCY =
            "  - name: soak-latency\n    match: " + ANSWERS + "\n    probability: 0.05\n"
            + "    fault: {type: latency, latency: 20ms, jitter: 10ms}\n";

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
    void stdioMissingAndExtraAnswersAreExactlyTheLoggedDropsAndDuplicates() {
        AnswerSoak soak = new AnswerSoak(new AnswerSoak.Plan(CALLS, SEND_CAP, IN_FLIGHT, STDIO_GIVE_UP, MIN_CALLS),
                AnswerSoak.Calls.SERVER_EVERYTHING);
        try (RawJsonRpc rpc = new RawJsonRpc.Stdio(TestPeers.serverEverythingStdioCommand(),
                RuleSet.parse(DROP_AND_DUPLICATE + AND_LATENCY, "soak.yaml"), SEED, soak, soak)) {
            soak.run(rpc);
            soak.assertAccounting("stdio", Set.of("drop", "duplicate", "latency"));
            // On stdio a dropped answer never comes: each of those requests was given up (others may
            // have been too, on a slow machine, and then counted above when their answer came).
            assertThat(soak.droppedNotGivenUp()).as("dropped requests not given up").isEmpty();
            assertThat(rpc.unreadable).isEmpty();
        }
        assertNoLeaks();
    }

    @Test
    void httpMissingAndExtraAnswersAreExactlyTheLoggedDropsAndDuplicates() {
        httpSoak(DROP_AND_DUPLICATE, Set.of("drop", "duplicate"));
    }

    @Test
    void httpWithLatencyMissingAndExtraAnswersAreExactlyTheLoggedDropsAndDuplicates() {
        httpSoak(DROP_AND_DUPLICATE + AND_LATENCY, Set.of("drop", "duplicate", "latency"));
    }

    private void httpSoak(String rules, Set<String> faults) {
        AnswerSoak soak = new AnswerSoak(new AnswerSoak.Plan(CALLS, SEND_CAP, IN_FLIGHT, HTTP_TIMEOUT, MIN_CALLS),
                AnswerSoak.Calls.SERVER_EVERYTHING);
        try (RawJsonRpc rpc = new RawJsonRpc.Http(everything.endpoint(), RuleSet.parse(rules, "soak.yaml"), SEED,
                soak, HTTP_TIMEOUT, soak)) {
            soak.run(rpc);
            soak.assertAccounting("http", faults);
            assertHttpEndings(soak);
            assertThat(rpc.unreadable).isEmpty();
        }
        assertNoLeaks();
    }

    /**
     * A dropped answer leaves its POST's SSE stream with the priming event only; every other
     * exchange ended with its answer, none with an error or a timeout.
     */
    static void assertHttpEndings(AnswerSoak soak) {
        assertThat(soak.endedWithoutAnswerUnlikeDrops()).as("POSTs answered without their answer, unlike the drops")
                .isEmpty();
        assertThat(soak.endedWithoutAnswer()).as("POSTs answered without their answer").isEqualTo(soak.events("drop"));
        assertThat(soak.otherEndingExamples()).as("exchanges that ended in an error, %d in all", soak.otherEndings())
                .isEmpty();
        assertThat(soak.expired()).as("requests given up").isZero();
    }

    /** The proxy was closed, so every buffer it had should have been released by now. */
    static void assertNoLeaks() {
        LeakFailureExtension.assertDetectorInstalled();
        assertThat(LeakFailureExtension.collectLeaks()).as("Netty leak reports (paranoid)").isEmpty();
    }
}
