package dev.mcpchaos.rules;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.internal.Text;

import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * A rule written in Java, made by a factory of {@link Rules} and refined by chained calls:
 * {@code Rules.latency("slow", Duration.ofMillis(300)).onTool("search*").onResponses().times(3)}.
 * It is a rule file's rule as text ({@link #toJson()}, {@link #toYaml()}), checked by the rule
 * file parser when it is used ({@link #toRule()}, {@link Chaos#add(RuleDraft)}): a bad value is
 * refused with the parser's message, naming the rule, the key and what was expected. The same
 * draft works in-process and over the control API, where {@code GET /rules} shows it as written.
 *
 * <p>Each call sets one key of the rule (see {@code docs/rules.md}) and returns this draft: a
 * draft is mutable, make one per use. Nothing is checked before {@link #toRule()}.
 */
public final class RuleDraft {

    /** Names the draft in the parser's messages: {@code rule built in Java: rule 'slow': fault.latency: ...}. */
    static final String SOURCE = "rule built in Java";

    private static final YAMLMapper YAML = new YAMLMapper(YAMLFactory.builder()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
            .build());

    private final String name;
    private final String type;
    private final ObjectNode match = RuleJson.MAPPER.createObjectNode();
    private final ObjectNode settings = RuleJson.MAPPER.createObjectNode();
    private final ObjectNode fault = RuleJson.MAPPER.createObjectNode();

    RuleDraft(String name, String type) {
        this.name = Objects.requireNonNull(name, "name");
        this.type = Objects.requireNonNull(type, "type");
        fault.put("type", type);
    }

    /** The rule's name. */
    public String name() {
        return name;
    }

    /** The fault's type, such as {@code latency}. */
    public String type() {
        return type;
    }

    // ---- match ----

    /** Only messages travelling this way ({@code match.direction}). */
    public RuleDraft direction(Direction direction) {
        match.put("direction", Objects.requireNonNull(direction, "direction").name().toLowerCase(Locale.ROOT));
        return this;
    }

    /** Only messages from the client ({@code match.direction: client_to_server}). */
    public RuleDraft fromClient() {
        return direction(Direction.CLIENT_TO_SERVER);
    }

    /** Only messages from the server ({@code match.direction: server_to_client}). */
    public RuleDraft fromServer() {
        return direction(Direction.SERVER_TO_CLIENT);
    }

    /** Only on this transport ({@code match.transport}). */
    public RuleDraft onTransport(TransportKind transport) {
        match.put("transport", Objects.requireNonNull(transport, "transport").name().toLowerCase(Locale.ROOT));
        return this;
    }

    /** Only requests ({@code match.kind: request}). */
    public RuleDraft onRequests() {
        match.put("kind", "request");
        return this;
    }

    /** Only responses with a result ({@code match.kind: response}). */
    public RuleDraft onResponses() {
        match.put("kind", "response");
        return this;
    }

    /** Only notifications ({@code match.kind: notification}). */
    public RuleDraft onNotifications() {
        match.put("kind", "notification");
        return this;
    }

    /** Only error responses ({@code match.kind: error}). */
    public RuleDraft onErrors() {
        match.put("kind", "error");
        return this;
    }

    /** Only messages whose method (for an answer: its request's) matches this glob ({@code match.method}). */
    public RuleDraft onMethod(String glob) {
        match.put("method", Objects.requireNonNull(glob, "glob"));
        return this;
    }

    /** Only {@code tools/call} of a tool matching this glob, and the answers to it ({@code match.tool}). */
    public RuleDraft onTool(String glob) {
        match.put("tool", Objects.requireNonNull(glob, "glob"));
        return this;
    }

    /** Only the request with this numeric id and its answer ({@code match.id}). */
    public RuleDraft onId(long id) {
        match.put("id", id);
        return this;
    }

    /** Only the request with this string id and its answer ({@code match.id}; {@code "7"} is not {@code 7}). */
    public RuleDraft onId(String id) {
        match.put("id", Objects.requireNonNull(id, "id"));
        return this;
    }

    /** HTTP only: only messages whose request has header {@code name} matching {@code glob} ({@code match.headers}). */
    public RuleDraft onHeader(String name, String glob) {
        ObjectNode headers = match.has("headers") ? (ObjectNode) match.get("headers") : match.putObject("headers");
        headers.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(glob, "glob"));
        return this;
    }

    // ---- when ----

    /** Chance, from 0 to 1, that an eligible match is injected ({@code probability}). */
    public RuleDraft probability(double probability) {
        settings.put("probability", probability);
        return this;
    }

    /** The first {@code matches} matches pass untouched ({@code after}). */
    public RuleDraft after(long matches) {
        settings.put("after", matches);
        return this;
    }

    /** At most this many injections ({@code times}). */
    public RuleDraft times(long times) {
        settings.put("times", times);
        return this;
    }

    /** Active from this long after the proxy started ({@code start}). */
    public RuleDraft start(Duration start) {
        settings.put("start", Text.duration(Objects.requireNonNull(start, "start")));
        return this;
    }

    /** Active for this long from {@code start} ({@code duration}). */
    public RuleDraft duration(Duration duration) {
        settings.put("duration", Text.duration(Objects.requireNonNull(duration, "duration")));
        return this;
    }

    /** Kept but not applied until switched on ({@code enabled: false}). */
    public RuleDraft disabled() {
        settings.put("enabled", false);
        return this;
    }

    // ---- the fault's parameters ----

    /**
     * Sets a parameter of the fault ({@code fault.<name>}): a {@link Duration} is written as in a
     * rule file ({@code 250ms}), a {@link JsonNode}, {@link Map} or list as its JSON, anything else
     * as a JSON string, number or boolean. The parser refuses a parameter the fault does not take.
     */
    public RuleDraft param(String name, Object value) {
        Objects.requireNonNull(name, "name");
        if ("type".equals(name)) {
            throw new IllegalArgumentException("param: 'type' (expected: a parameter of the fault; its type is "
                    + "the factory's, " + type + ")");
        }
        fault.set(name, json(value));
        return this;
    }

    /** {@code latency}: the spread ({@code fault.jitter}). */
    public RuleDraft jitter(Duration jitter) {
        return param("jitter", jitter);
    }

    /** {@code latency}: {@code fixed}, {@code uniform}, {@code normal} or {@code lognormal} ({@code fault.distribution}). */
    public RuleDraft distribution(String distribution) {
        return param("distribution", distribution);
    }

    /** {@code reorder}: the longest a message is held ({@code fault.hold}). */
    public RuleDraft hold(Duration hold) {
        return param("hold", hold);
    }

    /** {@code error}: the error's {@code data} ({@code fault.data}), any JSON value. */
    public RuleDraft data(Object data) {
        return param("data", data);
    }

    /** {@code http_status}: a header of the answer, such as {@code Retry-After: 1} ({@code fault.headers}). */
    public RuleDraft header(String name, String value) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(value, "value");
        ObjectNode headers = fault.get("headers") instanceof ObjectNode h ? h : fault.putObject("headers");
        headers.put(name, value);
        return this;
    }

    /** {@code http_status}: the answer's body ({@code fault.body}). */
    public RuleDraft body(String body) {
        return param("body", body);
    }

    /**
     * {@code mutate}: one more JSON Patch operation ({@code fault.patch}), such as
     * {@code .operation("remove", "/result/tools/1", null)}; {@code value} null: none.
     */
    public RuleDraft operation(String op, String path, Object value) {
        ObjectNode operation = patchList().addObject();
        operation.put("op", Objects.requireNonNull(op, "op"));
        operation.put("path", Objects.requireNonNull(path, "path"));
        if (value != null) {
            operation.set("value", json(value));
        }
        return this;
    }

    /** {@code mutate}: a {@code move} or {@code copy} operation, {@code from} to {@code path} ({@code fault.patch}). */
    public RuleDraft operationFrom(String op, String from, String path) {
        ObjectNode operation = patchList().addObject();
        operation.put("op", Objects.requireNonNull(op, "op"));
        operation.put("from", Objects.requireNonNull(from, "from"));
        operation.put("path", Objects.requireNonNull(path, "path"));
        return this;
    }

    private ArrayNode patchList() {
        return fault.get("patch") instanceof ArrayNode list ? list : fault.putArray("patch");
    }

    private static JsonNode json(Object value) {
        if (value instanceof Duration d) {
            return RuleJson.MAPPER.getNodeFactory().textNode(Text.duration(d));
        }
        return RuleJson.MAPPER.valueToTree(value);
    }

    // ---- as text, as a rule ----

    /** The rule as a mapping of a rule file's {@code rules} list, in JSON, keys in the reference's order. */
    public String toJson() {
        return tree().toString();
    }

    /** The rule as YAML, an item of a rule file's {@code rules} list (without the leading {@code - }). */
    public String toYaml() {
        try {
            return YAML.writeValueAsString(tree());
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
    }

    private ObjectNode tree() {
        ObjectNode rule = RuleJson.MAPPER.createObjectNode();
        rule.put("name", name);
        if (settings.has("enabled")) {
            rule.set("enabled", settings.get("enabled"));
        }
        if (!match.isEmpty()) {
            rule.set("match", match.deepCopy());
        }
        for (String key : new String[] {"probability", "after", "times", "start", "duration"}) {
            if (settings.has(key)) {
                rule.set(key, settings.get(key));
            }
        }
        rule.set("fault", fault.deepCopy());
        return rule;
    }

    /**
     * The rule, checked by the rule file parser.
     *
     * @throws RuleFileException {@code rule built in Java: rule 'slow': fault.latency: '-5ms' (expected: ...)}
     */
    public Rule toRule() {
        return new RuleFileParser(SOURCE, true).parseOne(toJson());
    }

    @Override
    public String toString() {
        return toJson();
    }
}
