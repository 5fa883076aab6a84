package dev.mcpchaos.testing;

import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakTracker;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * A Netty {@link ResourceLeakDetector} that, besides logging, remembers every leak it reports so
 * that {@link LeakFailureExtension} can fail the test that follows it.
 *
 * <p>Netty builds its detectors (one per tracked resource type, such as {@code ByteBuf}) through
 * {@code ResourceLeakDetectorFactory}, which instantiates the class named by the system property
 * {@value #PROPERTY}. Netty 4.2.18 looks the class up in the system class loader and calls the
 * public {@code (Class, int, long)} constructor if it has one, else {@code (Class, int)}; both
 * exist here, since a missing first one makes Netty log a misleading error. The property must be
 * set before Netty's buffer classes are initialised, which is why it belongs on the forked test
 * JVM's command line:
 * {@code -Dio.netty.customResourceLeakDetector=dev.mcpchaos.testing.FailingLeakDetector}.
 *
 * <p>Netty only looks for leaks (garbage-collected resources that were never released) when the
 * same detector tracks a new resource; {@link #pollAll()} makes every detector do so now.
 *
 * @param <T> the type of resource tracked
 */
public class FailingLeakDetector<T> extends ResourceLeakDetector<T> {

    /** The system property through which Netty installs a custom detector class. */
    public static final String PROPERTY = "io.netty.customResourceLeakDetector";

    private static final List<String> LEAKS = new CopyOnWriteArrayList<>();
    private static final List<FailingLeakDetector<?>> DETECTORS = new CopyOnWriteArrayList<>();
    private static final Set<String> RESOURCE_TYPES = ConcurrentHashMap.newKeySet();

    /** The constructor Netty 4.2 calls first (its "obsolete" signature). */
    @SuppressWarnings("deprecation")
    public FailingLeakDetector(Class<?> resourceType, int samplingInterval, long maxActive) {
        super(resourceType, samplingInterval, maxActive);
        register(resourceType);
    }

    /** The constructor Netty 4.2 calls when the three-argument one is absent. */
    public FailingLeakDetector(Class<?> resourceType, int samplingInterval) {
        super(resourceType, samplingInterval);
        register(resourceType);
    }

    private void register(Class<?> resourceType) {
        RESOURCE_TYPES.add(resourceType.getName());
        DETECTORS.add(this);
    }

    /** Report even when the logger Netty reports through is switched off. */
    @Override
    protected boolean needReport() {
        return true;
    }

    @Override
    protected void reportTracedLeak(String resourceType, String records) {
        LEAKS.add("LEAK: " + resourceType + ".release() was not called before it was garbage-collected."
                + records);
        super.reportTracedLeak(resourceType, records);
    }

    @Override
    protected void reportUntracedLeak(String resourceType) {
        LEAKS.add("LEAK: " + resourceType + ".release() was not called before it was garbage-collected"
                + " (no access records: the leak detection level is below ADVANCED).");
        super.reportUntracedLeak(resourceType);
    }

    /**
     * Makes this detector look at its queue of garbage-collected resources now, by tracking and
     * closing a throw-away object (tracking is what triggers Netty's check).
     */
    @SuppressWarnings("unchecked")
    private void poll() {
        T probe = (T) new Object(); // erased: the tracker only holds it as a weak referent
        ResourceLeakTracker<T> tracker = trackForcibly(probe);
        tracker.close(probe);
    }

    /** Makes every detector created so far report the leaks the garbage collector has found. */
    public static void pollAll() {
        for (FailingLeakDetector<?> detector : DETECTORS) {
            detector.poll();
        }
    }

    /**
     * Whether Netty created one of these for the given resource type, that is, whether leaks of
     * that type are being recorded.
     *
     * @param resourceType a class tracked by Netty, such as {@code io.netty.buffer.ByteBuf}
     */
    public static boolean isInstalledFor(Class<?> resourceType) {
        return RESOURCE_TYPES.contains(resourceType.getName());
    }

    /** The leaks reported and not drained yet, oldest first, each with Netty's access records. */
    public static List<String> leaks() {
        return List.copyOf(LEAKS);
    }

    /** Returns and forgets the leaks reported so far. */
    public static List<String> drain() {
        return removeMatching(report -> true);
    }

    /**
     * Returns and forgets the leaks whose report matches, leaving the others to fail a test. Meant
     * for a test that leaks on purpose and must not hide anyone else's leak.
     */
    public static List<String> removeMatching(Predicate<String> filter) {
        List<String> removed = new ArrayList<>();
        for (String report : LEAKS) {
            if (filter.test(report) && LEAKS.remove(report)) {
                removed.add(report);
            }
        }
        return removed;
    }
}
