package dev.mcpchaos.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.fail;

/**
 * Proves that the leak check is armed: a buffer leaked on purpose is reported by Netty through
 * {@link FailingLeakDetector}, and {@link LeakFailureExtension}'s check fails on it. Each test
 * removes only its own deliberate leak, so the build stays green and nobody else's leak is hidden.
 */
class LeakDetectionTest {

    /** How many collect-and-poll rounds to wait for a leak report; each round is bounded. */
    private static final int MAX_ROUNDS = 20;

    /** The logger Netty reports leaks through, at ERROR with the full access records. */
    private static final Logger NETTY_LEAK_LOG = (Logger) LoggerFactory.getLogger(ResourceLeakDetector.class);

    private ResourceLeakDetector.Level levelBefore;
    private Level logLevelBefore;

    @BeforeEach
    void paranoidAndQuiet() {
        // PARANOID tracks every buffer and keeps touch() hints, which identify our leak. The build
        // runs at this level anyway; set it explicitly so the test does not depend on it.
        levelBefore = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        // The deliberate leaks would print pages of "LEAK:" errors into a green build's log.
        logLevelBefore = NETTY_LEAK_LOG.getLevel();
        NETTY_LEAK_LOG.setLevel(Level.OFF);
    }

    @AfterEach
    void restore() {
        ResourceLeakDetector.setLevel(levelBefore);
        NETTY_LEAK_LOG.setLevel(logLevelBefore);
    }

    @Test
    void theExtensionIsRegisteredWithoutBeingNamed() {
        // No @ExtendWith here: junit-platform.properties and the ServiceLoader file register it.
        assertThat(LeakFailureExtension.ranFor(LeakDetectionTest.class)).isTrue();
    }

    @Test
    void nettyUsesTheFailingDetectorForBuffers() {
        LeakFailureExtension.assertDetectorInstalled();
        assertThat(FailingLeakDetector.isInstalledFor(ByteBuf.class)).isTrue();
    }

    @Test
    void leakedBufferFromTheDefaultAllocatorFailsTheCheck() {
        assertLeakDetected(ByteBufAllocator.DEFAULT, false);
    }

    @Test
    void leakedDirectBufferFromTheDefaultAllocatorFailsTheCheck() {
        assertLeakDetected(ByteBufAllocator.DEFAULT, true);
    }

    @Test
    void leakedPooledBufferFailsTheCheck() {
        assertLeakDetected(PooledByteBufAllocator.DEFAULT, false);
    }

    @Test
    void leakedUnpooledDirectBufferFailsTheCheck() {
        assertLeakDetected(UnpooledByteBufAllocator.DEFAULT, true);
    }

    @Test
    void releasedBuffersAreNotReported() {
        String hint = "released-" + UUID.randomUUID();
        for (int i = 0; i < 10; i++) {
            ByteBuf buf = ByteBufAllocator.DEFAULT.buffer(16).writeInt(i);
            buf.touch(hint);
            buf.release();
        }
        LeakFailureExtension.collectGarbage();
        FailingLeakDetector.pollAll();
        assertThat(FailingLeakDetector.leaks()).noneMatch(report -> report.contains(hint));
    }

    @Test
    void removeMatchingTakesOnlyTheMatchingReports() {
        // Detector bookkeeping, with a detector of our own for a resource type of our own.
        FailingLeakDetector<Resource> detector = new FailingLeakDetector<>(Resource.class, 1);
        String first = "resource-a-" + UUID.randomUUID();
        String second = "resource-b-" + UUID.randomUUID();
        leakResource(detector, first);
        leakResource(detector, second);
        awaitReports(first, second);

        assertThat(FailingLeakDetector.removeMatching(report -> report.contains(first))).singleElement().asString()
                .contains(Resource.class.getSimpleName())
                .contains(first);
        assertThat(FailingLeakDetector.leaks()).noneMatch(report -> report.contains(first))
                .anyMatch(report -> report.contains(second));
        assertThat(FailingLeakDetector.removeMatching(report -> report.contains(second))).hasSize(1);
        assertThat(FailingLeakDetector.leaks()).noneMatch(report -> report.contains(second));
    }

    /** Leaks one buffer with a unique hint, waits for the report, and checks the failure path. */
    private static void assertLeakDetected(ByteBufAllocator alloc, boolean direct) {
        String hint = "deliberate-leak-" + UUID.randomUUID();
        leakBuffer(alloc, direct, hint);

        // The report appears once the garbage collector has cleared the buffer: wait for it,
        // leaving it recorded so the extension's check below sees it.
        awaitReports(hint);

        // The check the extension runs after every test must fail on it, naming the leak.
        Throwable failure = catchThrowable(
                () -> LeakFailureExtension.assertNoLeaks("in " + LeakDetectionTest.class.getSimpleName()));
        assertThat(failure).as("the leak check failed").isInstanceOf(AssertionError.class);
        assertThat(failure.getMessage())
                .contains("LEAK: ")
                .contains(hint)
                .contains("leakBuffer"); // the access records point at the leaking code
        if (!failure.getMessage().startsWith("Netty reported 1 leaked")) {
            // The check drained every report: fail with the ones that were not ours.
            fail("leaks other than the deliberate one were reported:%n%s", failure.getMessage());
        }
        // The reports were forgotten: the check passes again, and the build stays green.
        LeakFailureExtension.assertNoLeaks("after draining");
    }

    // In their own methods so that no local variable keeps the resource reachable.
    private static void leakBuffer(ByteBufAllocator alloc, boolean direct, String hint) {
        ByteBuf buf = direct ? alloc.directBuffer(64) : alloc.heapBuffer(64);
        buf.writeCharSequence("never released", StandardCharsets.US_ASCII);
        buf.touch(hint);
    }

    private static void leakResource(FailingLeakDetector<Resource> detector, String hint) {
        Resource resource = new Resource();
        detector.track(resource).record(hint);
    }

    /** Collects garbage and polls until a report mentions each hint (bounded), leaving them recorded. */
    private static void awaitReports(String... hints) {
        for (int round = 0; round < MAX_ROUNDS; round++) {
            LeakFailureExtension.collectGarbage();
            FailingLeakDetector.pollAll();
            List<String> leaks = FailingLeakDetector.leaks();
            if (Arrays.stream(hints).allMatch(hint -> leaks.stream().anyMatch(r -> r.contains(hint)))) {
                return;
            }
        }
        fail("no leak report for %s after %d rounds", String.join(", ", hints), MAX_ROUNDS);
    }

    /** A resource type of this test's own, tracked by a detector of its own. */
    private static final class Resource {
    }
}
