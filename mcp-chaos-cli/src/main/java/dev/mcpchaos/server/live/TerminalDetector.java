package dev.mcpchaos.server.live;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;

/**
 * Tells whether this process's stderr is a terminal that understands ANSI cursor movement.
 *
 * <p>Java 17 has no {@code isatty} for file descriptor 2, and {@link System#console()} needs
 * stdin <em>and</em> stdout to be terminals, which in stdio mode they never are (they are the
 * protocol's pipes). So this is a heuristic, documented because it can be wrong:
 * <ul>
 *   <li>only on Linux, where {@code /proc/self/fd/2} is a link to what stderr is open on; a
 *       terminal is {@code /dev/pts/N} (a pseudo-terminal: xterm, ssh, tmux) or {@code /dev/ttyN};
 *   <li>and only when {@code TERM} is set and is not {@code dumb} (an editor's output pane, CI
 *       logs), since the view redraws itself with cursor movements.
 * </ul>
 * Anything else (another OS, no {@code /proc}, a link that cannot be read, a file or a pipe)
 * answers false: the proxy then logs as usual, which is always safe.
 */
final class TerminalDetector {

    /** Reads where a symbolic link points. */
    @FunctionalInterface
    interface LinkReader {
        Path read(Path link) throws IOException;
    }

    private static final Path STDERR_LINK = Path.of("/proc/self/fd/2");

    private final String osName;
    private final Function<String, String> environment;
    private final LinkReader links;

    TerminalDetector(String osName, Function<String, String> environment, LinkReader links) {
        this.osName = osName;
        this.environment = Objects.requireNonNull(environment, "environment");
        this.links = Objects.requireNonNull(links, "links");
    }

    /** This process's: its OS, its environment, the real {@code /proc}. */
    static TerminalDetector system() {
        return new TerminalDetector(System.getProperty("os.name"), System::getenv, Files::readSymbolicLink);
    }

    /** Whether stderr looks like a terminal that a live view can redraw itself on. */
    boolean stderrIsTerminal() {
        if (osName == null || !osName.toLowerCase(Locale.ROOT).startsWith("linux")) {
            return false;
        }
        String term = environment.apply("TERM");
        if (term == null || term.isBlank() || term.equalsIgnoreCase("dumb")) {
            return false;
        }
        String target;
        try {
            target = links.read(STDERR_LINK).toString();
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return false; // no /proc, or not allowed to look: assume not a terminal
        }
        return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
    }
}
