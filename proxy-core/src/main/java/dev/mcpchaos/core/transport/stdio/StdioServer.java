package dev.mcpchaos.core.transport.stdio;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;

/**
 * The server end of a {@link StdioProxy}: what the proxy needs of it. Usually a child process
 * (what {@link StdioProxy#builder(java.util.List)} starts); a server running in this JVM on a
 * pair of pipes (a replayed cassette) implements it too, and then sits behind the same
 * interceptor chain, faults included.
 *
 * <p>The streams are the server's: the proxy writes the client's messages to {@link #stdin()},
 * reads the server's from {@link #stdout()} until it ends, and copies {@link #stderr()}.
 */
public interface StdioServer {

    /** Starts a server; called once, by {@link StdioProxy.Builder#start()}. */
    @FunctionalInterface
    interface Launcher {
        /**
         * @return the running server
         * @throws IOException when it cannot be started; the message says why
         */
        StdioServer start() throws IOException;
    }

    /** Where the client's messages go. */
    OutputStream stdin();

    /** Where the server's messages come from; ends when the server is done writing. */
    InputStream stdout();

    /** The server's diagnostics, copied as they are; ends with the server. */
    InputStream stderr();

    /** Completes with the exit code when the server has ended (128 + signal for one a signal ended). */
    CompletableFuture<Integer> onExit();

    /** Whether it still runs. */
    default boolean isAlive() {
        return !onExit().isDone();
    }

    /** What to call it in log lines, such as {@code pid 4242}. */
    String describe();

    /** Asks it to stop, as SIGTERM does; what it already wrote stays readable. */
    void terminate();

    /** Stops it at once, as SIGKILL does; what it already wrote stays readable. */
    void kill();

    /** Interrupts it, as SIGINT does; by default the same as {@link #terminate()}. */
    default void interrupt() {
        terminate();
    }
}
