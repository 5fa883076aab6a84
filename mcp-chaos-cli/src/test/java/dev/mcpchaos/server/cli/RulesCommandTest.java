package dev.mcpchaos.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.mcpchaos.server.testing.CatProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code mcp-chaos rules}: every subcommand, run in-process against a real stdio proxy (its server
 * is {@code cat}) with its control API on a free loopback port.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RulesCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TWO_RULES = """
            rules:
              - name: drop-x
                match: {direction: client_to_server, tool: x}
                fault: {type: drop}
              - name: slow-y
                enabled: false
                match: {direction: client_to_server, method: tools/call, tool: y}
                probability: 0.5
                after: 2
                times: 3
                fault: {type: latency, latency: 1s}
            """;

    @TempDir
    Path dir;
    private CatProxy cat;

    @AfterEach
    void close() {
        if (cat != null) {
            cat.close();
        }
    }

    /** What one run of the command line printed, and its exit code. */
    private record Run(int code, String out, String err) {
        JsonNode json() throws IOException {
            return JSON.readTree(out);
        }
    }

    /** {@code mcp-chaos ARGS...}, with output and errors captured. */
    private static Run main(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Run(code, out.toString(), err.toString());
    }

    /** {@code mcp-chaos rules ARGS... --control URL} against this test's proxy. */
    private Run rules(String... args) {
        List<String> all = new ArrayList<>();
        all.add("rules");
        all.addAll(Arrays.asList(args));
        all.add("--control");
        all.add(cat.url());
        return main(all.toArray(String[]::new));
    }

    /** The same with {@code stdin} as standard input. */
    private Run rulesWithStdin(String stdin, String... args) {
        InputStream saved = System.in;
        System.setIn(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
        try {
            return rules(args);
        } finally {
            System.setIn(saved);
        }
    }

    /** A proxy whose server is cat, with these rules (YAML; null for none) and token (null for none), seed 7. */
    private CatProxy start(String rules, String token) throws Exception {
        cat = CatProxy.withControl(rules, token);
        return cat;
    }

    private Path file(String name, String text) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, text);
        return file;
    }

    private List<String> ruleNames() throws IOException {
        return rules("list", "--json").json().path("rules").findValuesAsText("name");
    }

    private JsonNode rule(String name) throws IOException {
        for (JsonNode rule : rules("list", "--json").json().path("rules")) {
            if (rule.path("name").asText().equals(name)) {
                return rule;
            }
        }
        throw new AssertionError("no rule " + name);
    }

    private long injected() throws IOException {
        return rules("status", "--json").json().path("faults_injected").asLong();
    }

    @Test
    void listShowsEachRuleWithWhatItMatchesWhenItFiresAndItsCounters() throws Exception {
        start(TWO_RULES, null);
        cat.send(CatProxy.call(1, "x"));
        cat.send(CatProxy.call(2, "y"));
        await().until(() -> cat.received.size() == 1 && injected() == 1);

        Run list = rules("list");
        assertThat(list.code()).isZero();
        assertThat(list.out()).isEqualTo("""
                NAME    ENABLED  FAULT    MATCH                                                WHEN                   MATCHED  INJECTED
                drop-x  yes      drop     direction=client_to_server tool=x                    -                      1        1
                slow-y  no       latency  direction=client_to_server method=tools/call tool=y  p=0.5 after 2 times 3  0        0
                """);
        assertThat(list.err()).isEmpty();

        Run json = rules("list", "--json");
        assertThat(json.code()).isZero();
        assertThat(json.json().path("rules").findValuesAsText("name")).containsExactly("drop-x", "slow-y");
        assertThat(json.json().path("rules").get(1).path("times").asInt()).isEqualTo(3);
    }

    @Test
    void listSaysSoWhenThereAreNoRulesAndWhenFaultsAreOff() throws Exception {
        start(null, null);
        assertThat(rules("list").out()).isEqualTo("no rules (add one with: mcp-chaos rules add FILE)\n");
        assertThat(rules("list", "--json").out()).isEqualTo("{\"rules\":[]}\n");
        assertThat(rules("off").code()).isZero();
        assertThat(rules("list").out()).startsWith("faults are OFF (the panic switch): no rule injects anything "
                + "until 'mcp-chaos rules on'\n");
    }

    @Test
    void addTakesOneRuleFromAFileOrStdin() throws Exception {
        start(null, null);
        Path yaml = file("drop-x.yaml", "name: drop-x\nmatch: {direction: client_to_server, tool: x}\nfault: {type: drop}\n");
        Run added = rules("add", yaml.toString());
        assertThat(added.code()).isZero();
        assertThat(added.out()).isEqualTo("added rule 'drop-x' (drop)\n");

        Run fromStdin = rulesWithStdin("{\"name\": \"dup-y\", \"match\": {\"direction\": \"client_to_server\", "
                + "\"tool\": \"y\"}, \"fault\": {\"type\": \"duplicate\"}}", "add", "-");
        assertThat(fromStdin.code()).isZero();
        assertThat(fromStdin.out()).isEqualTo("added rule 'dup-y' (duplicate)\n");
        assertThat(ruleNames()).containsExactly("drop-x", "dup-y");

        // The rules are in force: x is dropped, y comes back twice.
        cat.send(CatProxy.call(1, "x"));
        cat.send(CatProxy.call(2, "y"));
        cat.send(CatProxy.call(3, "z"));
        await().until(() -> cat.received.size() == 3);
        assertThat(cat.received).containsExactly(CatProxy.call(2, "y"), CatProxy.call(2, "y"),
                CatProxy.call(3, "z"));

        Run taken = rules("add", yaml.toString());
        assertThat(taken.code()).isEqualTo(1);
        assertThat(taken.err()).startsWith("mcp-chaos: POST /rules: rule 'drop-x': a rule with this name exists");
        assertThat(taken.out()).isEmpty();
    }

    @Test
    void addTakesARuleFileRuleByRuleAndStopsAtTheFirstRefusal() throws Exception {
        start("rules:\n  - {name: b, fault: {type: drop}, enabled: false}\n", null);
        Path file = file("three.yaml", """
                seed: 99
                rules:
                  - {name: a, fault: {type: drop}, enabled: false}
                  - {name: b, fault: {type: duplicate}}
                  - {name: c, fault: {type: drop}, enabled: false}
                """);
        Run run = rules("add", file.toString());
        assertThat(run.code()).isEqualTo(1);
        assertThat(run.out()).isEqualTo("added rule 'a' (drop)\n");
        assertThat(run.err()).isEqualTo("mcp-chaos: note: the seed in " + file + " is ignored: a running proxy keeps "
                + "its own ('mcp-chaos rules status' shows it)\n"
                + "mcp-chaos: POST /rules: rule 'b': a rule with this name exists (expected: a new name; PATCH or "
                + "DELETE /rules/b to change the one there)\n"
                + "mcp-chaos: stopped at rule 'b' (2 of 3); added: a; not sent: c\n");
        assertThat(ruleNames()).containsExactly("b", "a");

        Run rest = rules("add", file("rest.yaml", "rules:\n  - {name: c, fault: {type: drop}}\n  - {name: d, "
                + "fault: {type: drop}}\n").toString());
        assertThat(rest.code()).isZero();
        assertThat(rest.out()).isEqualTo("added rule 'c' (drop)\nadded rule 'd' (drop)\n");
        assertThat(rest.err()).isEmpty();
        assertThat(ruleNames()).containsExactly("b", "a", "c", "d");
    }

    @Test
    void aBadRuleIsRefusedWithTheFieldAndNothingChanges() throws Exception {
        start(TWO_RULES, null);
        String before = rules("list", "--json").out();

        Run one = rules("add", file("slow.yaml", "name: slow\nfault: {type: latency, latency: -5ms}\n").toString());
        assertThat(one.code()).isEqualTo(1);
        assertThat(one.err()).isEqualTo("mcp-chaos: POST /rules: rule 'slow': fault.latency: '-5ms' "
                + "(expected: a duration >= 0, such as 250ms)\n");
        assertThat(one.out()).isEmpty();

        // A rule file is checked whole before anything is sent: its first rule is not added either.
        Path file = file("two.yaml", "rules:\n  - {name: fine, fault: {type: drop}}\n"
                + "  - {name: odd, probability: 1.5, fault: {type: drop}}\n");
        Run many = rules("add", file.toString());
        assertThat(many.code()).isEqualTo(1);
        assertThat(many.err()).isEqualTo("mcp-chaos: " + file + ": rule 'odd': probability: 1.5 "
                + "(expected: a number from 0 to 1, such as 0.3)\n");

        Run replace = rules("replace", file.toString());
        assertThat(replace.code()).isEqualTo(1);
        assertThat(replace.err()).isEqualTo("mcp-chaos: PUT /rules: rule 'odd': probability: 1.5 "
                + "(expected: a number from 0 to 1, such as 0.3)\n");

        Run missing = rules("add", dir.resolve("nothing.yaml").toString());
        assertThat(missing.code()).isEqualTo(1);
        assertThat(missing.err()).isEqualTo("mcp-chaos: " + dir.resolve("nothing.yaml") + ": no such file\n");

        assertThat(rules("list", "--json").out()).isEqualTo(before);
    }

    @Test
    void rmEnableAndDisableGoNameByNameAndStopAtAnUnknownOne() throws Exception {
        start(TWO_RULES, null);
        Run enable = rules("enable", "slow-y");
        assertThat(enable.code()).isZero();
        assertThat(enable.out()).isEqualTo("enabled rule 'slow-y'\n");
        assertThat(rule("slow-y").path("enabled").asBoolean(false)).isTrue();

        Run disable = rules("disable", "drop-x", "nope", "slow-y");
        assertThat(disable.code()).isEqualTo(1);
        assertThat(disable.out()).isEqualTo("disabled rule 'drop-x'\n");
        assertThat(disable.err()).isEqualTo("mcp-chaos: rule 'nope': no rule has this name\n"
                + "mcp-chaos: stopped at 'nope'; done: drop-x; not sent: slow-y\n");
        assertThat(rule("drop-x").path("enabled").asBoolean(true)).isFalse();
        assertThat(rule("slow-y").path("enabled").asBoolean(false)).isTrue();

        // drop-x is off: x now passes.
        cat.send(CatProxy.call(1, "x"));
        await().until(() -> cat.received.size() == 1);

        Run unknown = rules("rm", "nope");
        assertThat(unknown.code()).isEqualTo(1);
        assertThat(unknown.err()).isEqualTo("mcp-chaos: rule 'nope': no rule has this name\n");

        Run rm = rules("rm", "drop-x", "slow-y");
        assertThat(rm.code()).isZero();
        assertThat(rm.out()).isEqualTo("removed rule 'drop-x'\nremoved rule 'slow-y'\n");
        assertThat(ruleNames()).isEmpty();
    }

    @Test
    void setPatchesKeysWithTypedValues() throws Exception {
        start(TWO_RULES, null);
        Run set = rules("set", "slow-y", "probability=0.2", "times=null", "duration=30s", "fault.latency=2s",
                "enabled=true", "match.tool=search*");
        assertThat(set.code()).isZero();
        assertThat(set.err()).isEmpty();
        assertThat(set.out()).startsWith("changed rule 'slow-y': {");
        JsonNode rule = rule("slow-y");
        assertThat(set.out()).isEqualTo("changed rule 'slow-y': " + rule + "\n");
        assertThat(rule.path("probability").isNumber()).isTrue();
        assertThat(rule.path("probability").asDouble()).isEqualTo(0.2);
        assertThat(rule.has("times")).isFalse();
        assertThat(rule.path("duration").asText()).isEqualTo("30s");
        assertThat(rule.path("enabled").isBoolean()).isTrue();
        assertThat(rule.path("fault").path("type").asText()).isEqualTo("latency");
        assertThat(rule.path("fault").path("latency").asText()).isEqualTo("2s");
        assertThat(rule.path("match").path("tool").asText()).isEqualTo("search*");
        assertThat(rule.path("match").path("method").asText()).isEqualTo("tools/call");

        Run refused = rules("set", "slow-y", "probability=1.5");
        assertThat(refused.code()).isEqualTo(1);
        assertThat(refused.err()).isEqualTo("mcp-chaos: PATCH /rules/slow-y: rule 'slow-y': probability: 1.5 "
                + "(expected: a number from 0 to 1, such as 0.3)\n");
        assertThat(rule("slow-y")).isEqualTo(rule);

        Run unknown = rules("set", "nope", "times=1");
        assertThat(unknown.code()).isEqualTo(1);
        assertThat(unknown.err()).isEqualTo("mcp-chaos: rule 'nope': no rule has this name\n");

        Run noValue = rules("set", "slow-y", "times");
        assertThat(noValue.code()).isEqualTo(2);
        assertThat(noValue.err()).startsWith("KEY=VALUE: 'times' (expected: such as probability=0.2, times=3, "
                + "fault.latency=2s, or times=null to remove a key)\n");
        assertThat(rules("set", "slow-y", "fault=x", "fault.latency=1s").code()).isEqualTo(2);
    }

    @Test
    void replacePutsAWholeRuleFileFromAFileOrStdin() throws Exception {
        start(TWO_RULES, null);
        Run replaced = rules("replace", file("new.yaml", "rules:\n  - {name: p, fault: {type: drop}, enabled: false}\n"
                + "  - {name: q, fault: {type: drop}, enabled: false}\n").toString());
        assertThat(replaced.code()).isZero();
        assertThat(replaced.out()).isEqualTo("replaced the rules: 2 in force: p, q\n");
        assertThat(ruleNames()).containsExactly("p", "q");

        Run emptied = rulesWithStdin("rules: []\n", "replace", "-");
        assertThat(emptied.code()).isZero();
        assertThat(emptied.out()).isEqualTo("replaced the rules: 0 in force\n");
        assertThat(ruleNames()).isEmpty();
    }

    @Test
    void offAndOnAreThePanicSwitchAndStatusShowsIt() throws Exception {
        start(TWO_RULES, null);
        Run off = rules("off");
        assertThat(off.code()).isZero();
        assertThat(off.out()).isEqualTo("faults off: no rule injects anything until 'mcp-chaos rules on'\n");
        assertThat(rules("off").out()).isEqualTo("faults were already off\n");
        cat.send(CatProxy.call(1, "x"));
        await().until(() -> cat.received.size() == 1);

        Run status = rules("status");
        assertThat(status.code()).isZero();
        assertThat(status.out()).matches("""
                control:    http://127\\.0\\.0\\.1:\\d+
                transport:  stdio
                seed:       7
                uptime:     \\d+\\.\\ds
                faults:     OFF \\(the panic switch; 'mcp-chaos rules on' turns them back on\\)
                sessions:   1 active
                messages:   1 client to server, 1 server to client
                injected:   0
                rules:      2 \\(1 enabled\\)
                """);

        Run on = rules("on");
        assertThat(on.code()).isZero();
        assertThat(on.out()).isEqualTo("faults on\n");
        assertThat(rules("on").out()).isEqualTo("faults were already on\n");
        cat.send(CatProxy.call(2, "x"));
        cat.send(CatProxy.call(3, "z"));
        await().until(() -> cat.received.size() == 2);
        assertThat(cat.received).containsExactly(CatProxy.call(1, "x"), CatProxy.call(3, "z"));
        assertThat(rules("status").out()).contains("faults:     on\n").contains("injected:   1\n");
        assertThat(rules("status", "--json").json().path("faults_injected").asLong()).isEqualTo(1);
    }

    @Test
    void eventsArePrintedAsJsonLinesFromASequenceNumber() throws Exception {
        start(TWO_RULES, null);
        cat.send(CatProxy.call(1, "x"));
        await().until(() -> injected() == 1);

        Run all = rules("events");
        assertThat(all.code()).isZero();
        List<JsonNode> events = new ArrayList<>();
        for (String line : all.out().split("\n")) {
            events.add(JSON.readTree(line));
        }
        assertThat(events).extracting(e -> e.path("event").asText()).containsExactly("session_started", "fault");
        assertThat(events.get(1).path("rule").asText()).isEqualTo("drop-x");

        Run since = rules("events", "--since", "1");
        assertThat(since.out().split("\n")).hasSize(1);
        assertThat(JSON.readTree(since.out()).path("seq").asLong()).isEqualTo(2);
        assertThat(rules("events", "--since", "2").out()).isEmpty();

        assertThat(rules("events", "--for", "1s").code()).isEqualTo(2);
        assertThat(rules("events", "--follow", "--for", "soon").code()).isEqualTo(2);
    }

    @Test
    void eventsFollowPrintsNewEventsUntilItsTimeIsUp() throws Exception {
        start(TWO_RULES, null);
        AtomicInteger code = new AtomicInteger(-1);
        StringWriter out = new StringWriter();
        Thread follower = new Thread(() -> code.set(Main.run(new PrintWriter(out, true), new PrintWriter(new StringWriter()),
                "rules", "events", "--follow", "--for", "4s", "--control", cat.url())));
        follower.start();
        await().until(() -> out.toString().contains("\"session_started\""));

        cat.send(CatProxy.call(1, "x"));
        cat.send(CatProxy.call(2, "x"));
        await().until(() -> out.toString().split("\"event\":\"fault\"", -1).length == 3);
        follower.join(30_000);
        assertThat(follower.isAlive()).isFalse();
        assertThat(code.get()).isZero();
        assertThat(out.toString().split("\n")).hasSize(3);
    }

    @Test
    void aTokenIsSentWhenGivenAndItsAbsenceExplained() throws Exception {
        assumeThat(System.getenv(ChaosOptions.TOKEN_VARIABLE)).as("the token variable is not set here").isNull();
        start(TWO_RULES, "t0ken-sEcret");

        Run none = rules("list");
        assertThat(none.code()).isEqualTo(1);
        assertThat(none.err()).isEqualTo("mcp-chaos: GET /rules: refused (no Authorization header; expected: "
                + "Authorization: Bearer <the proxy's control token>); give the proxy's control token with --token or "
                + "the MCP_CHAOS_CONTROL_TOKEN environment variable\n");
        assertThat(none.out()).isEmpty();

        Run wrong = rules("off", "--token", "guess-w0rk");
        assertThat(wrong.code()).isEqualTo(1);
        assertThat(wrong.err()).startsWith("mcp-chaos: POST /faults/disable: refused (a wrong bearer token; ")
                .doesNotContain("guess-w0rk");

        Run right = rules("list", "--token", "t0ken-sEcret");
        assertThat(right.code()).isZero();
        assertThat(right.out()).contains("drop-x");
        assertThat(main("rules", "--token", "t0ken-sEcret", "status", "--control", cat.url()).out())
                .contains("faults:     on\n");
    }

    @Test
    void anUnreachableControlApiIsSaidSo() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        Run run = main("rules", "list", "--control", "127.0.0.1:" + port);
        assertThat(run.code()).isEqualTo(1);
        assertThat(run.err()).startsWith("mcp-chaos: cannot reach the control API at http://127.0.0.1:" + port + ": ")
                .endsWith(" (is the proxy running, with its control API on this address?)\n");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void somethingElseAtTheAddressIsSaidSo() throws Exception {
        HttpServer other = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        other.createContext("/", exchange -> {
            byte[] body = (exchange.getRequestURI().getPath().equals("/status") ? "hello" : "<html>nope</html>")
                    .getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(exchange.getRequestURI().getPath().equals("/status") ? 200 : 404, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        other.start();
        try {
            String url = "http://127.0.0.1:" + other.getAddress().getPort();
            Run notFound = main("rules", "list", "--control", url);
            assertThat(notFound.code()).isEqualTo(1);
            assertThat(notFound.err()).isEqualTo("mcp-chaos: GET " + url + "/rules: HTTP 404: <html>nope</html>\n");
            Run notJson = main("rules", "status", "--control", url);
            assertThat(notJson.code()).isEqualTo(1);
            assertThat(notJson.err()).isEqualTo("mcp-chaos: GET " + url + "/status: the answer is not JSON "
                    + "(expected: the control API of mcp-chaos; is --control pointing at it?)\n");
        } finally {
            other.stop(0);
        }
    }

    @Test
    void theControlUrlMayBeAUrlOrHostPortBeforeOrAfterTheSubcommand() throws Exception {
        start(null, null);
        String hostPort = "127.0.0.1:" + cat.proxy.controlAddress().getPort();
        assertThat(main("rules", "--control", hostPort, "status").code()).isZero();
        assertThat(main("rules", "status", "--control", cat.url() + "/").code()).isZero();

        Run badScheme = main("rules", "list", "--control", "ftp://127.0.0.1:1");
        assertThat(badScheme.code()).isEqualTo(2);
        assertThat(badScheme.err()).startsWith("Invalid value for option '--control': 'ftp://127.0.0.1:1': scheme ftp "
                + "(expected: http or https)");
        Run noPort = main("rules", "list", "--control", "localhost");
        assertThat(noPort.code()).isEqualTo(2);
        assertThat(noPort.err()).startsWith("Invalid value for option '--control': 'localhost': no port");
    }

    @Test
    void usageErrorsAndHelp() {
        Run bare = main("rules");
        assertThat(bare.code()).isEqualTo(2);
        assertThat(bare.err()).startsWith("a subcommand is needed: list, add, rm, enable, disable, set, replace, off, "
                + "on, status or events\n");
        assertThat(main("rules", "frobnicate").code()).isEqualTo(2);
        assertThat(main("rules", "rm").code()).isEqualTo(2);

        Run help = main("rules", "--help");
        assertThat(help.code()).isZero();
        for (String sub : List.of("list", "add", "rm,", "enable", "disable", "set", "replace", "off", "on", "status",
                "events")) {
            assertThat(help.out()).contains("  " + sub + " ");
        }
        assertThat(main("rules", "set", "--help").out()).contains("fault.latency=2s");
    }
}
