package dev.mcpchaos.server.it;

import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.HttpProxyBuilder.RunningHttp;
import dev.mcpchaos.server.McpChaosProxy;
import io.modelcontextprotocol.client.McpClient;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link AnswerFaultsContract} over Streamable HTTP: the MCP Java SDK's
 * {@code HttpClientStreamableHttpTransport}, through an in-process mcp-chaos HTTP proxy, to
 * {@code server-everything streamableHttp} on 127.0.0.1, which answers every POST with an SSE
 * stream (a priming event, then the answer). One server-everything serves the class; each test has
 * its own proxy and session.
 *
 * <p>The faults that hold an answer (latency, throttle, reorder) are the case the end of a response
 * passing through the chain exists for: before it, the upstream's end of the stream ended the
 * client's at once, the held answer had nowhere to go, and the call timed out.
 */
class HttpAnswerFaultsIT extends AnswerFaultsContract {

    @TempDir
    static Path tempDir;

    private HttpPeers.ServerEverything everything;

    @Override
    void startPeers() {
        everything = HttpPeers.ServerEverything.start(tempDir);
    }

    @Override
    void stopPeers() {
        if (everything != null) {
            everything.close();
        }
    }

    @Override
    McpClient.SyncSpec directClient() {
        return HttpPeers.sdkClient(everything.endpoint())
                .requestTimeout(REQUEST_TIMEOUT)
                .initializationTimeout(REQUEST_TIMEOUT);
    }

    @Override
    Proxied throughProxy(String rulesYaml) {
        List<FaultEvent> events = new CopyOnWriteArrayList<>();
        RunningHttp proxy = McpChaosProxy.http(everything.endpoint())
                .rules(RuleSet.parse(rulesYaml, "answers.yaml"))
                .seed(SEED)
                .faultListener(events::add)
                .start();
        McpClient.SyncSpec spec = HttpPeers.sdkClient(HttpPeers.endpoint(proxy.address()))
                .requestTimeout(REQUEST_TIMEOUT)
                .initializationTimeout(REQUEST_TIMEOUT);
        return new Proxied() {
            @Override
            public McpClient.SyncSpec client() {
                return spec;
            }

            @Override
            public List<FaultEvent> events() {
                return events;
            }

            @Override
            public List<String> linesToClient() {
                return null; // the SDK reads the SSE streams itself; AnswerAccountingSoakIT counts them raw
            }

            @Override
            public void close() {
                proxy.close();
            }
        };
    }

    @Test
    @Override
    void latencyOnTheAnswersDelaysEveryCallAndChangesNoResult() {
        super.latencyOnTheAnswersDelaysEveryCallAndChangesNoResult();
    }

    @Test
    @Override
    void throttleOnTheAnswersDelaysEveryCallByItsPiecesAndChangesNoResult() {
        super.throttleOnTheAnswersDelaysEveryCallByItsPiecesAndChangesNoResult();
    }

    @Test
    @Override
    void reorderHoldsALoneAnswerUntilItsWindowTimesOutAndChangesNoResult() {
        super.reorderHoldsALoneAnswerUntilItsWindowTimesOutAndChangesNoResult();
    }

    @Test
    @Override
    void reorderSwapsTheAnswersOfConcurrentCallsAndEachCallStillGetsItsOwn() throws Exception {
        super.reorderSwapsTheAnswersOfConcurrentCallsAndEachCallStillGetsItsOwn();
    }

    @Test
    @Override
    void concurrentCallsEachWaitTheirOwnLatencyAndGetTheirOwnResult() throws Exception {
        super.concurrentCallsEachWaitTheirOwnLatencyAndGetTheirOwnResult();
    }

    @Test
    @Override
    void progressNotificationsPassAndTheDelayedResultIsTheDirectOne() {
        super.progressNotificationsPassAndTheDelayedResultIsTheDirectOne();
    }
}
