package dev.mcpchaos.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.cli.Main;
import dev.mcpchaos.server.drill.Catalogue;
import dev.mcpchaos.server.drill.Drill;
import dev.mcpchaos.server.drill.Era;
import dev.mcpchaos.server.drill.Scenario;
import dev.mcpchaos.server.it.drill.JavaSdkDrillClient;
import dev.mcpchaos.server.it.drill.JavaSdkModernDrillClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code mcp-chaos drill} on real clients (issue #37, docs/drill.md "Real clients"): a typical
 * application on each SDK, run on every scenario the runner has, twice with one seed. What it checks
 * is what the drill promises whatever the client: the two scorecards give the same verdicts, and
 * nothing is {@code pass} unless the journal shows the scenario's fault firing. The real clients'
 * verdicts are what this reports (written to target/drill-scorecards/CLIENT.json and .txt), not
 * what it expects; the few it asserts are those read from the journal and believed right (see
 * {@link #VERIFIED}). Needs {@code npm ci} in test-peers.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class DrillRealClientsIT {

    /** Every scenario the runner runs by default. */
    private static final List<String> RUNNABLE = Catalogue.all().stream()
            .filter(s -> s.built() && s.appliesTo(Drill.TRANSPORT, Drill.ERA)).map(Scenario::name).toList();

    /** Every scenario the runner runs in the 2026-07-28 era ({@code --era 2026}, over HTTP). */
    private static final List<String> RUNNABLE_2026 = Catalogue.all().stream()
            .filter(s -> s.built() && s.appliesTo(Drill.TRANSPORT, Era.STATELESS)).map(Scenario::name).toList();

    /** The era a client is drilled in: {@code ts-sdk-2-2026} is the TypeScript SDK 2.4 speaking 2026-07-28. */
    private static String era(String client) {
        return client.endsWith("-2026") ? "2026" : "2025";
    }

    /**
     * Verdicts read from the journal evidence and believed right, by client. Both TypeScript SDKs
     * answer the 404 on their session by sending the next call on the same dead session (journal:
     * the call after the 404 carries the old Mcp-Session-Id, and no initialize follows), where the
     * transport section says the client MUST start a new session. The conformance suite's example
     * client never sends the lost tools/list again: it waits out the SDK's 60 s default and is
     * stopped by the drill's timeout. The Java SDK answers the 404 with an initialize on a new
     * session right after it (and fails the call that met the 404, which the application may send again).
     * The TypeScript SDK 2.4 in 2026-07-28 does not listen again after its listen stream is cut
     * (its listen() documents "No automatic re-listen", and the application adds none): the journal
     * has the one subscriptions/listen, cut at its acknowledgment, and none after it.
     * The TypeScript SDK 2.4 in 2026-07-28 never re-issues a call whose response stream broke (the
     * journal has no second tools/call of slow after the cut: the call times out, the next is echo),
     * which the changelog makes a MUST; and it cancels a call it gave up on by closing its stream
     * (the journal notes the close at its 2.5 s timeout, before the held answer, and no
     * notifications/cancelled).
     */
    private static final Map<String, Map<String, String>> VERIFIED = Map.of(
            "ts-sdk-2-2026", Map.of("stream-broken-reissue", "fail", "close-as-cancel", "pass", "listen-cut", "fail"),
            "ts-sdk-2", Map.of("session-404", "fail"),
            "ts-sdk-1", Map.of("session-404", "fail"),
            "java-sdk", Map.of("session-404", "pass"),
            "conformance-example", Map.of("request-dropped", "fail"));

    @TempDir
    Path dir;

    /** The client's command, without the URL the drill appends. */
    private static List<String> command(String client) throws Exception {
        Path clients = TestPeers.testPeersDir().resolve("drill").resolve("clients");
        return switch (client) {
            case "ts-sdk-2" -> List.of(TestPeers.node().toString(), clients.resolve("ts-app.mjs").toString(), "--sdk", "v2");
            case "ts-sdk-2-2026" -> List.of(TestPeers.node().toString(), clients.resolve("ts-app.mjs").toString(),
                    "--sdk", "v2", "--era", "2026");
            case "ts-sdk-1" -> List.of(TestPeers.node().toString(), clients.resolve("ts-app.mjs").toString(), "--sdk", "v1");
            case "conformance-example" -> List.of(TestPeers.node().toString(),
                    clients.resolve("conformance-example.mjs").toString());
            // A JVM per scenario: the flags cut its start-up, which a loaded machine stretches to seconds.
            case "java-sdk" -> List.of(TestPeers.java().toString(), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                    "-cp", System.getProperty("java.class.path"), JavaSdkDrillClient.class.getName());
            case "java-sdk-modern", "java-sdk-modern-2026" -> List.of(TestPeers.java().toString(), "-XX:TieredStopAtLevel=1",
                    "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                    JavaSdkModernDrillClient.class.getName());
            default -> throw new IllegalArgumentException(client);
        };
    }

    /** One run of the drill's command line; the scorecard as JSON and what it printed on stderr. */
    private record Run(JsonNode card, String stderr, int exit) {

        Map<String, String> verdicts() {
            Map<String, String> verdicts = new LinkedHashMap<>();
            card.get("scenarios").forEach(s -> verdicts.put(s.get("name").asText(), s.get("outcome").asText()));
            return verdicts;
        }
    }

    /**
     * The drill's timeout per scenario for the client. Each driver's requests time out after 2.5 s
     * and the late answer comes at 3 s, so a Node driver is done in a few seconds; the Java one
     * starts a JVM per scenario and then takes about 2 s to exit, which a loaded machine stretches
     * past 8 s; the conformance example client waits out the SDK's 60 s default where an answer
     * never comes, so the drill stops it, and a short timeout keeps that short.
     */
    private static String timeout(String client) {
        return switch (client) {
            case "java-sdk", "java-sdk-modern", "java-sdk-modern-2026" -> "20s";
            case "conformance-example" -> "8s";
            default -> "10s";
        };
    }

    private static Run drill(String client, Path json, String... scenarios) throws Exception {
        List<String> args = new ArrayList<>(List.of("drill", "--timeout", timeout(client), "--seed", "42",
                "--report-json", json.toString(), "--show-client-output", "--era", era(client)));
        for (String scenario : scenarios) {
            args.addAll(List.of("--scenario", scenario));
        }
        args.add("--");
        args.addAll(command(client));
        StringWriter err = new StringWriter();
        int exit = Main.run(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true),
                args.toArray(String[]::new));
        return new Run(new ObjectMapper().readTree(json.toFile()), err.toString(), exit);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"java-sdk", "ts-sdk-2", "ts-sdk-1", "conformance-example", "ts-sdk-2-2026"})
    void aRealClientsScorecardIsStableAndEveryPassIsBackedByItsFault(String client) throws Exception {
        // The two runs at once: each has its own demo server and proxy, and the wall time halves.
        CompletableFuture<Run> second = CompletableFuture.supplyAsync(() -> {
            try {
                return drill(client, dir.resolve(client + "-second.json"));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Run first = drill(client, dir.resolve(client + ".json"));
        Run again = second.get(240, TimeUnit.SECONDS);

        Path out = Path.of("target", "drill-scorecards");
        Files.createDirectories(out);
        Files.writeString(out.resolve(client + ".json"), first.card().toPrettyString() + "\n", StandardCharsets.UTF_8);
        Files.writeString(out.resolve(client + ".txt"), first.stderr(), StandardCharsets.UTF_8);

        String context = client + "\n" + first.stderr();
        assertThat(first.verdicts().keySet()).as(context)
                .containsExactlyElementsOf(era(client).equals("2026") ? RUNNABLE_2026 : RUNNABLE);
        assertThat(first.card().get("exit_code").asInt()).isEqualTo(first.exit());
        assertThat(again.verdicts()).as("the second run with the same seed\n" + again.stderr() + "\nthe first\n" + context)
                .isEqualTo(first.verdicts());
        // The scorecard's own rule: a pass names the journal line where its scenario's fault fired.
        for (JsonNode s : first.card().get("scenarios")) {
            if (!s.get("outcome").asText().equals("pass")) {
                continue;
            }
            List<String> rules = Catalogue.find(s.get("name").asText()).orElseThrow().ruleNames();
            List<String> evidence = new ArrayList<>();
            s.get("evidence").forEach(line -> evidence.add(line.asText()));
            assertThat(evidence).as(s.get("name").asText() + " passed: its fault must show in the evidence\n" + context)
                    .anySatisfy(line -> assertThat(rules).anySatisfy(rule -> assertThat(line).contains("(rule '" + rule + "')")));
        }
        assertThat(first.verdicts()).as(context).containsAllEntriesOf(VERIFIED.getOrDefault(client, Map.of()));
    }

    /**
     * The Java SDK 2.2.0's {@code modern} client speaks the 2026-07-28 revision only (its one
     * protocol version; no initialize, no fall-back to a server of the 2025 revisions), and the
     * drill's 2025 era cannot grade it: its first request fails against the demo server there.
     * What it printed and its scorecard go to target/drill-scorecards as evidence; the test
     * below drills it in the 2026 era.
     */
    @Test
    void theJavaSdksModernClientCannotSpeakThe2025EraTheDrillServes() throws Exception {
        Run run = drill("java-sdk-modern", dir.resolve("java-sdk-modern.json"), "answer-lost", "error-vs-iserror");
        Path out = Path.of("target", "drill-scorecards");
        Files.createDirectories(out);
        Files.writeString(out.resolve("java-sdk-modern.txt"), run.stderr(), StandardCharsets.UTF_8);
        assertThat(run.stderr()).as("the modern client's list against the 2025 demo server")
                .contains("[answer-lost] {\"step\":\"list\",\"error\":");
        assertThat(run.verdicts().values()).as(run.stderr()).doesNotContain("pass");
    }

    /**
     * The Java SDK 2.2.0's {@code modern} client in the drill's 2026 era, on the four scenarios
     * it can be graded on with the driver's steps (list, call slow, call echo): it gives up on a
     * lost answer and goes on, tells a JSON-RPC error from a tool's, answers input_required
     * rounds under new ids with the state echoed and stops by a bound of its own; and, a
     * finding, after a -32022 whose supported list holds 2025-11-25 only, its next request names
     * 2026-07-28 again (it speaks that version alone, and does not stop the application either).
     */
    @Test
    void theJavaSdksModernClientInThe2026Era() throws Exception {
        Run run = drill("java-sdk-modern-2026", dir.resolve("java-sdk-modern-2026.json"), "answer-lost",
                "error-vs-iserror", "input-required-loop", "version-negotiation");
        Path out = Path.of("target", "drill-scorecards");
        Files.createDirectories(out);
        Files.writeString(out.resolve("java-sdk-modern-2026.txt"), run.stderr(), StandardCharsets.UTF_8);
        assertThat(run.verdicts()).as(run.stderr()).isEqualTo(Map.of(
                "answer-lost", "pass", "error-vs-iserror", "pass", "input-required-loop", "pass",
                "version-negotiation", "fail"));
        for (JsonNode s : run.card().get("scenarios")) {
            if (s.get("outcome").asText().equals("pass")) {
                List<String> rules = Catalogue.find(s.get("name").asText()).orElseThrow().ruleNames();
                assertThat(s.get("evidence").toString()).as(s.get("name").asText() + ": its fault in the evidence")
                        .contains("(rule '" + rules.get(0) + "')");
            }
        }
    }
}
