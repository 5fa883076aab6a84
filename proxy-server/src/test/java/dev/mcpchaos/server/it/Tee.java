package dev.mcpchaos.server.it;

import static java.util.Objects.requireNonNull;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

/**
 * Builds {@code sh -c} command lines that copy the bytes crossing a stdio hop into files with
 * {@code tee}, so a test can compare what one side wrote with what the other side read.
 *
 * <p>The building block is {@link #around}: {@code sh -c 'tee IN | <argv> | tee OUT'}. The
 * byte-exactness check nests it twice, once around the real server and once around the proxy:
 *
 * <pre>{@code
 * Tee tee = Tee.in(tempDir);
 * List<String> command = tee.throughProxy(
 *         TestPeers.serverEverythingStdioCommand(),
 *         Tee.mcpChaosStdio());                      // or any argv -> argv function
 * McpSyncClient client = TestPeers.stdioClient(command, stderr::add)
 *         .toolsChangeConsumer(toolsChanged::add).build();
 * ... traffic ...
 * await().until(() -> !toolsChanged.isEmpty());   // no exchange in flight (see below)
 * client.closeGracefully();
 * tee.awaitWritersExited(Duration.ofSeconds(30));
 * assertThat(tee.serverGot()).hasSameBinaryContentAs(tee.clientSent());
 * assertThat(tee.clientGot()).hasSameBinaryContentAs(tee.serverSent());
 * }</pre>
 *
 * <p>Every argument is single-quoted for the shell, so paths with spaces, quotes or {@code $}
 * are safe, and the nested {@code sh -c} string is quoted again as one argument of the outer
 * one.
 *
 * <p>Shutdown: the SDK's {@code closeGracefully()} sends SIGTERM to the outer {@code sh} only.
 * The JVM then closes that child's stdin, so the first {@code tee} reads EOF and the rest of
 * the pipeline drains and exits by EOF in turn. The files are complete only once every
 * {@code tee} has exited, hence {@link #awaitWritersExited}. (GNU tee writes to its stdout
 * before its files, so a reader can see a line before it is in the file.)
 *
 * <p>Close only when no exchange is in flight. server-everything sends
 * {@code notifications/tools/list_changed} after {@code notifications/initialized}, and the
 * SDK answers with a {@code tools/list} of its own; if the pipes are torn down while that
 * response is travelling, the last {@code tee} can die of SIGPIPE (it writes stdout first)
 * and its file misses the tail the previous hop's file has.
 */
public final class Tee {

    private final Path dir;

    private Tee(Path dir) {
        this.dir = dir;
    }

    /**
     * Returns a capture whose files live in {@code dir} (created if needed). Use a fresh
     * directory per test: {@link #awaitWritersExited} finds the writers by this path.
     */
    public static Tee in(Path dir) {
        requireNonNull(dir, "dir");
        Path absolute = dir.toAbsolutePath().normalize();
        try {
            Files.createDirectories(absolute);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create capture directory " + absolute, e);
        }
        return new Tee(absolute);
    }

    /** The capture directory. */
    public Path dir() {
        return dir;
    }

    /** Bytes the client wrote (the client side of the outer hop). */
    public Path clientSent() {
        return dir.resolve("client-sent.bin");
    }

    /** Bytes the client read. */
    public Path clientGot() {
        return dir.resolve("client-got.bin");
    }

    /** Bytes the server read (the server side of the inner hop). */
    public Path serverGot() {
        return dir.resolve("server-got.bin");
    }

    /** Bytes the server wrote. */
    public Path serverSent() {
        return dir.resolve("server-sent.bin");
    }

    /**
     * Client talks straight to the server: {@code sh -c 'tee client-sent.bin | SERVER | tee
     * client-got.bin'}. Used to prove the capture shape without the proxy.
     */
    public List<String> direct(List<String> server) {
        return around(server, clientSent(), clientGot());
    }

    /**
     * Client talks to the proxy, which talks to the server, with a capture on each hop:
     * {@code sh -c 'tee client-sent.bin | PROXY(sh -c "tee server-got.bin | SERVER | tee
     * server-sent.bin") | tee client-got.bin'}.
     *
     * @param server the real server's argv
     * @param proxy maps the argv of the (wrapped) server to the argv of the proxy that runs it,
     *     for example {@link #mcpChaosStdio(String...)}
     */
    public List<String> throughProxy(List<String> server, UnaryOperator<List<String>> proxy) {
        List<String> wrappedServer = around(server, serverGot(), serverSent());
        List<String> proxyArgv = requireNonNull(proxy.apply(wrappedServer), "proxy.apply(...)");
        return around(proxyArgv, clientSent(), clientGot());
    }

    /**
     * Returns {@code [sh, -c, "tee IN | ARGV | tee OUT"]}: the program sees the same stdin and
     * stdout as without the wrapper, and both streams are copied to files. Stderr is untouched.
     */
    public static List<String> around(List<String> argv, Path stdinCopy, Path stdoutCopy) {
        requireNonNull(argv, "argv");
        if (argv.isEmpty()) {
            throw new IllegalArgumentException("argv: [] (expected: a program and its arguments)");
        }
        String script = "tee " + quote(stdinCopy.toString())
                + " | " + join(argv)
                + " | tee " + quote(stdoutCopy.toString());
        return List.of("/bin/sh", "-c", script);
    }

    /**
     * Returns the proxy under test as an argv function for {@link #throughProxy}:
     * {@code server -> [java, -jar, mcp-chaos.jar, stdio, proxyArgs..., --, server...]},
     * the CLI shape of DESIGN.md ({@code mcp-chaos stdio --rules r.yaml -- cmd}). The jar and
     * java are looked up when the function is applied, so a missing jar fails with
     * {@link TestPeers}'s message.
     */
    public static UnaryOperator<List<String>> mcpChaosStdio(String... proxyArgs) {
        List<String> options = List.of(proxyArgs);
        return server -> {
            List<String> argv = new ArrayList<>();
            argv.add(TestPeers.java().toString());
            argv.add("-jar");
            argv.add(TestPeers.mcpChaosJar().toString());
            argv.add("stdio");
            argv.addAll(options);
            argv.add("--");
            argv.addAll(server);
            return List.copyOf(argv);
        };
    }

    /**
     * Quotes {@code s} as one POSIX shell word: wrapped in single quotes, each embedded
     * {@code '} written as {@code '\''}. Nothing inside single quotes is special to
     * {@code sh}, so this is safe for any string without NUL.
     */
    public static String quote(String s) {
        requireNonNull(s, "s");
        if (s.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("s: contains NUL (expected: a string a shell can pass)");
        }
        return "'" + s.replace("'", "'\\''") + "'";
    }

    /** Quotes every element with {@link #quote} and joins them with spaces. */
    public static String join(List<String> argv) {
        return argv.stream().map(Tee::quote).collect(Collectors.joining(" "));
    }

    /**
     * Waits until no process whose command line mentions this capture's directory is alive.
     * Only the {@code tee}s (and the {@code sh}s and proxy that carry them in their arguments)
     * mention it, and only the {@code tee}s write the files, so afterwards the files are final.
     *
     * <p>All processes are searched, not only descendants, because the SDK kills the outer
     * {@code sh} and its children are re-parented.
     */
    public void awaitWritersExited(Duration timeout) {
        String marker = dir.toString();
        await("processes mentioning " + marker + " to exit")
                .atMost(timeout)
                .pollInterval(Duration.ofMillis(50))
                .until(() -> writers(marker).isEmpty());
    }

    private static List<ProcessHandle> writers(String marker) {
        return ProcessHandle.allProcesses()
                .filter(p -> p.pid() != ProcessHandle.current().pid())
                .filter(p -> p.info().arguments()
                        .map(args -> java.util.Arrays.stream(args).anyMatch(a -> a.contains(marker)))
                        .orElse(false))
                .filter(ProcessHandle::isAlive)
                .collect(Collectors.toList());
    }
}
