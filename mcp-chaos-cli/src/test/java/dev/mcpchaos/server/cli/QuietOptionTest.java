package dev.mcpchaos.server.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintStream;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code --quiet}: both proxy commands take it, and with it there is no live view, terminal or not. */
class QuietOptionTest {

    @Test
    void stdioAndHttpTakeQuietAndThenOpenNoLiveView() {
        StdioCommand stdio = new StdioCommand();
        new CommandLine(stdio).parseArgs("--quiet", "--", "cat");
        HttpCommand http = new HttpCommand();
        new CommandLine(http).parseArgs("--quiet", "--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1/mcp");

        PrintStream err = System.err;
        assertThat(stdio.chaos.quiet).isTrue();
        assertThat(stdio.chaos.openLiveView()).isNull();
        assertThat(http.chaos.quiet).isTrue();
        assertThat(http.chaos.openLiveView()).isNull();
        assertThat(System.err).isSameAs(err); // nothing was taken over
    }

    @Test
    void withoutQuietTheViewIsOnlyOpenedOnATerminal() {
        StdioCommand stdio = new StdioCommand();
        new CommandLine(stdio).parseArgs("--", "cat");
        assertThat(stdio.chaos.quiet).isFalse();
        // Under Maven stderr is a pipe: no view either, and System.err is left alone.
        PrintStream err = System.err;
        assertThat(stdio.chaos.openLiveView()).isNull();
        assertThat(System.err).isSameAs(err);
    }
}
