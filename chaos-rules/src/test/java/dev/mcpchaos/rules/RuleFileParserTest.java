package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.fault.FaultRegistry;
import dev.mcpchaos.rules.fault.LatencyFault;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The rule file format: what it accepts, and the exact message for everything it refuses. */
class RuleFileParserTest {

    private static final String ISSUE_EXAMPLE = String.join("\n",
            "seed: 42                       # optional; --seed on the command line overrides it",
            "rules:",
            "  - name: slow-search          # required, unique",
            "    enabled: true              # default true",
            "    match:",
            "      direction: client_to_server",
            "      transport: any",
            "      kind: request",
            "      method: \"tools/call\"",
            "      tool: \"search*\"",
            "      id: 7",
            "    probability: 0.3",
            "    after: 2",
            "    times: 10",
            "    start: 5s",
            "    duration: 60s",
            "    fault:",
            "      type: latency",
            "      latency: 500ms",
            "      jitter: 100ms",
            "");

    @Test
    void readsTheExampleOfTheIssue() {
        RuleSet set = RuleSet.parse(ISSUE_EXAMPLE, "rules.yaml");

        assertThat(set.source()).isEqualTo("rules.yaml");
        assertThat(set.seed()).hasValue(42);
        assertThat(set.rules()).hasSize(1);
        Rule rule = set.rules().get(0);
        assertThat(rule.name()).isEqualTo("slow-search");
        assertThat(rule.enabled()).isTrue();
        assertThat(rule.match().direction()).isEqualTo(Direction.CLIENT_TO_SERVER);
        assertThat(rule.match().transport()).isNull();
        assertThat(rule.match().kind()).isEqualTo(MessageKind.REQUEST);
        assertThat(rule.match().method().pattern()).isEqualTo("tools/call");
        assertThat(rule.match().tool().pattern()).isEqualTo("search*");
        assertThat(rule.match().id()).isEqualTo(7L);
        assertThat(rule.probability()).isEqualTo(0.3);
        assertThat(rule.after()).isEqualTo(2);
        assertThat(rule.times()).hasValue(10);
        assertThat(rule.start()).isEqualTo(Duration.ofSeconds(5));
        assertThat(rule.duration()).hasValue(Duration.ofSeconds(60));
        assertThat(rule.fault()).isInstanceOf(LatencyFault.class);
        LatencyFault.Config config = ((LatencyFault) rule.fault()).config();
        assertThat(config.latency()).isEqualTo(Duration.ofMillis(500));
        assertThat(config.jitter()).isEqualTo(Duration.ofMillis(100));
        assertThat(config.distribution()).isEqualTo(LatencyFault.Distribution.UNIFORM);
    }

    @Test
    void readsTheSameStructureAsJson() {
        String json = "{\"seed\": 42, \"rules\": [{\"name\": \"slow-search\", \"enabled\": true,"
                + " \"match\": {\"direction\": \"client_to_server\", \"transport\": \"any\", \"kind\": \"request\","
                + " \"method\": \"tools/call\", \"tool\": \"search*\", \"id\": 7},"
                + " \"probability\": 0.3, \"after\": 2, \"times\": 10, \"start\": \"5s\", \"duration\": \"60s\","
                + " \"fault\": {\"type\": \"latency\", \"latency\": \"500ms\", \"jitter\": \"100ms\"}}]}";
        Rule fromJson = RuleSet.parse(json, "rules.json").rules().get(0);
        Rule fromYaml = RuleSet.parse(ISSUE_EXAMPLE, "rules.yaml").rules().get(0);

        assertThat(fromJson.toString()).isEqualTo(fromYaml.toString());
        assertThat(((LatencyFault) fromJson.fault()).config()).isEqualTo(((LatencyFault) fromYaml.fault()).config());
        assertThat(fromJson.times()).isEqualTo(fromYaml.times());
        assertThat(fromJson.start()).isEqualTo(fromYaml.start());
    }

    @Test
    void appliesDefaults() {
        RuleSet set = RuleSet.parse("rules:\n  - name: d\n    fault: {type: drop}\n", "r.yaml");
        Rule rule = set.rules().get(0);
        assertThat(set.seed()).isEmpty();
        assertThat(rule.enabled()).isTrue();
        assertThat(rule.probability()).isEqualTo(1.0);
        assertThat(rule.after()).isZero();
        assertThat(rule.times()).isEmpty();
        assertThat(rule.start()).isZero();
        assertThat(rule.duration()).isEmpty();
        assertThat(rule.match().direction()).isNull();
        assertThat(rule.match().kind()).isNull();
    }

    @Test
    void keepsDisabledRulesAndStringIds() {
        RuleSet set = RuleSet.parse("rules:\n  - name: disabled\n    enabled: false\n    match: {id: abc-1}\n"
                + "    fault: {type: drop}\n  - name: empty\n    fault: {type: blackhole}\nseed: -3\n", "r.yaml");
        assertThat(set.rules()).extracting(Rule::name).containsExactly("disabled", "empty");
        assertThat(set.rules().get(0).enabled()).isFalse();
        assertThat(set.rules().get(0).match().id()).isEqualTo("abc-1");
        assertThat(set.seed()).hasValue(-3);
    }

    @Test
    void anEmptyListOfRulesIsAllowed() {
        assertThat(RuleSet.parse("rules: []\n", "r.yaml").rules()).isEmpty();
    }

    @Test
    void theMessageOfTheBrief() {
        String yaml = "rules:\n  - name: slow-search\n    fault:\n      type: latency\n      latency: -5ms\n";
        assertThatThrownBy(() -> RuleSet.parse(yaml, "rules.yaml"))
                .isInstanceOf(RuleFileException.class)
                .hasMessage("rules.yaml: rule 'slow-search': fault.latency: '-5ms' (expected: a duration >= 0, such as 250ms)")
                .satisfies(e -> {
                    RuleFileException rfe = (RuleFileException) e;
                    assertThat(rfe.source()).isEqualTo("rules.yaml");
                    assertThat(rfe.rule()).isEqualTo("rule 'slow-search'");
                    assertThat(rfe.problem()).startsWith("fault.latency: '-5ms'");
                });
    }

    /** Found by RuleFileParserFuzzTest: the second document's rules were dropped without a word. */
    @Test
    void aSecondDocumentOrValueIsRefusedNotIgnored() {
        String second = "rules: []\n---\nrules:\n  - name: lost\n    fault: {type: drop}\n";
        assertThatThrownBy(() -> RuleSet.parse(second, "rules.yaml"))
                .isInstanceOf(RuleFileException.class)
                .hasMessage("rules.yaml: line 3, column 1: another document after the first (expected: only a mapping"
                        + " with seed and rules; put every rule in one list)");
        assertThatThrownBy(() -> RuleSet.parse("{\"rules\":[]} {\"rules\":[{\"name\":\"lost\",\"fault\":"
                + "{\"type\":\"drop\"}}]}", "rules.json"))
                .isInstanceOf(RuleFileException.class)
                .hasMessage("rules.json: line 1, column 14: another value after the first (expected: only a mapping"
                        + " with seed and rules)");
        assertThatThrownBy(() -> RuleSet.parse("{\"rules\":[]} x", "rules.json"))
                .isInstanceOf(RuleFileException.class)
                .hasMessageStartingWith("rules.json: line 1, column 14: not valid YAML/JSON: Unrecognized token 'x'");
        assertThatThrownBy(() -> RuleSet.parseRule("name: a\nfault: {type: drop}\n---\nname: b\n", "rule.yaml"))
                .isInstanceOf(RuleFileException.class)
                .hasMessageStartingWith("rule.yaml: line 4, column 1: another document after the first");
    }

    @Test
    void emptyDocumentsAroundTheRulesAreNothing() {
        String yaml = "---\nrules:\n  - name: kept\n    fault: {type: drop}\n---\n...\n";
        assertThat(RuleSet.parse(yaml, "rules.yaml").rules()).extracting(Rule::name).containsExactly("kept");
        assertThat(RuleSet.parse("{\"rules\":[{\"name\":\"kept\",\"fault\":{\"type\":\"drop\"}}]}\n\n",
                "rules.json").rules()).extracting(Rule::name).containsExactly("kept");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            empty file               | ""                                           | test.yaml: empty (expected: a mapping with seed and rules)
            top level is a list      | "- a"                                        | test.yaml: top level: ["a"] (expected: a mapping with seed and rules)
            unknown top-level key    | "rulez: []"                                  | test.yaml: rulez: unknown key (expected: one of seed, rules)
            seed is text             | "seed: abc\\nrules: []"                       | test.yaml: seed: 'abc' (expected: a whole number, such as 42)
            seed is a fraction       | "seed: 1.5\\nrules: []"                       | test.yaml: seed: 1.5 (expected: a whole number, such as 42)
            rules missing            | "seed: 1"                                    | test.yaml: rules: missing (expected: a list of rules, each with a name and a fault)
            rules not a list         | "rules: {a: 1}"                              | test.yaml: rules: {"a":1} (expected: a list of rules, each with a name and a fault)
            rule not a mapping       | "rules: [5]"                                 | test.yaml: rules[0]: 5 (expected: a mapping with name, match and fault)
            name missing             | "rules: [{fault: {type: drop}}]"             | test.yaml: rules[0]: name: missing (expected: a unique name for the rule, such as slow-search)
            name blank               | "rules: [{name: ' ', fault: {type: drop}}]"  | test.yaml: rules[0]: name: ' ' (expected: a unique name for the rule, such as slow-search)
            name twice               | "rules: [{name: a, fault: {type: drop}}, {name: a, fault: {type: drop}}]" | test.yaml: rule 'a': name: 'a' (expected: a name no other rule has; rules[0] has it)
            unknown rule key         | "rules: [{name: a, probabilty: 1, fault: {type: drop}}]" | test.yaml: rule 'a': probabilty: unknown key (expected: one of name, enabled, match, probability, after, times, start, duration, fault)
            fault missing            | "rules: [{name: a}]"                         | test.yaml: rule 'a': fault: missing (expected: a mapping with a type, such as {type: latency, latency: 500ms})
            fault not a mapping      | "rules: [{name: a, fault: drop}]"            | test.yaml: rule 'a': fault: 'drop' (expected: a mapping with a type, such as {type: latency, latency: 500ms})
            fault type missing       | "rules: [{name: a, fault: {latency: 1s}}]"   | test.yaml: rule 'a': fault.type: missing (expected: one of {fault types})
            fault type unknown       | "rules: [{name: a, fault: {type: latncy}}]"  | test.yaml: rule 'a': fault.type: 'latncy' (expected: one of {fault types})
            fault parameter unknown  | "rules: [{name: a, fault: {type: latency, latncy: 1s}}]" | test.yaml: rule 'a': fault.latncy: unknown key (expected: a parameter of latency: one of latency, jitter, distribution)
            parameter for none       | "rules: [{name: a, fault: {type: drop, copies: 2}}]" | test.yaml: rule 'a': fault.copies: unknown key (expected: no parameter: drop takes none)
            fault parameter missing  | "rules: [{name: a, fault: {type: latency}}]" | test.yaml: rule 'a': fault.latency: missing (expected: a duration >= 0, such as 250ms)
            duration without unit    | "rules: [{name: a, fault: {type: latency, latency: 500}}]" | test.yaml: rule 'a': fault.latency: 500 (expected: a duration >= 0, such as 250ms)
            enabled not boolean      | "rules: [{name: a, enabled: yes please, fault: {type: drop}}]" | test.yaml: rule 'a': enabled: 'yes please' (expected: true or false)
            probability above 1      | "rules: [{name: a, probability: 1.5, fault: {type: drop}}]" | test.yaml: rule 'a': probability: 1.5 (expected: a number from 0 to 1, such as 0.3)
            probability as text      | "rules: [{name: a, probability: often, fault: {type: drop}}]" | test.yaml: rule 'a': probability: 'often' (expected: a number from 0 to 1, such as 0.3)
            after negative           | "rules: [{name: a, after: -1, fault: {type: drop}}]" | test.yaml: rule 'a': after: -1 (expected: a whole number >= 0)
            times zero               | "rules: [{name: a, times: 0, fault: {type: drop}}]" | test.yaml: rule 'a': times: 0 (expected: a whole number >= 1)
            times fraction           | "rules: [{name: a, times: 2.5, fault: {type: drop}}]" | test.yaml: rule 'a': times: 2.5 (expected: a whole number >= 1)
            start not a duration     | "rules: [{name: a, start: soon, fault: {type: drop}}]" | test.yaml: rule 'a': start: 'soon' (expected: a duration >= 0, such as 5s)
            duration zero            | "rules: [{name: a, duration: 0s, fault: {type: drop}}]" | test.yaml: rule 'a': duration: '0ms' (expected: a duration > 0, such as 60s)
            match not a mapping      | "rules: [{name: a, match: tools/call, fault: {type: drop}}]" | test.yaml: rule 'a': match: 'tools/call' (expected: a mapping, such as {method: tools/call})
            match key unknown        | "rules: [{name: a, match: {methd: x}, fault: {type: drop}}]" | test.yaml: rule 'a': match.methd: unknown key (expected: one of direction, transport, kind, method, tool, id, headers)
            direction unknown        | "rules: [{name: a, match: {direction: inbound}, fault: {type: drop}}]" | test.yaml: rule 'a': match.direction: 'inbound' (expected: one of client_to_server, server_to_client, any)
            transport unknown        | "rules: [{name: a, match: {transport: sse}, fault: {type: drop}}]" | test.yaml: rule 'a': match.transport: 'sse' (expected: one of stdio, http, any)
            kind unknown             | "rules: [{name: a, match: {kind: batch}, fault: {type: drop}}]" | test.yaml: rule 'a': match.kind: 'batch' (expected: one of request, response, notification, error, any)
            method empty             | "rules: [{name: a, match: {method: ''}, fault: {type: drop}}]" | test.yaml: rule 'a': match.method: '' (expected: a method name or glob, such as tools/call or notifications/*)
            tool not text            | "rules: [{name: a, match: {tool: 5}, fault: {type: drop}}]" | test.yaml: rule 'a': match.tool: 5 (expected: a tool name or glob, such as search*)
            id is a list             | "rules: [{name: a, match: {id: [1]}, fault: {type: drop}}]" | test.yaml: rule 'a': match.id: [1] (expected: a JSON-RPC id: a number or a string)
            id beyond a double       | "rules: [{name: a, match: {id: 1e999}, fault: {type: drop}}]" | test.yaml: rule 'a': match.id: Infinity (expected: a JSON-RPC id: a string, or a number from -1.7e308 to 1.7e308)
            id below a double        | "rules: [{name: a, match: {id: -1.5e400}, fault: {type: drop}}]" | test.yaml: rule 'a': match.id: -Infinity (expected: a JSON-RPC id: a string, or a number from -1.7e308 to 1.7e308)
            headers not a mapping    | "rules: [{name: a, match: {headers: x}, fault: {type: drop}}]" | test.yaml: rule 'a': match.headers: 'x' (expected: a mapping of header names to globs, such as {X-Tenant: blue*})
            header value not text    | "rules: [{name: a, match: {transport: http, headers: {X-A: [1]}}, fault: {type: drop}}]" | test.yaml: rule 'a': match.headers.X-A: [1] (expected: a glob, such as blue*)
            http fault on stdio rule | "rules: [{name: a, match: {transport: stdio}, fault: {type: http_status, status: 503}}]" | test.yaml: rule 'a': http_status: only applies to the http transport (the rule's match.transport is stdio)
            content type on stdio    | "rules: [{name: a, match: {transport: stdio}, fault: {type: invalid_content_type}}]" | test.yaml: rule 'a': invalid_content_type: only applies to the http transport (the rule's match.transport is stdio)
            session expiry on stdio  | "rules: [{name: a, match: {transport: stdio}, fault: {type: session_expire}}]" | test.yaml: rule 'a': session_expire: only applies to the http transport (the rule's match.transport is stdio)
            crash on an http rule    | "rules: [{name: a, match: {transport: http}, fault: {type: crash}}]" | test.yaml: rule 'a': crash: only applies to the stdio transport (the rule's match.transport is http)
            headers on a stdio rule  | "rules: [{name: a, match: {transport: stdio, headers: {X-A: b}}, fault: {type: drop}}]" | test.yaml: rule 'a': match.headers: only applies to the http transport (the rule's match.transport is stdio)
            """)
    void refuses(String what, String yaml, String message) {
        // The list of fault types is the registry's, so that adding a fault changes no message here.
        String expected = message.replace("{fault types}", String.join(", ", FaultRegistry.types()));
        assertThatThrownBy(() -> RuleSet.parse(yaml.replace("\\n", "\n"), "test.yaml"))
                .as(what)
                .isInstanceOf(RuleFileException.class)
                .hasMessage(expected);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            latency negative jitter      | "{type: latency, latency: 1s, jitter: -1ms}" | fault.jitter: '-1ms' (expected: a duration >= 0, such as 250ms)
            latency jitter when fixed    | "{type: latency, latency: 1s, jitter: 100ms, distribution: fixed}" | fault.jitter: '100ms' (expected: 0 with distribution fixed (use uniform, normal or lognormal))
            latency distribution unknown | "{type: latency, latency: 1s, distribution: pareto}" | fault.distribution: 'pareto' (expected: one of fixed, uniform, normal, lognormal)
            lognormal without median     | "{type: latency, latency: 0ms, jitter: 1s, distribution: lognormal}" | fault.latency: '0ms' (expected: a duration > 0 with distribution lognormal (its median))
            duplicate no copies          | "{type: duplicate, copies: 0}" | fault.copies: 0 (expected: a whole number from 1 to 1000)
            reorder without window/hold  | "{type: reorder}" | fault.window: missing (expected: window (a number of messages) or hold (a duration), or both)
            reorder window of one        | "{type: reorder, window: 1}" | fault.window: 1 (expected: a whole number from 2 to 1000)
            reorder hold zero            | "{type: reorder, hold: 0ms}" | fault.hold: '0ms' (expected: a duration > 0, such as 500ms)
            truncate both                | "{type: truncate, at: 10, fraction: 0.5}" | fault.fraction: given with at (expected: either at or fraction, not both)
            truncate fraction 1          | "{type: truncate, fraction: 1}" | fault.fraction: 1 (expected: a number between 0 and 1 (exclusive), such as 0.5)
            truncate at not a size       | "{type: truncate, at: ten}" | fault.at: 'ten' (expected: a size >= 0, such as 100B)
            corrupt mode unknown         | "{type: corrupt, mode: scramble}" | fault.mode: 'scramble' (expected: one of truncated_json, invalid_escape, unclosed_bracket, nan_literal, garbage, invalid_utf8)
            oversize without size        | "{type: oversize}" | fault.size: missing (expected: a size from 1B to 1GiB, such as 10MiB)
            oversize too big             | "{type: oversize, size: 2GiB}" | fault.size: 2147483648 (expected: a size from 1B to 1GiB, such as 10MiB)
            error code as text           | "{type: error, code: oops}" | fault.code: 'oops' (expected: a whole number from -2147483648 to 2147483647)
            error message not text       | "{type: error, message: [1]}" | fault.message: [1] (expected: a string)
            tool_error text not text     | "{type: tool_error, text: {a: 1}}" | fault.text: {"a":1} (expected: a string)
            disconnect side unknown      | "{type: disconnect, side: both}" | fault.side: 'both' (expected: one of client, server)
            throttle without rate        | "{type: throttle}" | fault.rate: missing (expected: rate, or chunk and interval)
            throttle rate not a size     | "{type: throttle, rate: fast}" | fault.rate: 'fast' (expected: a size per second, such as 1KiB or 1KiB/s)
            throttle chunk no interval   | "{type: throttle, chunk: 10B}" | fault.interval: missing (expected: a duration >= 0, such as 250ms)
            throttle rate and chunk      | "{type: throttle, rate: 1KiB, chunk: 1B}" | fault.rate: given with chunk/interval (expected: either rate, or chunk and interval)
            mutate without patch         | "{type: mutate}" | fault.patch: missing (expected: a list of JSON Patch operations, such as [{op: remove, path: /result/tools/0}])
            mutate empty patch           | "{type: mutate, patch: []}" | fault.patch: [] (expected: at least one operation)
            mutate op unknown            | "{type: mutate, patch: [{op: delete, path: /a}]}" | fault.patch[0].op: 'delete' (expected: one of add, remove, replace, move, copy, test)
            mutate path not a pointer    | "{type: mutate, patch: [{op: remove, path: result/tools}]}" | fault.patch[0].path: 'result/tools' (expected: a JSON Pointer, such as /result/tools/0 (or "" for the whole message))
            mutate value missing         | "{type: mutate, patch: [{op: add, path: /a}]}" | fault.patch[0].value: missing (expected: the value to add)
            mutate value not wanted      | "{type: mutate, patch: [{op: remove, path: /a, value: 1}]}" | fault.patch[0].value: 1 (expected: no value with op remove)
            mutate from missing          | "{type: mutate, patch: [{op: move, path: /a}]}" | fault.patch[0].from: missing (expected: a JSON Pointer, such as /result/tools/0 (or "" for the whole message))
            mutate from not wanted       | "{type: mutate, patch: [{op: add, path: /a, from: /b, value: 1}]}" | fault.patch[0].from: '/b' (expected: no from with op add (only move and copy take one))
            mutate op key unknown        | "{type: mutate, patch: [{op: remove, path: /a, where: x}]}" | fault.patch[0].where: unknown key (expected: one of op, path, from, value)
            mutate op not a mapping      | "{type: mutate, patch: [remove]}" | fault.patch[0]: 'remove' (expected: a mapping with op and path)
            id_mismatch id is a list     | "{type: id_mismatch, id: [1]}" | fault.id: [1] (expected: a number or a string)
            crash signal unknown         | "{type: crash, signal: HUP}" | fault.signal: 'HUP' (expected: one of term, kill)
            """)
    void refusesBadFaultParameters(String what, String fault, String problem) {
        String yaml = "rules:\n  - name: r\n    fault: " + fault + "\n";
        assertThatThrownBy(() -> RuleSet.parse(yaml, "f.yaml"))
                .as(what)
                .isInstanceOf(RuleFileException.class)
                .hasMessage("f.yaml: rule 'r': " + problem);
    }

    @Test
    void noiseIsOneLine() {
        assertThatThrownBy(() -> RuleSet.parse("rules:\n  - name: r\n    fault: {type: noise, text: \"a\\nb\"}\n",
                "f.yaml"))
                .hasMessage("f.yaml: rule 'r': fault.text: 'a\\nb' (expected: one line of text, not empty and without "
                        + "line breaks)");
    }

    @Test
    void yamlWordsThatAreBooleansAreNotNames() {
        // YAML 1.1 reads off/on/yes/no as booleans: the message shows what the parser saw.
        assertThatThrownBy(() -> RuleSet.parse("rules:\n  - name: off\n    fault: {type: drop}\n", "f.yaml"))
                .hasMessage("f.yaml: rules[0]: name: false (expected: a unique name for the rule, such as slow-search)");
    }

    @Test
    void httpStatusIsValidatedOnHttpRules() {
        assertThatThrownBy(() -> RuleSet.parse("rules:\n  - name: r\n    match: {transport: http}\n"
                + "    fault: {type: http_status, status: 99}\n", "f.yaml"))
                .hasMessage("f.yaml: rule 'r': fault.status: 99 (expected: a whole number from 100 to 599)");
        RuleSet ok = RuleSet.parse("rules:\n  - name: r\n    match: {transport: http}\n"
                + "    fault: {type: http_status, status: 503, headers: {Retry-After: 5}, body: busy}\n", "f.yaml");
        assertThat(ok.rules()).hasSize(1);
    }

    @Test
    void everyFaultTypeWithDefaultsOrMinimalParametersLoads() {
        String yaml = String.join("\n",
                "rules:",
                "  - {name: latency, fault: {type: latency, latency: 1ms}}",
                "  - {name: drop, fault: {type: drop}}",
                "  - {name: duplicate, fault: {type: duplicate}}",
                "  - {name: reorder, fault: {type: reorder, window: 2}}",
                "  - {name: truncate, fault: {type: truncate}}",
                "  - {name: corrupt, fault: {type: corrupt}}",
                "  - {name: oversize, fault: {type: oversize, size: 1KiB}}",
                "  - {name: error, fault: {type: error}}",
                "  - {name: tool_error, fault: {type: tool_error}}",
                "  - {name: http_status, match: {transport: http}, fault: {type: http_status, status: 500}}",
                "  - {name: invalid_content_type, match: {transport: http}, fault: {type: invalid_content_type}}",
                "  - {name: disconnect, fault: {type: disconnect}}",
                "  - {name: blackhole, fault: {type: blackhole}}",
                "  - {name: throttle, fault: {type: throttle, rate: 1KiB/s}}",
                "  - {name: noise, fault: {type: noise}}",
                "  - {name: mutate, fault: {type: mutate, patch: [{op: test, path: '', value: {}}]}}",
                "  - {name: id_mismatch, fault: {type: id_mismatch}}",
                "  - {name: session_expire, match: {transport: http}, fault: {type: session_expire}}",
                "  - {name: sse_retry, match: {transport: http}, fault: {type: sse_retry, retry: 3s}}",
                "  - {name: resume_gap, match: {transport: http}, fault: {type: resume_gap}}",
                "  - {name: resume_repeat, match: {transport: http}, fault: {type: resume_repeat}}",
                "  - {name: get_stream_drop, match: {transport: http}, fault: {type: get_stream_drop}}",
                "  - {name: priming_drop, match: {transport: http}, fault: {type: priming_drop}}",
                "  - {name: crash, fault: {type: crash, signal: TERM}}",
                "  - {name: input_required, fault: {type: input_required}}",
                "  - {name: header_mismatch, match: {transport: http}, fault: {type: header_mismatch}}",
                "");
        RuleSet set = RuleSet.parse(yaml, "all.yaml");
        assertThat(set.rules()).extracting(r -> r.fault().type()).containsExactlyElementsOf(FaultRegistry.types());
        assertThat(set.rules()).allSatisfy(r -> assertThat(r.name()).isEqualTo(r.fault().type()));
    }

    @Test
    void refusesHttpOnlyFaultsOnTheStdioProxyButNotRulesMeantForHttp() {
        RuleSet anyTransport = RuleSet.parse("rules:\n  - name: status-503\n    fault: {type: http_status, status: 503}\n",
                "rules.yaml");
        assertThatThrownBy(() -> anyTransport.checkTransport(TransportKind.STDIO))
                .isInstanceOf(RuleFileException.class)
                .hasMessage("rules.yaml: rule 'status-503': http_status: only applies to the http transport "
                        + "(this proxy runs the stdio transport)");
        assertThatThrownBy(() -> RuleEngine.builder(anyTransport).transport(TransportKind.STDIO).build())
                .hasMessageContaining("http_status: only applies to the http transport");

        RuleSet httpOnly = RuleSet.parse("rules:\n  - name: status-503\n    match: {transport: http}\n"
                + "    fault: {type: http_status, status: 503}\n", "rules.yaml");
        httpOnly.checkTransport(TransportKind.STDIO); // never matches on stdio: allowed in a shared file

        RuleSet crash = RuleSet.parse("rules:\n  - name: boom\n    fault: {type: crash}\n", "rules.yaml");
        assertThatThrownBy(() -> crash.checkTransport(TransportKind.HTTP))
                .hasMessage("rules.yaml: rule 'boom': crash: only applies to the stdio transport "
                        + "(this proxy runs the http transport)");
    }

    @Test
    void headerMatchesAreRefusedOffHttp() {
        RuleSet headers = RuleSet.parse("rules:\n  - name: blue\n    match: {headers: {X-Tenant: blue*}}\n"
                + "    fault: {type: drop}\n", "rules.yaml");
        assertThatThrownBy(() -> headers.checkTransport(TransportKind.STDIO))
                .hasMessage("rules.yaml: rule 'blue': match.headers: only applies to the http transport "
                        + "(this proxy runs the stdio transport)");
        headers.checkTransport(TransportKind.HTTP); // the http transport shows request headers
    }

    @Test
    void syntaxErrorsSayWhere() {
        assertThatThrownBy(() -> RuleSet.parse("rules:\n  - name: a\n   fault: [\n", "bad.yaml"))
                .isInstanceOf(RuleFileException.class)
                .hasMessageStartingWith("bad.yaml: line ")
                .hasMessageContaining("not valid YAML/JSON");
        assertThatThrownBy(() -> RuleSet.parse("{\"rules\": [}", "bad.json"))
                .hasMessageStartingWith("bad.json: line 1, column 12: not valid YAML/JSON: ");
    }

    @Test
    void yamlSyntaxErrorsSayTheParsersProblemAtItsLineAndColumn() {
        // A tab where the indentation is: the parser's own location lags behind (line 2), its mark does not.
        assertThatThrownBy(() -> RuleSet.parse("rules:\n  - name: a\n\tfault: {type: drop}\n", "rules.yaml"))
                .isInstanceOf(RuleFileException.class)
                .hasMessage("rules.yaml: line 3, column 1: not valid YAML/JSON: tabs are not allowed for indentation "
                        + "(use spaces)");
        // A flow mapping left open: where the file ended, and where the mapping began.
        assertThatThrownBy(() -> RuleSet.parse("rules:\n  - name: a\n    fault: {type: drop\n", "rules.yaml"))
                .isInstanceOf(RuleFileException.class)
                .hasMessage("rules.yaml: line 4, column 1: not valid YAML/JSON: expected ',' or '}', but got the end "
                        + "of the file (in the {...} mapping that starts at line 3, column 12)");
        // The same rule, written correctly, is read.
        RuleSet good = RuleSet.parse("rules:\n  - name: a\n    fault: {type: drop}\n", "rules.yaml");
        assertThat(good.rules()).extracting(Rule::name).containsExactly("a");
    }

    /** The same rules twice: anchors and aliases, then written out in full. */
    private static final String WITH_ALIAS = String.join("\n",
            "rules:",
            "  - name: slow-a",
            "    fault: {type: latency, latency: &slow 2s}",
            "  - name: slow-b",
            "    fault: {type: latency, latency: *slow}",
            "");
    private static final String WITHOUT_ALIAS = WITH_ALIAS.replace("&slow ", "").replace("*slow", "2s");

    @Test
    void yamlAnchorsAndAliasesAreRefusedWithTheirPlace(@TempDir Path dir) throws IOException {
        // Read as jackson reads them, the alias would be the text "slow": refused, naming where.
        assertThatThrownBy(() -> RuleSet.parse(WITH_ALIAS, "rules.yaml"))
                .isInstanceOf(RuleFileException.class)
                .hasMessage("rules.yaml: line 3, column 37: YAML anchor '&slow' (expected: no anchors or aliases; "
                        + "write the value out where it is used)");
        String aliasOnly = WITH_ALIAS.replace("&slow ", "");
        assertThatThrownBy(() -> RuleSet.parse(aliasOnly, "rules.yaml"))
                .hasMessage("rules.yaml: line 5, column 37: YAML alias '*slow' (expected: no anchors or aliases; "
                        + "write the value out where it is used)");
        // A merge key over an anchored mapping: the anchor on a mapping is found too.
        String merged = "rules:\n  - &base\n    name: a\n    fault: {type: drop}\n  - <<: *base\n    name: b\n";
        assertThatThrownBy(() -> RuleSet.parse(merged, "rules.yaml"))
                .hasMessageStartingWith("rules.yaml: line 2, column 5: YAML anchor '&base' (expected: ");
        Path file = dir.resolve("aliased.yaml");
        Files.writeString(file, WITH_ALIAS);
        assertThatThrownBy(() -> RuleSet.load(file))
                .hasMessage(file + ": line 3, column 37: YAML anchor '&slow' (expected: no anchors or aliases; "
                        + "write the value out where it is used)");
        assertThatThrownBy(() -> RuleSet.parseRule("{name: a, fault: {type: drop, note: *x}}", "POST /rules"))
                .hasMessageStartingWith("POST /rules: line 1, column 37: YAML alias '*x'");

        // The twin: the same rules, written out, are read, each with its 2 s.
        RuleSet plain = RuleSet.parse(WITHOUT_ALIAS, "rules.yaml");
        assertThat(plain.rules()).extracting(Rule::name).containsExactly("slow-a", "slow-b");
        assertThat(plain.toJson()).contains("\"latency\":\"2s\"").doesNotContain("slow\"}");
        Files.writeString(file, WITHOUT_ALIAS);
        assertThat(RuleSet.load(file).rules()).hasSize(2);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            tab before a value      | "a:\\tb"                  | line 1, column 3: not valid YAML/JSON: a tab cannot start a value (use a space)
            reserved character      | "a: @x"                    | line 1, column 4: not valid YAML/JSON: '@' cannot start a value (put the value in quotes)
            unclosed quote          | "a: 'b"                    | line 2, column 1: not valid YAML/JSON: the file ended before the closing quote (in the quoted text that starts at line 1, column 4)
            unclosed flow sequence  | "a: [1, 2\\nb: 3"          | line 2, column 2: not valid YAML/JSON: expected ',' or ']', but got : (in the [...] list that starts at line 1, column 4)
            two values on a line    | "a: b: c"                  | line 1, column 5: not valid YAML/JSON: mapping values are not allowed here
            key indented too little | "r:\\n  - n: a\\n   f: 1"     | line 3, column 4: not valid YAML/JSON: expected the end of the indented block, but found a new key (in the list that starts at line 2, column 3; check the indentation)
            """)
    void otherYamlSyntaxErrorsAreCleanedOfTheParsersNoise(String what, String yaml, String problem) {
        String text = yaml.replace("\\t", "\t").replace("\\n", "\n") + "\n";
        assertThatThrownBy(() -> RuleSet.parse(text, "r.yaml"))
                .isInstanceOf(RuleFileException.class)
                .hasMessage("r.yaml: " + problem);
    }

    @Test
    void duplicateKeysAreErrors() {
        assertThatThrownBy(() -> RuleSet.parse("rules:\n  - name: a\n    name: b\n    fault: {type: drop}\n", "d.yaml"))
                .isInstanceOf(RuleFileException.class)
                .hasMessageStartingWith("d.yaml: line 3")
                .hasMessageContaining("Duplicate field 'name'");
    }

    @Test
    void loadsFilesAndSaysWhenOneIsMissing(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("rules.yaml");
        Files.writeString(file, "rules:\n  - name: d\n    fault: {type: drop}\n");
        assertThat(RuleSet.load(file).source()).isEqualTo(file.toString());

        Path missing = dir.resolve("nope.yaml");
        assertThatThrownBy(() -> RuleSet.load(missing))
                .isInstanceOf(RuleFileException.class)
                .hasMessage(missing + ": cannot read the file (NoSuchFileException)");
    }
}
