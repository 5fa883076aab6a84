package dev.mcpchaos.server.host;

import static java.util.Objects.requireNonNull;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Named daemon threads ({@code prefix} and a count): a host's threads never keep a JVM alive
 * just because a slow call is still sleeping or a stream is still open.
 */
public final class DaemonThreads implements ThreadFactory {

    private final String namePrefix;
    private final AtomicInteger threads = new AtomicInteger();

    /** @param namePrefix what each thread's name starts with, such as {@code mcp-chaos-demo-http-} */
    public DaemonThreads(String namePrefix) {
        this.namePrefix = requireNonNull(namePrefix, "namePrefix");
    }

    @Override
    public Thread newThread(Runnable task) {
        Thread thread = new Thread(task, namePrefix + threads.incrementAndGet());
        thread.setDaemon(true);
        return thread;
    }
}
