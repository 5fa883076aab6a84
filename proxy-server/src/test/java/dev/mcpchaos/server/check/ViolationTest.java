package dev.mcpchaos.server.check;

import dev.mcpchaos.core.frame.Direction;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A violation as one line (the JUnit report's failure text): never a place followed by nothing. */
class ViolationTest {

    @Test
    void aFindingWithNoMessageSaysThereIsNoExcerptRatherThanEndingInABlank() {
        // stdio.exit-on-stdin-close is about the process, not a message: its excerpt is empty.
        Violation v = new Violation(Check.EXIT_ON_STDIN_CLOSE, "the server was still running 5s after its stdin "
                + "closed", "stdio", Direction.SERVER_TO_CLIENT, 5, null, null, "");
        assertThat(v.toString()).isEqualTo("stdio.exit-on-stdin-close: the server was still running 5s after its "
                + "stdin closed [stdio s2c #5] (no message excerpt)");
    }

    @Test
    void aFindingAboutAMessageEndsWithItsExcerpt() {
        Violation v = new Violation(Check.NOT_JSON, "not JSON", "stdio", Direction.SERVER_TO_CLIENT, 2, 7,
                "tools/call", "oops");
        assertThat(v.toString()).isEqualTo("jsonrpc.not-json: not JSON [stdio s2c #2 id=7 tools/call] oops");
    }
}
