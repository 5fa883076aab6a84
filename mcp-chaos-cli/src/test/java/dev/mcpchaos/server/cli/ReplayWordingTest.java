package dev.mcpchaos.server.cli;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** replay's closing line counts in words that agree with the number (issue #34: "1 requests answered"). */
class ReplayWordingTest {

    @Test
    void oneRequestIsARequest() {
        assertThat(ReplayCommand.requests(1)).isEqualTo("1 request");
        assertThat(ReplayCommand.requests(0)).isEqualTo("0 requests");
        assertThat(ReplayCommand.requests(3)).isEqualTo("3 requests");
    }
}
