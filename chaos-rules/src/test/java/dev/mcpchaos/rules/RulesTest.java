package dev.mcpchaos.rules;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.fault.FaultRegistry;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static java.time.Duration.ofMillis;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link Rules}: one factory per fault, each draft read by the rule file parser as docs/rules.md writes it. */
class RulesTest {

    /** Every rule example of docs/rules.md, written with the factories. */
    private static final List<RuleDraft> DOC_EXAMPLES = List.of(
            Rules.latency("slow-search", ofSeconds(2), ofSeconds(1)).distribution("lognormal").onRequests()
                    .onTool("search*"),
            Rules.drop("lose-one-call").onRequests().onMethod("tools/call").after(3).times(1),
            Rules.duplicate("twice-now-and-then").fromServer().onResponses().probability(0.05),
            Rules.reorder("progress-out-of-order", 3).hold(ofMillis(500)).onMethod("notifications/progress"),
            Rules.truncate("half-an-answer", 0.5).onResponses().onMethod("tools/call"),
            Rules.corrupt("bad-escape", "invalid_escape").onResponses().onTool("echo"),
            Rules.oversize("huge-tool-list", "10MiB").onResponses().onMethod("tools/list"),
            Rules.error("overloaded", -32000, "Server overloaded").data(Map.of("retryAfter", 5)).onRequests()
                    .onTool("fetch").probability(0.2),
            Rules.toolError("quota", "quota exceeded").onResponses().onTool("search"),
            Rules.httpStatus("unavailable", 503).header("Retry-After", "2").onTransport(TransportKind.HTTP)
                    .onRequests().probability(0.1),
            Rules.disconnect("hang-up-mid-call", "client").onRequests().onTool("slow"),
            Rules.throttle("slow-large", "64KiB/s").onResponses().onTool("large*"),
            Rules.noise("log-on-stdout", "INFO cache warmed in 12 ms").fromServer().after(4).times(1),
            Rules.mutate("add-tool-disappears").onResponses().onMethod("tools/list")
                    .operation("test", "/result/tools/1/name", "add").operation("remove", "/result/tools/1", null),
            Rules.mutate("content-renamed").onResponses().onMethod("tools/call")
                    .operationFrom("move", "/result/content", "/result/contents")
                    .operation("replace", "/result/isError", "no"),
            Rules.sseRetry("slow-reconnect", ofSeconds(3)).onMethod("notifications/progress").times(1),
            Rules.getStreamDrop("drop-get-stream").onMethod("notifications/message").times(1),
            Rules.primingDrop("no-priming").onMethod("notifications/progress").times(1),
            Rules.disconnect("cut-before-the-first-message", "client").onMethod("notifications/progress").times(1),
            Rules.crash("crash-on-third-call").direction(Direction.CLIENT_TO_SERVER).onRequests()
                    .onMethod("tools/call").after(2).times(1),
            Rules.inputRequired("endless-rounds").onResponses().onMethod("tools/call").onTool("echo"),
            Rules.headerMismatch("refused-headers", "Mcp-Name").onRequests().onMethod("tools/call").times(1));

    @Test
    void everyDocumentedExampleIsWrittenTheSameWayByItsFactory() throws IOException {
        Map<String, Rule> documented = documentedRules();
        assertThat(DOC_EXAMPLES).extracting(RuleDraft::name)
                .as("every example of docs/rules.md has its factory version here")
                .containsExactlyInAnyOrderElementsOf(documented.keySet());
        for (RuleDraft draft : DOC_EXAMPLES) {
            Rule fromJava = draft.toRule();
            Rule fromDocs = documented.get(draft.name());
            assertThat(normalized(fromJava.definition())).as(draft.name())
                    .isEqualTo(normalized(fromDocs.definition()));
            assertThat(fromJava.toString()).as(draft.name()).isEqualTo(fromDocs.toString());
            // YAML too: the same rule from the draft's YAML text.
            assertThat(RuleSet.parseRule(draft.toYaml(), "draft.yaml").toString()).isEqualTo(fromDocs.toString());
        }
    }

    @Test
    void everyFaultTypeHasAFactoryThatMakesIt() {
        Map<String, RuleDraft> byType = new LinkedHashMap<>();
        byType.put("latency", Rules.latency("r", ofMillis(300)));
        byType.put("drop", Rules.drop("r"));
        byType.put("duplicate", Rules.duplicate("r", 2));
        byType.put("reorder", Rules.reorder("r", ofMillis(200)));
        byType.put("truncate", Rules.truncateAt("r", 20));
        byType.put("corrupt", Rules.corrupt("r"));
        byType.put("oversize", Rules.oversize("r", 4096));
        byType.put("error", Rules.error("r"));
        byType.put("tool_error", Rules.toolError("r"));
        byType.put("http_status", Rules.httpStatus("r", 429).body("slow down"));
        byType.put("invalid_content_type", Rules.invalidContentType("r", "text/plain"));
        byType.put("disconnect", Rules.disconnect("r"));
        byType.put("blackhole", Rules.blackhole("r"));
        byType.put("throttle", Rules.throttle("r", 32, ofMillis(60)));
        byType.put("noise", Rules.noise("r"));
        byType.put("mutate", Rules.mutate("r").operation("add", "/x", 1));
        byType.put("id_mismatch", Rules.idMismatch("r", "other"));
        byType.put("session_expire", Rules.sessionExpire("r"));
        byType.put("sse_retry", Rules.sseRetry("r", java.time.Duration.ofSeconds(3)));
        byType.put("resume_gap", Rules.resumeGap("r"));
        byType.put("resume_repeat", Rules.resumeRepeat("r"));
        byType.put("get_stream_drop", Rules.getStreamDrop("r"));
        byType.put("priming_drop", Rules.primingDrop("r"));
        byType.put("crash", Rules.crash("r", "TERM"));
        byType.put("input_required", Rules.inputRequired("r"));
        byType.put("header_mismatch", Rules.headerMismatch("r", "Mcp-Method"));
        assertThat(byType.keySet()).containsExactlyElementsOf(FaultRegistry.types());
        byType.forEach((type, draft) -> {
            Rule rule = draft.toRule();
            assertThat(rule.fault().type()).as(type).isEqualTo(type);
            assertThat(draft.type()).isEqualTo(type);
        });

        Set<String> factories = Arrays.stream(Rules.class.getDeclaredMethods())
                .filter(m -> Modifier.isPublic(m.getModifiers()) && m.getReturnType() == RuleDraft.class)
                .map(Method::getName).collect(Collectors.toCollection(TreeSet::new));
        for (String type : FaultRegistry.types()) {
            assertThat(factories).as("a factory named after " + type).contains(camel(type));
        }
    }

    @Test
    void theScheduleAndMatchKeysAreTheRuleFilesKeys() {
        Rule rule = Rules.latency("slow", ofMillis(300)).onTool("search*").onResponses().onId(7).probability(0.5)
                .after(1).times(2).start(ofSeconds(5)).duration(Duration.ofMinutes(1)).disabled().toRule();
        assertThat(rule.name()).isEqualTo("slow");
        assertThat(rule.enabled()).isFalse();
        assertThat(rule.probability()).isEqualTo(0.5);
        assertThat(rule.after()).isEqualTo(1);
        assertThat(rule.times()).hasValue(2);
        assertThat(rule.start()).isEqualTo(ofSeconds(5));
        assertThat(rule.duration()).hasValue(Duration.ofMinutes(1));
        assertThat(rule.match().toString()).isEqualTo("match{ kind=RESPONSE tool=search* id=7 }");
        assertThat(Rules.drop("d").onHeader("Authorization", "Bearer *").toJson())
                .isEqualTo("{\"name\":\"d\",\"match\":{\"headers\":{\"Authorization\":\"Bearer *\"}},"
                        + "\"fault\":{\"type\":\"drop\"}}");
        assertThat(Rules.drop("lose-answer").onMethod("tools/call").onResponses().times(1).toJson())
                .isEqualTo("{\"name\":\"lose-answer\",\"match\":{\"method\":\"tools/call\",\"kind\":\"response\"},"
                        + "\"times\":1,\"fault\":{\"type\":\"drop\"}}");
    }

    @Test
    void aBadValueIsRefusedWithTheParsersMessage() {
        assertThatThrownBy(() -> Rules.latency("slow", ofMillis(-5)).toRule())
                .isInstanceOf(RuleFileException.class)
                .hasMessage("rule built in Java: rule 'slow': fault.latency: '-5ms' (expected: a duration >= 0, "
                        + "such as 250ms)");
        assertThatThrownBy(() -> Rules.drop("p").probability(1.5).toRule())
                .isInstanceOf(RuleFileException.class).hasMessageContaining("rule 'p': probability: 1.5");
        assertThatThrownBy(() -> Rules.latency("x", ofMillis(1)).header("Retry-After", "1").toRule())
                .isInstanceOf(RuleFileException.class)
                .hasMessageContaining("fault.headers: unknown key (expected: a parameter of latency: one of latency, jitter, distribution)");
        assertThatThrownBy(() -> Rules.httpStatus("s", 42).toRule())
                .isInstanceOf(RuleFileException.class).hasMessageContaining("rule 's': fault.status: 42");
        assertThatThrownBy(() -> Rules.drop("t").param("type", "latency"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("param: 'type'");
    }

    @Test
    void aTransportTheFaultCannotWorkOnIsRefusedWhenTheRuleIsAdded() {
        RuleEngine engine = RuleEngine.builder(RuleSet.of("none", List.of())).seed(1).transport(TransportKind.STDIO)
                .build();
        assertThatThrownBy(() -> engine.chaos().add(Rules.httpStatus("busy", 503)))
                .isInstanceOf(RuleFileException.class)
                .hasMessageContaining("rule 'busy': http_status: only applies to the http transport");
        assertThat(engine.ruleSet().rules()).isEmpty();
    }

    private static String camel(String type) {
        StringBuilder sb = new StringBuilder();
        boolean up = false;
        for (char c : type.toCharArray()) {
            if (c == '_') {
                up = true;
            } else {
                sb.append(up ? Character.toUpperCase(c) : c);
                up = false;
            }
        }
        return sb.toString();
    }

    /** Numbers compared by value (YAML reads 0.05 as a decimal, Java writes a double). */
    private static String normalized(ObjectNode definition) {
        return RuleJson.MAPPER.convertValue(definition, JsonNode.class).toString().toLowerCase(Locale.ROOT);
    }

    /** Each "- name:" YAML block of docs/rules.md, parsed as the rules of a rule file. */
    private static Map<String, Rule> documentedRules() throws IOException {
        String docs = Files.readString(Path.of("..", "docs", "rules.md"));
        Matcher blocks = Pattern.compile("```yaml\n(- name:.*?)```", Pattern.DOTALL).matcher(docs);
        Map<String, Rule> rules = new LinkedHashMap<>();
        while (blocks.find()) {
            String list = blocks.group(1).lines().map(line -> "  " + line).collect(Collectors.joining("\n"));
            for (Rule rule : RuleSet.parse("rules:\n" + list + "\n", "docs/rules.md").rules()) {
                rules.put(rule.name(), rule);
            }
        }
        return rules;
    }
}
