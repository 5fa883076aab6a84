package dev.mcpchaos.testcontainers;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.testcontainers.DockerClientFactory;

/**
 * Runs a test class only with a Docker engine and the image under test: without them the class
 * is skipped with the reason, except on CI ({@code CI=true}), where that is a failure, so a CI
 * machine that lost its engine cannot pass by skipping.
 */
final class DockerEngine implements ExecutionCondition, BeforeAllCallback {

    /** The image the tests run, from the failsafe configuration ({@code mcp-chaos:<version>}). */
    static String image() {
        return System.getProperty("mcpchaos.image", McpChaosContainer.IMAGE + ":latest");
    }

    private static boolean onCi() {
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
        if (onCi()) {
            return ConditionEvaluationResult.enabled("CI=true: a missing Docker engine is a failure");
        }
        String missing = missing();
        return missing == null ? ConditionEvaluationResult.enabled("Docker engine and " + image() + " present")
                : ConditionEvaluationResult.disabled("Skipped, " + missing + "; with CI=true this fails instead");
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        String missing = onCi() ? missing() : null;
        if (missing != null) {
            throw new IllegalStateException("CI=true and " + missing);
        }
    }
}
