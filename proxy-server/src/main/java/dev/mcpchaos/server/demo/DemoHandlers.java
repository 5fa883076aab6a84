package dev.mcpchaos.server.demo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.server.host.DaemonThreads;
import dev.mcpchaos.server.host.McpSessionHandler;
import java.io.PrintStream;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The demo's sessions for a host: a {@link DemoHandler} each, and the pool their
 * {@code tools/call}s share, at most {@value #MAX_TOOL_THREADS} daemon threads (more calls queue)
 * whose idle threads time out, so an idle server holds no tool threads. Closing interrupts the
 * calls still running.
 */
final class DemoHandlers implements McpSessionHandler.Factory {

    static final int MAX_TOOL_THREADS = 64;

    private final PrintStream log;
    private final String serverVersion;
    private final ExecutorService toolExecutor;
    private final DemoHandler sessionless;

    /**
     * @param log where diagnostics go (stderr in production)
     * @param serverVersion the {@code serverInfo.version} to report
     * @param toolThreadPrefix names the tool threads
     */
    DemoHandlers(PrintStream log, String serverVersion, String toolThreadPrefix) {
        this(log, serverVersion, toolThreadPrefix, false);
    }

    /**
     * @param stateless whether sessionless requests (2026-07-28) are served too, by one handler
     *     shared by all of them (a dual-era server); if not, the host refuses them
     */
    DemoHandlers(PrintStream log, String serverVersion, String toolThreadPrefix, boolean stateless) {
        this.log = log;
        this.serverVersion = serverVersion;
        ThreadPoolExecutor executor = new ThreadPoolExecutor(MAX_TOOL_THREADS, MAX_TOOL_THREADS,
                30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), new DaemonThreads(toolThreadPrefix));
        executor.allowCoreThreadTimeOut(true);
        this.toolExecutor = executor;
        this.sessionless = stateless ? new DemoHandler(log, serverVersion, toolExecutor, message -> {
            // Sessionless: nothing belongs to no request (logging/setLevel is a legacy method).
        }, true) : null;
    }

    @Override
    public McpSessionHandler open(String sessionId, Consumer<JsonNode> unsolicited) {
        return new DemoHandler(log, serverVersion, toolExecutor, unsolicited);
    }

    @Override
    public McpSessionHandler sessionless() {
        return sessionless;
    }

    @Override
    public void close() {
        if (sessionless != null) {
            sessionless.endSubscriptions();
        }
        toolExecutor.shutdownNow();
    }
}
