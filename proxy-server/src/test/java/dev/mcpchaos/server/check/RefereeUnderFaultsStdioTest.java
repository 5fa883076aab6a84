package dev.mcpchaos.server.check;

import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.McpChaosProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The referee under faults, live over stdio (issue #33): the in-process proxy with its referee in
 * front of a small Node server that answers every call (or, for the twins, ignores one on
 * purpose), and a client written here that counts every answer it gets. What a fault did is never
 * the server's violation; a server that really fails under the same fault is still caught.
 */
@Timeout(90)
class RefereeUnderFaultsStdioTest {

    /** Answers initialize, tools/list, ping and echo; ignores an echo of "silent" (the twins' misbehaviour). */
    private static final String SERVER = """
            const rl = require('readline').createInterface({input: process.stdin});
            const out = m => process.stdout.write(JSON.stringify(Object.assign({jsonrpc: '2.0'}, m)) + '\\n');
            rl.on('line', line => {
              let m; try { m = JSON.parse(line); } catch (e) { return; }
              if (m.id === undefined) return;
              if (m.method === 'initialize') out({id: m.id, result: {protocolVersion: m.params.protocolVersion,
                  capabilities: {tools: {}}, serverInfo: {name: 'faults', version: '1'}}});
              else if (m.method === 'tools/list') out({id: m.id, result: {tools: [{name: 'echo',
                  inputSchema: {type: 'object', properties: {text: {type: 'string'}}}}]}});
              else if (m.method === 'tools/call') {
                if (m.params.arguments.text === 'silent') return;
                out({id: m.id, result: {content: [{type: 'text', text: m.params.arguments.text}]}});
              } else out({id: m.id, result: {}});
            });
            rl.on('close', () => process.exit(0));
            """;
    private static final String INIT = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
            + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    private static final String INITIALIZED = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    private static final String LIST = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";

    private static String call(int id, String text) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                + "\"arguments\":{\"text\":\"" + text + "\"}}}";
    }

    /** One session through the proxy: what the client got and what the referee said. */
    private record Run(Referee.Report report, List<FaultEvent> events, List<String> answers, int exitCode) {
    }

    private interface Conversation {
        void talk(Client client) throws Exception;
    }

    /** The client's side: lines to the proxy, lines from it. */
    private static final class Client {
        final OutputStream toProxy;
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final List<String> answers = new CopyOnWriteArrayList<>();

        Client(OutputStream toProxy) {
            this.toProxy = toProxy;
        }

        void send(String line) throws IOException {
            toProxy.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            toProxy.flush();
        }

        /** Waits for the answer to {@code id}, or null after {@code timeout}. */
        String answer(int id, Duration timeout) throws InterruptedException {
            long end = System.nanoTime() + timeout.toNanos();
            String marker = "\"id\":" + id + ",";
            while (System.nanoTime() < end) {
                String line = lines.poll(20, TimeUnit.MILLISECONDS);
                if (line != null && line.contains(marker)) {
                    answers.add(line);
                    return line;
                }
            }
            return null;
        }
    }

    private static Run run(String rules, Conversation conversation) throws Exception {
        Referee referee = new Referee();
        List<FaultEvent> events = new CopyOnWriteArrayList<>();
        PipedOutputStream toProxy = new PipedOutputStream();
        PipedInputStream clientIn = new PipedInputStream(toProxy, 1 << 16);
        PipedOutputStream clientOut = new PipedOutputStream();
        PipedInputStream fromProxy = new PipedInputStream(clientOut, 1 << 16);
        Client client = new Client(toProxy);
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(fromProxy, StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    client.lines.add(line);
                }
            } catch (IOException ended) {
                // the proxy closed its output
            }
        }, "faults-client-reader");
        reader.setDaemon(true);
        reader.start();
        McpChaosProxy.Running proxy = McpChaosProxy.stdio(List.of("node", "-e", SERVER))
                .clientInput(clientIn).clientOutput(clientOut).serverErrorOutput(new ByteArrayOutputStream())
                .rules(RuleSet.parse(rules, "faults.yaml")).seed(42).faultListener(events::add)
                .exitTimeout(Duration.ofSeconds(2)).check(referee).start();
        int exit;
        try {
            conversation.talk(client);
            toProxy.close();
            exit = proxy.exitCode().get(30, TimeUnit.SECONDS);
        } finally {
            proxy.close();
        }
        return new Run(referee.report(), events, client.answers, exit);
    }

    private static void initialize(Client client) throws Exception {
        client.send(INIT);
        assertThat(client.answer(1, Duration.ofSeconds(20))).contains("\"protocolVersion\"");
        client.send(INITIALIZED);
        client.send(LIST);
        assertThat(client.answer(2, Duration.ofSeconds(20))).contains("\"echo\"");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"error", "tool_error"})
    void answersTheProxyMadeAreNoUnansweredRequestsOfTheServer(String fault) throws Exception {
        String rules = "rules:\n  - name: flaky\n    match: {kind: request, method: tools/call, tool: echo}\n"
                + "    probability: 0.5\n    fault: {type: " + fault + "}\n";
        Run run = run(rules, client -> {
            initialize(client);
            for (int id = 3; id < 43; id++) {
                client.send(call(id, "m" + id));
                assertThat(client.answer(id, Duration.ofSeconds(20))).as("the answer to call %d", id).isNotNull();
            }
        });
        int injected = run.events().size();
        assertThat(injected).as("the rule answered some calls itself, let others through").isBetween(5, 35);
        assertThat(run.answers()).as("40 calls, 40 answers, besides initialize and tools/list").hasSize(42);
        assertThat(run.report().firedIds()).as(run.report().all().toString()).isEmpty();
        assertThat(run.report().keptFromReceiver()).as("the calls the rule answered never reached the server")
                .isEqualTo(injected);
        assertThat(run.report().byFaultsCount()).isZero();
    }

    @Test
    void aServerThatLeavesACallUnansweredUnderTheSameFaultIsStillCaught() throws Exception {
        String rules = "rules:\n  - name: flaky\n    match: {kind: request, method: tools/call, tool: echo}\n"
                + "    times: 5\n    fault: {type: error}\n";
        Run run = run(rules, client -> {
            initialize(client);
            for (int id = 3; id < 13; id++) {
                client.send(call(id, "m" + id));
                assertThat(client.answer(id, Duration.ofSeconds(20))).isNotNull();
            }
            client.send(call(13, "silent")); // past the rule's 5 times: it reaches the server, which ignores it
            assertThat(client.answer(13, Duration.ofMillis(500))).isNull();
        });
        assertThat(run.events()).hasSize(5);
        assertThat(run.report().firedIds()).containsExactly("jsonrpc.unanswered-request");
        assertThat(run.report().count(Check.UNANSWERED_REQUEST)).isEqualTo(1);
        assertThat(run.report().violations().get(Check.UNANSWERED_REQUEST).get(0).id()).isEqualTo(13L);
        assertThat(run.report().keptFromReceiver()).isEqualTo(5);
    }

    @Test
    void aCrashIsTheFaultsAndTheCallItSwallowedIsOwedNothing() throws Exception {
        String rules = "rules:\n  - name: boom\n    match: {kind: request, method: tools/call}\n    after: 2\n"
                + "    times: 1\n    fault: {type: crash}\n";
        Run run = run(rules, client -> {
            initialize(client);
            for (int id = 3; id < 5; id++) {
                client.send(call(id, "m" + id));
                assertThat(client.answer(id, Duration.ofSeconds(20))).isNotNull();
            }
            client.send(call(5, "m5")); // the crash: it goes nowhere
            assertThat(client.answer(5, Duration.ofMillis(500))).isNull();
        });
        assertThat(run.exitCode()).as("128 + SIGKILL").isEqualTo(137);
        assertThat(run.events()).hasSize(1);
        assertThat(run.report().firedIds()).as(run.report().all().toString()).isEmpty();
    }

    @Test
    void aServerSideDisconnectEndsTheServerAndIsTheFaults() throws Exception {
        String rules = "rules:\n  - name: hang-up\n    match: {kind: request, method: tools/call}\n    after: 1\n"
                + "    times: 1\n    fault: {type: disconnect, side: server}\n";
        Run run = run(rules, client -> {
            initialize(client);
            client.send(call(3, "m3"));
            assertThat(client.answer(3, Duration.ofSeconds(20))).isNotNull();
            client.send(call(4, "m4")); // its stdin closes here: a well-behaved server exits
            assertThat(client.answer(4, Duration.ofMillis(500))).isNull();
            client.send(call(5, "m5")); // after the server is gone: owed nothing either
            assertThat(client.answer(5, Duration.ofMillis(300))).isNull();
        });
        assertThat(run.events()).hasSize(1);
        assertThat(run.report().firedIds()).as(run.report().all().toString()).isEmpty();
    }
}
