package dev.mcpchaos.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Fails a test when Netty reports a leaked buffer (a {@code ByteBuf} garbage-collected without
 * {@code release()}), so that a leak fails the build instead of scrolling by in the log.
 *
 * <p>Registered for every test class of every module that has proxy-core's test-jar on its test
 * classpath, through JUnit's extension auto-detection ({@code junit-platform.properties} and
 * {@code META-INF/services/org.junit.jupiter.api.extension.Extension} in that jar). After each
 * test and each test class it forces garbage collection, makes Netty's detectors look at what
 * was collected ({@link FailingLeakDetector#pollAll()}) and fails with Netty's access records if
 * anything leaked. A leak is noticed only once its buffer is unreachable, so it can surface
 * after a later test than the one that caused it; the records name the code that touched it.
 *
 * <p>Before a test class runs it checks that the detection is really on: that Netty installed
 * {@link FailingLeakDetector} for {@code ByteBuf}. If it did not (the system property was set too
 * late, or not at all), every test would pass whatever it leaked, so the class fails instead.
 */
public final class LeakFailureExtension implements BeforeAllCallback, AfterEachCallback, AfterAllCallback {

    /** Garbage collection rounds per check: a second round catches references queued late. */
    private static final int GC_ROUNDS = 2;
    /** Upper bound on one wait for the garbage collector to queue a collected reference. */
    private static final long GC_WAIT_MILLIS = 2_000;

    /** The test classes this extension has run for, so a test can check it was registered. */
    private static final Set<String> CLASSES_SEEN = ConcurrentHashMap.newKeySet();

    static {
        // Running a single test from an IDE, without the build's argLine: install the detector
        // ourselves. This only works when no Netty buffer class has been initialised yet, which
        // is normally the case when JUnit loads its extensions; beforeAll verifies it.
        if (System.getProperty(FailingLeakDetector.PROPERTY) == null) {
            System.setProperty(FailingLeakDetector.PROPERTY, FailingLeakDetector.class.getName());
        }
        if (System.getProperty("io.netty.leakDetection.level") == null
                && System.getProperty("io.netty.leakDetectionLevel") == null) {
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        CLASSES_SEEN.add(context.getRequiredTestClass().getName());
        assertDetectorInstalled();
    }

    /** Whether the extension ran for this test class: proof that auto-detection registered it. */
    public static boolean ranFor(Class<?> testClass) {
        return CLASSES_SEEN.contains(testClass.getName());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        assertNoLeaks("after " + context.getDisplayName() + " in " + context.getRequiredTestClass().getName());
    }

    @Override
    public void afterAll(ExtensionContext context) {
        assertNoLeaks("after all tests of " + context.getRequiredTestClass().getName());
    }

    /**
     * Fails unless Netty tracks buffers with {@link FailingLeakDetector}, which it decides once,
     * when its buffer classes are initialised.
     *
     * @throws IllegalStateException naming the system property to set
     */
    public static void assertDetectorInstalled() {
        // Allocating initialises Netty's buffer classes, and with them the ByteBuf detector.
        ByteBufAllocator.DEFAULT.heapBuffer(1).release();
        if (!FailingLeakDetector.isInstalledFor(ByteBuf.class)) {
            throw new IllegalStateException("Netty buffer leak detection is not failing tests: Netty did not install "
                    + FailingLeakDetector.class.getName() + ". Add -D" + FailingLeakDetector.PROPERTY + '='
                    + FailingLeakDetector.class.getName() + " to the test JVM's arguments (surefire argLine).");
        }
        if (ResourceLeakDetector.getLevel() == ResourceLeakDetector.Level.DISABLED) {
            throw new IllegalStateException("Netty leak detection is DISABLED; tests expect"
                    + " -Dio.netty.leakDetection.level=paranoid");
        }
    }

    /**
     * Collects garbage, makes Netty report what leaked, and fails if anything did.
     *
     * @param when where in the run the check happens, for the failure message
     * @throws AssertionError listing every leak report; the reports are forgotten, so one leak
     *                        fails one test
     */
    public static void assertNoLeaks(String when) {
        List<String> leaks = collectLeaks();
        if (!leaks.isEmpty()) {
            throw new AssertionError("Netty reported " + leaks.size() + " leaked resource(s), detected " + when
                    + " (the leak happened in this test or, if its buffer became garbage late, in an earlier one):\n\n"
                    + String.join("\n\n", leaks));
        }
    }

    /**
     * Forces garbage collection a few times, has every Netty detector report the leaks found, and
     * returns and forgets the reports (see {@link FailingLeakDetector#drain()}).
     */
    public static List<String> collectLeaks() {
        for (int i = 0; i < GC_ROUNDS; i++) {
            if (!collectGarbage()) {
                break; // explicit GC is disabled or very slow: another round would only wait again
            }
            FailingLeakDetector.pollAll();
        }
        FailingLeakDetector.pollAll();
        return FailingLeakDetector.drain();
    }

    /**
     * Runs the garbage collector and waits, bounded, until it has queued a weak reference made
     * just before, so that references it cleared in the same cycle (Netty's leak trackers) are
     * being queued too.
     *
     * @return false when the sentinel was not queued in time
     */
    static boolean collectGarbage() {
        ReferenceQueue<Object> queue = new ReferenceQueue<>();
        WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
        System.gc();
        try {
            return queue.remove(GC_WAIT_MILLIS) != null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            Reference.reachabilityFence(sentinel);
        }
    }
}
