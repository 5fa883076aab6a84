package dev.mcpchaos.server.control;

import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.testing.CatProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A stdio client that writes its last requests and closes its stdin at once (a script, a test)
 * still gets them to the server when a fault holds them: the proxy closes the server's stdin only
 * after the held messages left.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HeldMessagesAtTheEndTest {

    @Test
    void requestsInALatencyWhenTheClientClosesStillReachTheServer() throws Exception {
        String rules = """
                rules:
                  - name: slow
                    match: {direction: client_to_server, tool: echo}
                    fault: {type: latency, latency: 300ms}
                  - name: slow-answers
                    match: {direction: server_to_client, tool: late}
                    fault: {type: latency, latency: 300ms}
                """;
        try (CatProxy cat = new CatProxy(b -> b.rules(RuleSet.parse(rules, "r.yaml")))) {
            cat.send(CatProxy.call(1, "echo"));
            cat.send(CatProxy.call(2, "other"));
            cat.send(CatProxy.call(3, "late"));
            cat.finish(); // closes the client's input right away

            // cat answers with what reached it; the server's last message, held on its way back
            // when cat exited, reaches the client too.
            assertThat(cat.received).containsExactly(CatProxy.call(1, "echo"), CatProxy.call(2, "other"),
                    CatProxy.call(3, "late"));
            assertThat(cat.faults.get()).isEqualTo(2);
        }
    }
}
