package dev.mcpchaos.server.check;

import dev.mcpchaos.server.replay.verify.VerifyResult;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Messages people read (issue #34): no empty excerpt after a colon, a singular for one. */
class MessageWordingTest {

    @Test
    void aFindingAboutNoMessageSaysSoInTheSummary() {
        Referee referee = new Referee();
        referee.exitOverdue("stdio", Duration.ofMillis(300));
        String summary = CheckReports.summary(referee.report());
        assertThat(summary).contains("stdio s2c #0 (no message excerpt)\n").doesNotContain("#0: \n");
    }

    @Test
    void oneRequestIsARequest() {
        VerifyResult one = new VerifyResult(List.of(new VerifyResult.Item(1, "1", "ping", List.of(), true, 2, null)));
        assertThat(one.report()).contains("1/1 request answered as recorded").doesNotContain("requests");
        VerifyResult two = new VerifyResult(List.of(new VerifyResult.Item(1, "1", "ping", List.of(), true, 2, null),
                new VerifyResult.Item(3, "2", "ping", List.of(), true, 4, null)));
        assertThat(two.report()).contains("2/2 requests answered as recorded");
    }
}
