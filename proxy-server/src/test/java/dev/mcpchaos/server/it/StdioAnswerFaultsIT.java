package dev.mcpchaos.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleSet;
import io.modelcontextprotocol.client.McpClient;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * {@link AnswerFaultsContract} over stdio: the MCP Java SDK's {@code StdioClientTransport}, through
 * an in-process mcp-chaos stdio proxy ({@link InProcessStdioProxy}), to
 * {@code node .../server-everything/dist/index.js stdio}, which each test's proxy starts anew. The
 * direct calls run the same server as the SDK's own child process.
 */
class StdioAnswerFaultsIT extends AnswerFaultsContract {

    @Override
    McpClient.SyncSpec directClient() {
        return TestPeers.stdioClient(TestPeers.serverEverythingStdioCommand(), line -> { })
                .requestTimeout(REQUEST_TIMEOUT)
                .initializationTimeout(REQUEST_TIMEOUT);
    }

    @Override
    Proxied throughProxy(String rulesYaml) {
        InProcessStdioProxy proxy = InProcessStdioProxy.start(TestPeers.serverEverythingStdioCommand(),
                RuleSet.parse(rulesYaml, "answers.yaml"), SEED);
        List<String> relayStderr = new CopyOnWriteArrayList<>();
        McpClient.SyncSpec spec = proxy.sdkClient(REQUEST_TIMEOUT, relayStderr);
        return new Proxied() {
            @Override
            public McpClient.SyncSpec client() {
                return spec;
            }

            @Override
            public List<FaultEvent> events() {
                return proxy.events;
            }

            @Override
            public List<String> linesToClient() {
                return proxy.linesToClient();
            }

            @Override
            public void close() {
                proxy.close();
                assertThat(relayStderr).as("the bash relay's stderr").isEmpty();
            }
        };
    }
}
