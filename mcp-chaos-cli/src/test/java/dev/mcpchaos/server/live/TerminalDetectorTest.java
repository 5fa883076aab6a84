package dev.mcpchaos.server.live;

import org.junit.jupiter.api.Test;

import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class TerminalDetectorTest {

    private static final Map<String, String> XTERM = Map.of("TERM", "xterm-256color");

    private static TerminalDetector linux(Map<String, String> env, String stderrTarget) {
        return new TerminalDetector("Linux", env::get, link -> {
            assertThat(link).isEqualTo(Path.of("/proc/self/fd/2"));
            return Path.of(stderrTarget);
        });
    }

    @Test
    void aPseudoTerminalOrAConsoleOnLinuxIsATerminal() {
        assertThat(linux(XTERM, "/dev/pts/3").stderrIsTerminal()).isTrue();
        assertThat(linux(XTERM, "/dev/tty2").stderrIsTerminal()).isTrue();
    }

    @Test
    void aPipeOrAFileIsNot() {
        assertThat(linux(XTERM, "pipe:[123456]").stderrIsTerminal()).isFalse();
        assertThat(linux(XTERM, "/tmp/proxy.log").stderrIsTerminal()).isFalse();
        assertThat(linux(XTERM, "/dev/null").stderrIsTerminal()).isFalse();
    }

    @Test
    void aDumbOrUnsetTermIsNot() {
        assertThat(linux(Map.of("TERM", "dumb"), "/dev/pts/3").stderrIsTerminal()).isFalse();
        assertThat(linux(Map.of(), "/dev/pts/3").stderrIsTerminal()).isFalse();
        assertThat(linux(Map.of("TERM", " "), "/dev/pts/3").stderrIsTerminal()).isFalse();
    }

    @Test
    void withoutProcItIsNot() {
        TerminalDetector noProc = new TerminalDetector("Linux", XTERM::get, link -> {
            throw new NoSuchFileException(link.toString());
        });
        assertThat(noProc.stderrIsTerminal()).isFalse();
        TerminalDetector unsupported = new TerminalDetector("Linux", XTERM::get, link -> {
            throw new UnsupportedOperationException("no links here");
        });
        assertThat(unsupported.stderrIsTerminal()).isFalse();
    }

    @Test
    void anotherSystemIsNotEvenAsked() {
        TerminalDetector.LinkReader mustNotBeRead = link -> {
            throw new AssertionError("read " + link);
        };
        assertThat(new TerminalDetector("Mac OS X", XTERM::get, mustNotBeRead).stderrIsTerminal()).isFalse();
        assertThat(new TerminalDetector("Windows 11", XTERM::get, mustNotBeRead).stderrIsTerminal()).isFalse();
        assertThat(new TerminalDetector(null, XTERM::get, mustNotBeRead).stderrIsTerminal()).isFalse();
    }

    @Test
    void theSystemDetectorAnswersWithoutThrowing() {
        // Under Maven, stderr is a pipe to the build: whatever the machine, not a terminal.
        assertThat(TerminalDetector.system().stderrIsTerminal()).isFalse();
    }
}
