package dev.mcpchaos.core.transport.stdio;

import dev.mcpchaos.core.codec.line.LineFrameDecoder;
import dev.mcpchaos.core.codec.line.LineFramer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.ConnectionControl;
import dev.mcpchaos.core.intercept.InterceptorChain;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.session.Session;
import dev.mcpchaos.core.transport.ProxyBuilder;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.DefaultEventLoop;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The stdio transport: starts the MCP server as a child process and relays newline-delimited
 * JSON-RPC between the proxy's own stdin/stdout (the client) and the child's stdin/stdout, each
 * line through the interceptor chain. The child's stderr is copied to the proxy's stderr as is.
 *
 * <p><b>Threads.</b> The JDK cannot poll pipes, so each pipe has a reader thread (which also
 * frames and sniffs) and each output a writer thread; everything else, interceptors included,
 * runs on one event loop, the scheduler of delays. Per-direction order is kept end to end.
 *
 * <p><b>Lifecycle</b>, as MCP's stdio transport describes it:
 * <ul>
 *   <li>When the client's input ends, everything read is relayed, the child's stdin is closed,
 *       and the child gets {@link Builder#exitTimeout(Duration) exitTimeout} (default 5 s) to exit,
 *       then SIGTERM and {@link Builder#terminateTimeout(Duration) terminateTimeout} (default 5 s),
 *       then SIGKILL.</li>
 *   <li>When the child exits, whatever it wrote is relayed and flushed before
 *       {@link #exitCode()} completes with its exit code (128 + signal when a signal ended it);
 *       by then the proxy's own stdin, when it is the client's input, is closed and its reader
 *       gone, so that the process can exit at once.</li>
 *   <li>{@link #signal(String)} passes TERM or INT on to the child, with SIGKILL after
 *       {@code terminateTimeout}.</li>
 * </ul>
 *
 * <p><b>Limits</b> (defaults): line length 16 MiB ({@link Builder#maxLineLength}); bytes waiting
 * per writer before reads pause, 1 MiB.
 */
public final class StdioProxy implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(StdioProxy.class);

    /** Bytes queued for a writer above which the matching reader waits. */
    static final long WRITE_HIGH_WATER_MARK = 1024 * 1024;
    /** How long to wait for the child's stdout to end after it exited (a grandchild may hold it). */
    private static final Duration OUTPUT_DRAIN_TIMEOUT = Duration.ofSeconds(2);

    private final StdioServer process;
    private final Builder config;
    private final EventExecutor executor;
    private final boolean ownsExecutor;
    private final InterceptorChain chain;
    private final LineFrameDecoder clientDecoder;
    private final LineFrameDecoder serverDecoder;
    private final StreamWriter toServer;
    private final StreamWriter toClient;
    private final StreamPump clientPump;
    private final StreamPump serverPump;
    private final Thread stderrCopier;
    private final CompletableFuture<Void> serverOutputEnded = new CompletableFuture<>();
    private final CompletableFuture<Integer> exitCode = new CompletableFuture<>();
    private final AtomicBoolean shuttingDown = new AtomicBoolean();

    private StdioProxy(Builder config, StdioServer process) {
        this.config = config;
        this.process = process;
        if (config.executor() != null) {
            executor = config.executor();
            ownsExecutor = false;
        } else {
            executor = new DefaultEventLoop(new DefaultThreadFactory("mcp-chaos-stdio", true));
            ownsExecutor = true;
        }
        // Read here, once the server was started: see ProxyBuilder.alloc().
        ByteBufAllocator alloc = config.alloc();
        toServer = new StreamWriter("server-stdin", process.stdin(), WRITE_HIGH_WATER_MARK,
                e -> log.debug("the server's stdin closed: {}", e.toString()));
        toClient = new StreamWriter("client-stdout", config.clientOutput, WRITE_HIGH_WATER_MARK,
                e -> {
                    log.info("the client stopped reading ({}); shutting the server down", e.getMessage());
                    shutdown();
                });
        chain = new InterceptorChain(config.interceptors(), new Session("stdio"), TransportKind.STDIO, executor, alloc,
                new Control(), toServer, toClient);
        TransportObserver observer = config.observer();
        clientDecoder = new LineFrameDecoder(Direction.CLIENT_TO_SERVER, new LineFramer(config.maxLineLength, alloc))
                .onOversized(length -> observer.limitBreached(TransportKind.STDIO, TransportObserver.Limit.LINE_LENGTH,
                        Direction.CLIENT_TO_SERVER, length));
        serverDecoder = new LineFrameDecoder(Direction.SERVER_TO_CLIENT, new LineFramer(config.maxLineLength, alloc))
                .onOversized(length -> observer.limitBreached(TransportKind.STDIO, TransportObserver.Limit.LINE_LENGTH,
                        Direction.SERVER_TO_CLIENT, length));
        // Messages a fault still holds (a latency) reach the server before its stdin is closed.
        clientPump = new StreamPump("client-stdin", config.clientInput, clientDecoder, chain, toServer, alloc,
                () -> chain.endInput(Direction.CLIENT_TO_SERVER, config.exitTimeout, this::onClientInputEnded));
        serverPump = new StreamPump("server-stdout", process.stdout(), serverDecoder, chain, toClient, alloc,
                () -> serverOutputEnded.complete(null));
        stderrCopier = new Thread(this::copyServerStderr, "mcp-chaos-stderr");
        stderrCopier.setDaemon(true);
    }

    /** A builder for a proxy in front of {@code command} (the program and its arguments). */
    public static Builder builder(List<String> command) {
        return new Builder(command);
    }

    /**
     * A builder for a proxy in front of a server that is not a child process, such as one in
     * this JVM on a pair of pipes; {@code launcher} is called by {@link Builder#start()}. The
     * directory and environment settings do not apply to it.
     */
    public static Builder builder(StdioServer.Launcher launcher) {
        return new Builder(launcher);
    }

    private StdioProxy begin() {
        config.observer().sessionStarted(TransportKind.STDIO, chain.session().id());
        toServer.start();
        toClient.start();
        serverPump.start();
        stderrCopier.start();
        clientPump.start();
        process.onExit().thenAccept(this::onServerExited);
        return this;
    }

    /** Completes with the server's exit code once it exited and all its output was relayed. */
    public CompletableFuture<Integer> exitCode() {
        return exitCode;
    }

    /** The server, as log lines name it ({@code pid 4242} for a child process). */
    public String serverName() {
        return process.describe();
    }

    /** The chain's session (correlation state). */
    public Session session() {
        return chain.session();
    }

    /** Lines discarded for being over the limit, per direction. */
    public long oversizedLines(Direction direction) {
        return (direction == Direction.CLIENT_TO_SERVER ? clientDecoder : serverDecoder).oversizedLines();
    }

    /**
     * Lines made into frames, per direction. Lines relayed in runs while no interceptor inspects
     * their direction are not frames and not counted here (an unterminated last line is framed
     * at the end of the input all the same).
     */
    public long framesRead(Direction direction) {
        return (direction == Direction.CLIENT_TO_SERVER ? clientDecoder : serverDecoder).frames();
    }

    /**
     * Passes a signal on to the server: {@code TERM} or {@code INT}. If the server is still
     * running {@code terminateTimeout} later, it is killed.
     */
    public void signal(String name) {
        if (!process.isAlive()) {
            return;
        }
        if ("INT".equals(name)) {
            process.interrupt();
        } else {
            process.terminate();
        }
        scheduleKill();
    }

    /**
     * Shuts down as if the client's input had ended: closes the server's stdin, waits, then
     * escalates. Returns at once; see {@link #exitCode()}.
     */
    public void shutdown() {
        if (!shuttingDown.compareAndSet(false, true)) {
            return;
        }
        clientPump.stop();
        toServer.closeWhenDrained().whenComplete((v, e) -> {
            if (!process.isAlive()) {
                return;
            }
            log.debug("closed the server's stdin; waiting up to {} for it to exit", config.exitTimeout);
            process.onExit().copy().orTimeout(config.exitTimeout.toMillis(), TimeUnit.MILLISECONDS)
                    .whenComplete((p, timeout) -> {
                        if (timeout != null && process.isAlive()) {
                            log.info("the server did not exit within {} of its stdin closing; sending SIGTERM",
                                    format(config.exitTimeout));
                            config.observer().serverExitOverdue(TransportKind.STDIO, chain.session().id(),
                                    config.exitTimeout);
                            process.terminate();
                            scheduleKill();
                        }
                    });
        });
    }

    /** Shuts down (see {@link #shutdown()}) and waits for the exit code. */
    @Override
    public void close() {
        shutdown();
        Duration bound = config.exitTimeout.plus(config.terminateTimeout).plus(OUTPUT_DRAIN_TIMEOUT).plusSeconds(5);
        try {
            exitCode.get(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            log.warn("the proxy did not finish within {}: {}", format(bound), e.toString());
            process.kill();
        }
    }

    private void onClientInputEnded() {
        log.debug("the client's input ended");
        shutdown();
    }

    private void scheduleKill() {
        process.onExit().copy().orTimeout(config.terminateTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .whenComplete((p, timeout) -> {
                    if (timeout != null && process.isAlive()) {
                        log.warn("the server did not exit within {} of SIGTERM; sending SIGKILL",
                                format(config.terminateTimeout));
                        process.kill();
                    }
                });
    }

    private void onServerExited(int code) {
        log.debug("the server exited with code {}", code);
        // Relay what the server wrote before it exited. A grandchild that inherited its stdout may
        // keep the pipe open: then stop waiting after a bound.
        serverOutputEnded.orTimeout(OUTPUT_DRAIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                .whenComplete((v, timeout) -> {
                    if (timeout != null) {
                        log.info("the server exited but its stdout stayed open for {}; closing it",
                                format(OUTPUT_DRAIN_TIMEOUT));
                        serverPump.stop();
                        closeQuietly(process.stdout());
                    }
                    // What a fault still holds of the server's last messages reaches the client first.
                    chain.endInput(Direction.SERVER_TO_CLIENT, OUTPUT_DRAIN_TIMEOUT, () -> {
                        clientPump.stop();
                        toServer.closeNow();
                        toClient.closeWhenDrained().whenComplete((x, y) -> finish(code));
                    });
                });
    }

    private void finish(int code) {
        try {
            stderrCopier.join(OUTPUT_DRAIN_TIMEOUT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (config.ownsClientInput) {
            // The reader of the proxy's own stdin is blocked in a native read while the client
            // keeps its end open. Closing the channel wakes it (FileChannel signals the thread),
            // so it is gone before the process exits: JDK 17's exit waits at least 300 ms for
            // threads in native code, and a client waiting for the process would see that wait.
            closeQuietly(config.clientInput);
        }
        if (ownsExecutor) {
            executor.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
        config.observer().sessionEnded(TransportKind.STDIO, chain.session().id());
        exitCode.complete(code);
    }

    private void copyServerStderr() {
        byte[] buffer = new byte[8192];
        try (InputStream err = process.stderr()) {
            int n;
            while ((n = err.read(buffer)) >= 0) {
                synchronized (config.serverErrorOutput) {
                    config.serverErrorOutput.write(buffer, 0, n);
                    config.serverErrorOutput.flush();
                }
            }
        } catch (IOException e) {
            log.debug("copying the server's stderr stopped: {}", e.toString());
        }
    }

    private static void closeQuietly(Closeable in) {
        try {
            in.close();
        } catch (IOException ignored) {
            // nothing more to read either way
        }
    }

    private static String format(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }

    /** What faults may do to a stdio connection: there is one, so the frame does not matter. */
    private final class Control implements ConnectionControl {
        @Override
        public void closeClientSide(Frame at) {
            log.info("closing the client's side (the proxy's stdout)");
            toClient.closeNow();
        }

        @Override
        public void closeServerSide(Frame at) {
            log.info("closing the server's side (its stdin)");
            toServer.closeNow();
        }

        @Override
        public void terminateServer(Frame at) {
            log.info("sending SIGTERM to the server ({})", process.describe());
            process.terminate();
        }

        @Override
        public void killServer(Frame at) {
            log.info("sending SIGKILL to the server ({})", process.describe());
            process.kill();
        }
    }

    /** A child process as the proxy's server. */
    private static final class ChildProcess implements StdioServer {
        private final Process process;
        private final CompletableFuture<Integer> exit;

        ChildProcess(Process process) {
            this.process = process;
            this.exit = process.onExit().thenApply(Process::exitValue);
        }

        @Override
        public OutputStream stdin() {
            return process.getOutputStream();
        }

        @Override
        public InputStream stdout() {
            return process.getInputStream();
        }

        @Override
        public InputStream stderr() {
            return process.getErrorStream();
        }

        @Override
        public CompletableFuture<Integer> onExit() {
            return exit;
        }

        @Override
        public boolean isAlive() {
            return process.isAlive();
        }

        @Override
        public String describe() {
            return "pid " + process.pid();
        }

        /**
         * SIGTERM through the {@link ProcessHandle}: {@link Process#destroy()} also closes the
         * streams to and from the child, so what it wrote just before (a last answer, a line on
         * stderr) would be lost instead of relayed.
         */
        @Override
        public void terminate() {
            process.toHandle().destroy();
        }

        /** SIGKILL, leaving the output to be read to the end (see {@link #terminate}). */
        @Override
        public void kill() {
            process.toHandle().destroyForcibly();
        }

        @Override
        public void interrupt() {
            // The JDK sends only TERM and KILL; kill(1) is on every POSIX system.
            try {
                new ProcessBuilder("kill", "-INT", Long.toString(process.pid())).inheritIO().start();
            } catch (IOException e) {
                log.debug("kill -INT failed ({}); sending SIGTERM instead", e.toString());
                terminate();
            }
        }
    }

    /**
     * Configures and starts a {@link StdioProxy}. Without an {@link #executor(EventExecutor) executor},
     * the chain runs on an event loop of the proxy's own.
     */
    public static final class Builder extends ProxyBuilder<Builder> {
        private final List<String> command;
        private final StdioServer.Launcher launcher;
        private Path directory;
        private final Map<String, String> environment = new LinkedHashMap<>();
        private InputStream clientInput;
        /** The client input is the proxy's stdin, opened by {@link #start()}: closed when the session ends. */
        private boolean ownsClientInput;
        private OutputStream clientOutput;
        private OutputStream serverErrorOutput;
        private int maxLineLength = LineFramer.DEFAULT_MAX_LINE_LENGTH;
        private Duration exitTimeout = Duration.ofSeconds(5);
        private Duration terminateTimeout = Duration.ofSeconds(5);

        private Builder(List<String> command) {
            Objects.requireNonNull(command, "command");
            if (command.isEmpty()) {
                throw new IllegalArgumentException("command: [] (expected: a program and its arguments)");
            }
            this.command = List.copyOf(command);
            this.launcher = null;
        }

        private Builder(StdioServer.Launcher launcher) {
            this.launcher = Objects.requireNonNull(launcher, "launcher");
            this.command = null;
        }

        /** The server's working directory; default: the proxy's. */
        public Builder directory(Path directory) {
            this.directory = Objects.requireNonNull(directory, "directory");
            return this;
        }

        /** Adds to the environment the server inherits from the proxy. */
        public Builder environment(Map<String, String> variables) {
            environment.putAll(Objects.requireNonNull(variables, "variables"));
            return this;
        }

        /**
         * Where the client's messages come from; default: the proxy's stdin, which is then closed
         * when the session ends. A stream given here is not closed by the proxy.
         */
        public Builder clientInput(InputStream in) {
            this.clientInput = Objects.requireNonNull(in, "in");
            this.ownsClientInput = false;
            return this;
        }

        /** Where messages to the client go; default: the proxy's stdout. */
        public Builder clientOutput(OutputStream out) {
            this.clientOutput = Objects.requireNonNull(out, "out");
            return this;
        }

        /** Where the server's stderr is copied; default: the proxy's stderr. */
        public Builder serverErrorOutput(OutputStream err) {
            this.serverErrorOutput = Objects.requireNonNull(err, "err");
            return this;
        }

        @Override
        protected Builder self() {
            return this;
        }

        /** Longest line kept, in bytes, delimiter excluded; default 16 MiB. */
        public Builder maxLineLength(int bytes) {
            if (bytes < 1) {
                throw new IllegalArgumentException("maxLineLength: " + bytes + " (expected: >= 1)");
            }
            this.maxLineLength = bytes;
            return this;
        }

        /** How long the server may take to exit after its stdin closed, before SIGTERM; default 5 s. */
        public Builder exitTimeout(Duration timeout) {
            this.exitTimeout = requireNonNegative(timeout, "exitTimeout");
            return this;
        }

        /** How long the server may take to exit after SIGTERM, before SIGKILL; default 5 s. */
        public Builder terminateTimeout(Duration timeout) {
            this.terminateTimeout = requireNonNegative(timeout, "terminateTimeout");
            return this;
        }

        /**
         * Starts the server and the relay.
         *
         * @throws ServerStartException when the command cannot be started, or the working directory
         *                              does not exist or is not a directory; its message says which
         */
        public StdioProxy start() throws ServerStartException {
            return start(builder -> { });
        }

        /**
         * Starts the server, then has {@code onceStarted} finish this builder (its interceptors and
         * observer, typically), then starts the relay. What the proxy sets up there overlaps the
         * server's own start-up instead of delaying it; meanwhile what the server writes waits in
         * its pipe, and nothing is read from the client. {@code onceStarted} is called when the
         * server cannot be started too, before the observer hears of it.
         *
         * @throws ServerStartException as {@link #start()}; when {@code onceStarted} throws, the
         *                              server is killed and its exception goes on
         */
        public StdioProxy start(Consumer<Builder> onceStarted) throws ServerStartException {
            Objects.requireNonNull(onceStarted, "onceStarted");
            if (clientInput == null) {
                // Through a channel, not the FileInputStream itself: closing a FileChannel wakes a
                // thread blocked reading it, closing a FileInputStream does not (see finish).
                clientInput = Channels.newInputStream(new FileInputStream(FileDescriptor.in).getChannel());
                ownsClientInput = true;
            }
            if (clientOutput == null) {
                clientOutput = new FileOutputStream(FileDescriptor.out);
            }
            if (serverErrorOutput == null) {
                serverErrorOutput = new FileOutputStream(FileDescriptor.err);
            }
            StdioServer server;
            try {
                server = launch();
            } catch (NotStarted e) {
                onceStarted.accept(this);
                observer().upstreamFailed(TransportKind.STDIO, TransportObserver.UpstreamFailure.START_FAILED, e.detail);
                throw e.exception;
            }
            try {
                onceStarted.accept(this);
            } catch (RuntimeException | Error e) {
                server.kill();
                throw e;
            }
            return new StdioProxy(this, server).begin();
        }

        /** The server started, by the launcher or as a child process. */
        private StdioServer launch() throws NotStarted {
            if (launcher != null) {
                StdioServer server;
                try {
                    server = launcher.start();
                } catch (IOException | RuntimeException e) {
                    throw new NotStarted(String.valueOf(e.getMessage()),
                            new ServerStartException("cannot start the server: " + e.getMessage(), e));
                }
                log.debug("started the server ({})", server.describe());
                return server;
            }
            ProcessBuilder pb = new ProcessBuilder(command);
            if (directory != null) {
                pb.directory(directory.toFile());
            }
            pb.environment().putAll(environment);
            if (directory != null && !Files.isDirectory(directory)) {
                // The JDK reports a missing directory as the command's ENOENT: say which it is.
                String problem = "the server's working directory " + directory + " "
                        + (Files.exists(directory) ? "is not a directory" : "does not exist");
                throw new NotStarted(problem, new ServerStartException(problem + " (the server command " + command
                        + " was not started)", null));
            }
            Process process;
            try {
                process = pb.start();
            } catch (IOException e) {
                throw new NotStarted(rootMessage(e), new ServerStartException("cannot start the server command "
                        + command + ": " + rootMessage(e), e));
            }
            log.debug("started the server (pid {}): {}", process.pid(), command);
            return new ChildProcess(process);
        }

        /** A server that did not start: what the observer is told, and what the caller gets. */
        private static final class NotStarted extends Exception {
            private static final long serialVersionUID = 1L;
            private final String detail;
            private final ServerStartException exception;

            NotStarted(String detail, ServerStartException exception) {
                super(detail, null, false, false);
                this.detail = detail;
                this.exception = exception;
            }
        }

        private static Duration requireNonNegative(Duration d, String name) {
            Objects.requireNonNull(d, name);
            if (d.isNegative()) {
                throw new IllegalArgumentException(name + ": " + d + " (expected: >= 0)");
            }
            return d;
        }

        private static String rootMessage(IOException e) {
            // "Cannot run program "x": error=2, No such file or directory" -> the part after the errno.
            String message = String.valueOf(e.getMessage());
            int errno = message.lastIndexOf("error=");
            if (errno >= 0) {
                int comma = message.indexOf(", ", errno);
                if (comma >= 0) {
                    return message.substring(comma + 2);
                }
            }
            return message;
        }
    }
}
