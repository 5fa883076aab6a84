package dev.mcpchaos.testcontainers;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import org.testcontainers.containers.ContainerLaunchException;
import org.testcontainers.containers.wait.strategy.AbstractWaitStrategy;

/**
 * Waits until {@code GET /health} of the proxy's control API answers 200, asked from this
 * machine, and the proxy has logged that it accepts clients. Unlike Testcontainers' HTTP wait it needs no mapped port, so it works with host
 * networking too, and unlike a listening-port wait it needs no shell in the image.
 */
final class HealthWaitStrategy extends AbstractWaitStrategy {

    /**
     * What {@code mcp-chaos http} logs once it accepts clients. The control API, and so
     * {@code /health}, is up about a second before that.
     */
    static final String LISTENING = "HttpCommand: clients: http://";

    @Override
    protected void waitUntilReady() {
        McpChaosContainer container = (McpChaosContainer) waitStrategyTarget;
        URI health = container.getControlUrl().resolve("/health");
        long deadline = System.nanoTime() + startupTimeout.toNanos();
        while (!healthy(health) || !container.getLogs().contains(LISTENING)) {
            if (!container.isRunning()) {
                throw new ContainerLaunchException("mcp-chaos: the container stopped before GET " + health
                        + " answered; its log:\n" + container.getLogs());
            }
            if (System.nanoTime() - deadline > 0) {
                throw new ContainerLaunchException("mcp-chaos: GET " + health + " did not answer 200 within "
                        + startupTimeout.toSeconds() + " s; the container's log:\n" + container.getLogs());
            }
            getRateLimiter().doWhenReady(() -> { });
        }
    }

    private static boolean healthy(URI health) {
        try {
            HttpURLConnection connection = (HttpURLConnection) health.toURL().openConnection();
            connection.setConnectTimeout(1000);
            connection.setReadTimeout(1000);
            try {
                return connection.getResponseCode() == 200;
            } finally {
                connection.disconnect();
            }
        } catch (IOException e) {
            return false;
        }
    }
}
