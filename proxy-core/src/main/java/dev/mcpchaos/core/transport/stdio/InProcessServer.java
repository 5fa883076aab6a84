package dev.mcpchaos.core.transport.stdio;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link StdioServer} that runs in this JVM: a {@link Body} serving one pair of streams on a
 * thread of its own, connected to the proxy by two OS pipes, so that it sits behind the proxy's
 * interceptor chain exactly as a child process would (faults, journal, metrics, recording).
 *
 * <p>What the process signals become: {@link #terminate()} and {@link #interrupt()} close the
 * body's input (its read ends, as a server's does when SIGTERM stops it), and the exit code is
 * 143 unless the body returns first; {@link #kill()} closes its input and output at once (137).
 * When the proxy closes the server's stdin the body reads end of input and returns its own code.
 * An exception from the body is logged by the caller's code, and ends it with code 1.
 */
public final class InProcessServer implements StdioServer {

    /** What serves: reads the client's messages from {@code in} until it ends, writes to {@code out}. */
    @FunctionalInterface
    public interface Body {
        /**
         * @return the exit code
         * @throws IOException when reading or writing fails (the proxy closed a stream)
         */
        int serve(InputStream in, OutputStream out) throws IOException;
    }

    private static final int TERMINATED = 128 + 15;
    private static final int KILLED = 128 + 9;

    private final String name;
    private final OutputStream stdin;
    private final InputStream stdout;
    private final InputStream bodyIn;
    private final OutputStream bodyOut;
    private final CompletableFuture<Integer> exit = new CompletableFuture<>();
    /** The code a signal asked for, or 0 when none came. */
    private final AtomicInteger signalled = new AtomicInteger();

    private InProcessServer(String name, Body body) throws IOException {
        this.name = name;
        Pipe toServer = Pipe.open();
        Pipe fromServer = Pipe.open();
        stdin = Channels.newOutputStream(toServer.sink());
        bodyIn = Channels.newInputStream(toServer.source());
        bodyOut = Channels.newOutputStream(fromServer.sink());
        stdout = Channels.newInputStream(fromServer.source());
        Thread thread = new Thread(() -> run(body), "mcp-chaos-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * A launcher for {@link StdioProxy#builder(StdioServer.Launcher)}.
     *
     * @param name what log lines and the thread call it, such as {@code replay}
     */
    public static StdioServer.Launcher launcher(String name, Body body) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(body, "body");
        return () -> new InProcessServer(name, body);
    }

    private void run(Body body) {
        int code;
        try {
            code = body.serve(bodyIn, bodyOut);
        } catch (IOException | RuntimeException e) {
            code = signalled.get() != 0 ? signalled.get() : 1;
            if (signalled.get() == 0) {
                org.slf4j.LoggerFactory.getLogger(InProcessServer.class).warn("{} failed: {}", name, e.toString());
            }
        }
        closeQuietly(bodyIn);
        closeQuietly(bodyOut); // the proxy reads end of file: the server is done writing
        int signal = signalled.get();
        exit.complete(signal != 0 ? signal : code);
    }

    @Override
    public OutputStream stdin() {
        return stdin;
    }

    @Override
    public InputStream stdout() {
        return stdout;
    }

    @Override
    public InputStream stderr() {
        return InputStream.nullInputStream();
    }

    @Override
    public CompletableFuture<Integer> onExit() {
        return exit;
    }

    @Override
    public String describe() {
        return "in-process " + name;
    }

    @Override
    public void terminate() {
        if (signalled.compareAndSet(0, TERMINATED)) {
            closeQuietly(bodyIn);
        }
    }

    @Override
    public void kill() {
        signalled.compareAndSet(0, KILLED);
        signalled.compareAndSet(TERMINATED, KILLED);
        closeQuietly(bodyIn);
        closeQuietly(bodyOut);
    }

    private static void closeQuietly(java.io.Closeable closeable) {
        try {
            closeable.close();
        } catch (IOException ignored) {
            // closed either way
        }
    }
}
