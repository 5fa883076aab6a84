package dev.mcpchaos.testcontainers;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.testcontainers.DockerClientFactory;

/**
 * Runs a test class only with a Docker engine and the image under test: without them the class
 * is skipped with the reason, except on CI ({@code CI=true}), where that is a failure, so a CI
 * machine that lost its engine cannot pass by skipping. Every {@code *IT} of this module carries
 * it ({@code DockerEngineTest} fails one that does not), so that {@code mvn -B verify} passes on a
 * machine without an engine, as the README says.
 *
 * <p>Public, with a public constructor, for {@code readme/ContainerQuickStartIT} in another package.
 */
public final class DockerEngine implements ExecutionCondition, BeforeAllCallback {

    /** Reasons already printed, so that each shows once on the console, not once per class. */
    private static final Set<String> TOLD = ConcurrentHashMap.newKeySet();

    /** For JUnit's {@code @ExtendWith}. */
    public DockerEngine() {
    }

    /** The image the tests run, from the failsafe configuration ({@code mcp-chaos:<version>}). */
    static String image() {
        return System.getProperty("mcpchaos.image", McpChaosContainer.IMAGE + ":latest");
    }

    static boolean onCi() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    /** Why these tests cannot run here, or null when they can. */
    private static String missing() {
        if (!DockerClientFactory.instance().isDockerAvailable()) {
            return "no Docker engine answers (start dockerd; see deploy/docker/README.md)";
        }
        try {
            DockerClientFactory.lazyClient().inspectImageCmd(image()).exec();
        } catch (RuntimeException e) {
            return "no image " + image() + " (build it with deploy/docker/build-image.sh)";
        }
        return null;
    }

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        ConditionEvaluationResult result = decide(onCi(), onCi() ? null : missing());
        // Failsafe shows a skip's reason only in its reports: say it on the console too, once.
        result.getReason().filter(reason -> result.isDisabled() && TOLD.add(reason)).ifPresent(reason ->
                System.err.println("mcp-chaos-testcontainers: container tests s" + reason.substring(1)));
        return result;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        requireOnCi(onCi(), onCi() ? missing() : null);
    }

    /**
     * The rule, apart from how the engine is looked for: outside CI a class runs when nothing is
     * {@code missing}, else it is skipped with the reason; on CI it always runs, and
     * {@link #requireOnCi} fails it.
     */
    static ConditionEvaluationResult decide(boolean onCi, String missing) {
        if (onCi) {
            return ConditionEvaluationResult.enabled("CI=true: a missing Docker engine is a failure");
        }
        if (missing == null) {
            return ConditionEvaluationResult.enabled("Docker engine and " + image() + " present");
        }
        return ConditionEvaluationResult.disabled("Skipped, " + missing + "; with CI=true this fails instead");
    }

    /** On CI, what is {@code missing} fails the class before any of its tests. */
    static void requireOnCi(boolean onCi, String missing) {
        if (onCi && missing != null) {
            throw new IllegalStateException("CI=true and " + missing);
        }
    }

    /**
     * The executable {@code name} on PATH (or in /usr/bin, /usr/local/bin); when there is none the
     * test is skipped with {@code hint}, or failed with CI=true: the rule of the engine, for the
     * other tools a test needs (kubectl).
     */
    static Path requireTool(String name, String hint) {
        List<Path> dirs = new ArrayList<>();
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty()) {
                dirs.add(Path.of(dir));
            }
        }
        dirs.add(Path.of("/usr/bin"));
        dirs.add(Path.of("/usr/local/bin"));
        return requireTool(name, hint, dirs, onCi());
    }

    static Path requireTool(String name, String hint, List<Path> dirs, boolean onCi) {
        for (Path dir : dirs) {
            Path candidate = dir.resolve(name);
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        String reason = name + " not found on PATH (" + hint + ")";
        if (onCi) {
            throw new IllegalStateException("CI=true and " + reason);
        }
        Assumptions.abort("Skipped, " + reason + "; with CI=true this fails instead");
        return null; // not reached
    }
}
