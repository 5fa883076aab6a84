package dev.mcpchaos.server.live;

import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.McpChaosProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A real stdio proxy, in this process, with the live view forced on (its "terminal" a byte
 * array) and {@code System.out} captured: the protocol gets stdout to itself, while the view,
 * the logs and the server's stderr share the terminal without tearing the block.
 */
@Timeout(120)
class LiveConsoleStdioTest {

    private static final String RULES = "rules:\n"
            + "  - name: slow\n"
            + "    match: {direction: client_to_server, method: tools/call, tool: search}\n"
            + "    fault: {type: latency, latency: 1ms}\n"
            + "  - name: never\n"
            + "    match: {method: resources/read}\n"
            + "    fault: {type: drop}\n";

    private final PrintStream originalOut = System.out;
    private final PrintStream originalErr = System.err;
    private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    private final ByteArrayOutputStream terminal = new ByteArrayOutputStream();
    private LiveConsole live;
    private McpChaosProxy.Running proxy;

    @AfterEach
    void restore() {
        try {
            if (proxy != null) {
                proxy.close();
            }
        } finally {
            if (live != null) {
                live.close();
            }
            System.setOut(originalOut);
            System.setErr(originalErr);
        }
    }

    @Test
    void stdoutCarriesOnlyTheRelayedMessagesAndEverythingElseIsPrintedAboveTheView() throws Exception {
        PrintStream capturedStdout = new PrintStream(stdout, true, StandardCharsets.UTF_8);
        System.setOut(capturedStdout);
        live = LiveConsole.open(terminal, 120, false, System::nanoTime);
        assertThat(System.err).isSameAs(live.stderr());

        Pipe clientPipe = Pipe.open();
        OutputStream client = Channels.newOutputStream(clientPipe.sink());
        // The server is cat, which says hello on its stderr once the first message came (the view is
        // on by then): every message comes back as it went.
        McpChaosProxy.StdioBuilder builder = McpChaosProxy.stdio(List.of("sh", "-c",
                        "IFS= read -r first; echo server-says-hello >&2; printf '%s\\n' \"$first\"; exec cat"))
                .clientInput(Channels.newInputStream(clientPipe.source()))
                .clientOutput(capturedStdout) // as the command's stdout would be
                .serverErrorOutput(live.stderr())
                .exitTimeout(Duration.ofSeconds(5))
                .rules(RuleSet.parse(RULES, "rules.yaml"))
                .seed(7);
        live.applyTo(builder);
        proxy = builder.start();
        live.start(proxy.rules());

        List<String> sent = new ArrayList<>();
        for (int id = 1; id <= 3; id++) {
            sent.add("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"search\","
                    + "\"arguments\":{\"q\":\"x\"}}}");
        }
        sent.add("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}");
        for (String line : sent) {
            client.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        }
        client.flush();
        await().atMost(Duration.ofSeconds(60)).until(() -> stdout.toString(StandardCharsets.UTF_8).lines().count() == 4);
        await().atMost(Duration.ofSeconds(30)).until(() -> terminal.toString(StandardCharsets.UTF_8)
                .contains("server-says-hello\n"));
        // A log line while the view is on, through logback's console appender as any would go.
        LoggerFactory.getLogger(LiveConsoleStdioTest.class).warn("a warning while the view is on");

        client.close(); // the input ends: the proxy shuts cat down
        assertThat(proxy.exitCode().get(30, TimeUnit.SECONDS)).isZero();
        proxy.close();
        proxy = null;
        live.close();
        assertThat(System.err).isSameAs(originalErr);

        assertThat(stdout.toString(StandardCharsets.UTF_8)).isEqualTo(String.join("\n", sent) + "\n");

        String screen = terminal.toString(StandardCharsets.UTF_8);
        String up = "\r\u001b[";
        // The server's line and the warning came whole, each followed at once by the block drawn again.
        assertThat(screen).containsPattern("\u001b\\[Jserver-says-hello\nmcp-chaos  up ");
        assertThat(screen).containsPattern(
                "\u001b\\[J[0-9:.]+ WARN  \\[[^]]+\\] [\\w.]+ - a warning while the view is on\nmcp-chaos  up ");
        // The last block, left on screen with the cursor on the line below it: the final numbers.
        String last = screen.substring(screen.lastIndexOf("\u001b[J") + 3);
        assertThat(screen).endsWith(last);
        assertThat(last).startsWith("mcp-chaos  up ").contains("  seed 7  faults on  sessions 0\n")
                .doesNotContain(up).endsWith("\n")
                .contains("  c->s         4 msgs ", "  s->c         4 msgs ")
                .containsPattern("\n    slow   latency  3/3\n    never  drop     0/0\n")
                .containsPattern("(\n    \\+\\d+\\.\\ds c->s rule 'slow' latency tools/call search){3}\n");
    }
}
