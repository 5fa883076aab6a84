package dev.mcpchaos.junit;

import dev.mcpchaos.rules.journal.Messages;
import io.modelcontextprotocol.client.McpSyncClient;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import static org.assertj.core.api.Assertions.assertThat;

/** The journal is emptied before each test: a test verifies its own traffic (the order is fixed). */
@McpChaosTest(demo = McpChaosTest.Demo.HTTP)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class JournalResetTest {

    @Test
    @Order(1)
    void twoEchoCallsAreInTheJournal(ChaosProxy proxy) {
        try (McpSyncClient client = Clients.http(proxy.mcpUrl())) {
            Clients.echo(client, "one");
            Clients.echo(client, "two");
        }
        proxy.journal().verify().client().sent(Messages.toolCall("echo")).times(2);
    }

    @Test
    @Order(2)
    void theNextTestStartsWithAnEmptyJournal(ChaosProxy proxy) {
        assertThat(proxy.journal().entries()).isEmpty();
        try (McpSyncClient client = Clients.http(proxy.mcpUrl())) {
            Clients.echo(client, "three");
        }
        proxy.journal().verify().client().sent(Messages.toolCall("echo")).times(1);
    }
}
