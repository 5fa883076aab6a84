package dev.mcpchaos.server;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Whether the upstream answers, for {@code /ready} with {@code --ready-requires-upstream}: a TCP
 * connection to its host and port, opened and closed again every {@link #INTERVAL} on a thread of
 * its own, each within {@link #TIMEOUT}. {@code /ready} reads the last result and never waits:
 * the check costs one connection per interval however often the kubelet asks, and a slow
 * upstream cannot make the probe time out.
 */
final class UpstreamCheck implements AutoCloseable {

    /** Time between two checks. */
    static final Duration INTERVAL = Duration.ofSeconds(2);
    /** The longest one check may take to connect. */
    static final Duration TIMEOUT = Duration.ofSeconds(1);

    private final URI upstream;
    private final String host;
    private final int port;
    private final ScheduledExecutorService timer;
    private volatile String problem = "the upstream has not been checked yet";

    UpstreamCheck(URI upstream) {
        this.upstream = upstream;
        this.host = upstream.getHost();
        int given = upstream.getPort();
        this.port = given > 0 ? given : "https".equals(upstream.getScheme().toLowerCase(Locale.ROOT)) ? 443 : 80;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "mcp-chaos-upstream-check");
            thread.setDaemon(true);
            return thread;
        });
        timer.scheduleWithFixedDelay(this::check, 0, INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void check() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), (int) TIMEOUT.toMillis());
            problem = null;
        } catch (IOException | RuntimeException e) {
            problem = "the upstream " + host + ":" + port + " (" + upstream + ") does not take connections: "
                    + e.getMessage();
        }
    }

    /** Null when the last check connected, else what went wrong. */
    String problem() {
        return problem;
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
