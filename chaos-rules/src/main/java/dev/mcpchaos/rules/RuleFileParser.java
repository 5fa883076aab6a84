package dev.mcpchaos.rules;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.mcpchaos.core.config.Units;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.fault.Fault;
import dev.mcpchaos.rules.fault.FaultParams;
import dev.mcpchaos.rules.fault.FaultRegistry;
import dev.mcpchaos.rules.fault.InvalidParameterException;
import dev.mcpchaos.rules.internal.Text;
import dev.mcpchaos.rules.match.MessageMatch;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.events.AliasEvent;
import org.yaml.snakeyaml.events.Event;
import org.yaml.snakeyaml.events.NodeEvent;

import java.io.StringReader;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a rule file into a {@link RuleSet}, checking every value on the way. The tree is walked
 * by hand rather than bound to classes so that each complaint can name the rule and the field,
 * say what was given and what is expected, and so that unknown keys are errors.
 */
final class RuleFileParser {

    private static final ObjectMapper YAML = YAMLMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

    private static final List<String> TOP_KEYS = List.of("seed", "rules");
    private static final List<String> RULE_KEYS = List.of("name", "enabled", "match", "probability", "after", "times",
            "start", "duration", "fault");
    private static final List<String> MATCH_KEYS = List.of("direction", "transport", "kind", "method", "tool", "id",
            "headers");

    private final String source;
    private final boolean json;

    RuleFileParser(String source, boolean json) {
        this.source = source;
        this.json = json;
    }

    RuleSet parse(String text) {
        JsonNode root = readTree(text, "a mapping with seed and rules");
        try {
            requireKnownKeys(root, TOP_KEYS, "");
        } catch (InvalidParameterException e) {
            throw new RuleFileException(source, null, e.getMessage());
        }
        OptionalLong seed = OptionalLong.empty();
        JsonNode seedNode = root.get("seed");
        if (seedNode != null && !seedNode.isNull()) {
            if (!seedNode.isIntegralNumber() || !seedNode.canConvertToLong()) {
                throw new RuleFileException(source, null, "seed: " + Text.given(seedNode)
                        + " (expected: a whole number, such as 42)");
            }
            seed = OptionalLong.of(seedNode.longValue());
        }
        JsonNode rulesNode = root.get("rules");
        if (rulesNode == null || !rulesNode.isArray()) {
            throw new RuleFileException(source, null, "rules: " + Text.given(rulesNode)
                    + " (expected: a list of rules, each with a name and a fault)");
        }
        List<Rule> rules = new ArrayList<>();
        Map<String, Integer> names = new HashMap<>();
        for (int i = 0; i < rulesNode.size(); i++) {
            rules.add(parseRule(rulesNode.get(i), "rules[" + i + "]", i, names));
        }
        return new RuleSet(source, seed, rules);
    }

    /** Reads text holding one rule (a mapping with name, match, fault, ...), as in a rule file's list. */
    Rule parseOne(String text) {
        JsonNode node = readTree(text, "a mapping with name, match and fault");
        return parseRule(node, "the rule", 0, new HashMap<>());
    }

    /**
     * Changes {@code rule} by a JSON merge patch (RFC 7386) of its definition: the keys given
     * replace the rule's, a {@code null} removes one (back to its default), and {@code match} and
     * {@code fault} are merged key by key. The result is checked as a new rule would be. A rule
     * built in code has no definition: only {@code enabled} can change it.
     */
    Rule patch(Rule rule, String text) {
        String label = "rule '" + rule.name() + "'";
        JsonNode patch = readTree(text, "a mapping of the rule's keys to change, such as {enabled: false}");
        try {
            requireKnownKeys(patch, RULE_KEYS, "");
            if (patch.has("name") && !rule.name().equals(patch.get("name").asText(null))) {
                throw new InvalidParameterException("name", Text.given(patch.get("name")),
                        "the rule's own name or none; to rename, add a new rule and remove this one");
            }
        } catch (InvalidParameterException e) {
            throw new RuleFileException(source, label, e.getMessage());
        }
        ObjectNode definition = rule.definition();
        if (definition == null) {
            JsonNode enabled = patch.get("enabled");
            if (patch.size() == 1 && enabled != null && enabled.isBoolean()) {
                return rule.withEnabled(enabled.booleanValue());
            }
            throw new RuleFileException(source, label, Text.given(patch) + " (expected: only {enabled: true|false}: "
                    + "the rule was built in code, so the rest of it cannot be changed by name; replace it)");
        }
        mergePatch(definition, (ObjectNode) patch);
        return parseRule(definition, label, 0, new HashMap<>());
    }

    private static void mergePatch(ObjectNode target, ObjectNode patch) {
        for (Iterator<Map.Entry<String, JsonNode>> it = patch.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            JsonNode value = field.getValue();
            JsonNode current = target.get(field.getKey());
            if (value.isNull()) {
                target.remove(field.getKey());
            } else if (value.isObject() && current != null && current.isObject()) {
                mergePatch((ObjectNode) current, (ObjectNode) value);
            } else {
                target.set(field.getKey(), value);
            }
        }
    }

    private JsonNode readTree(String text, String expected) {
        JsonNode root;
        try {
            root = (json ? JSON : YAML).readTree(text);
        } catch (JsonProcessingException e) {
            throw new RuleFileException(source, null, syntaxProblem(e, text));
        }
        if (!json) {
            refuseAnchorsAndAliases(text);
        }
        if (root == null || root.isMissingNode() || root.isNull()) {
            throw new RuleFileException(source, null, "empty (expected: " + expected + ")");
        }
        if (!root.isObject()) {
            throw new RuleFileException(source, null, "top level: " + Text.given(root) + " (expected: " + expected + ")");
        }
        return root;
    }

    /**
     * Refuses YAML anchors ({@code &a}) and aliases ({@code *a}): jackson drops an anchor and
     * reads an alias as the text of its name, so {@code latency: *slow} would be the string
     * {@code slow}, not the anchored value, and a merge key ({@code <<: *base}) a key named
     * {@code <<}. A rule file is short enough to write out in full; a quiet misreading is worse
     * than a refusal. snakeyaml's own events are read, since jackson does not show every anchor.
     * Called once jackson has read the text, so the syntax is known to be valid.
     */
    private void refuseAnchorsAndAliases(String text) {
        LoaderOptions options = new LoaderOptions();
        options.setCodePointLimit(Integer.MAX_VALUE); // jackson took the whole text already
        try {
            for (Event event : new Yaml(options).parse(new StringReader(text))) {
                String what;
                if (event instanceof AliasEvent alias) {
                    what = "alias '*" + alias.getAnchor() + "'";
                } else if (event instanceof NodeEvent node && node.getAnchor() != null) {
                    what = "anchor '&" + node.getAnchor() + "'";
                } else {
                    continue;
                }
                throw new RuleFileException(source, null, at(event.getStartMark()) + ": YAML " + what
                        + " (expected: no anchors or aliases; write the value out where it is used)");
            }
        } catch (MarkedYAMLException e) {
            throw new RuleFileException(source, null, yamlSyntaxProblem(e, text));
        }
    }

    private Rule parseRule(JsonNode node, String label, int index, Map<String, Integer> names) {
        if (!node.isObject()) {
            throw new RuleFileException(source, label, Text.given(node) + " (expected: a mapping with name, match and "
                    + "fault)");
        }
        JsonNode nameNode = node.get("name");
        if (nameNode == null || !nameNode.isTextual() || nameNode.textValue().isBlank()) {
            throw new RuleFileException(source, label, "name: " + Text.given(nameNode)
                    + " (expected: a unique name for the rule, such as slow-search)");
        }
        String name = nameNode.textValue();
        label = "rule '" + name + "'";
        Integer previous = names.putIfAbsent(name, index);
        if (previous != null) {
            throw new RuleFileException(source, label, "name: " + Text.quote(name)
                    + " (expected: a name no other rule has; rules[" + previous + "] has it)");
        }
        try {
            requireKnownKeys(node, RULE_KEYS, "");
            Fault fault = parseFault(node.get("fault"));
            Rule.Builder rule = Rule.builder(name, fault).definition(((ObjectNode) node).deepCopy());
            JsonNode enabled = node.get("enabled");
            if (enabled != null && !enabled.isNull()) {
                if (!enabled.isBoolean()) {
                    throw new InvalidParameterException("enabled", Text.given(enabled), "true or false");
                }
                rule.enabled(enabled.booleanValue());
            }
            JsonNode match = node.get("match");
            if (match != null && !match.isNull()) {
                rule.match(parseMatch(match));
            }
            JsonNode probability = node.get("probability");
            if (probability != null && !probability.isNull()) {
                if (!probability.isNumber()) {
                    throw new InvalidParameterException("probability", Text.given(probability),
                            "a number from 0 to 1, such as 0.3");
                }
                rule.probability(probability.doubleValue());
            }
            Long after = wholeNumber(node, "after", 0, "a whole number >= 0");
            if (after != null) {
                rule.after(after);
            }
            Long times = wholeNumber(node, "times", 1, "a whole number >= 1");
            if (times != null) {
                rule.times(times);
            }
            Duration start = duration(node, "start", "a duration >= 0, such as 5s");
            if (start != null) {
                rule.start(start);
            }
            Duration duration = duration(node, "duration", "a duration > 0, such as 60s");
            if (duration != null) {
                rule.duration(duration);
            }
            return rule.build();
        } catch (IllegalArgumentException e) {
            // InvalidParameterException, or a rule whose fault does not fit its transport.
            throw new RuleFileException(source, label, e.getMessage());
        }
    }

    private static Fault parseFault(JsonNode node) {
        String types = "one of " + String.join(", ", FaultRegistry.types());
        if (node == null || node.isNull()) {
            throw new InvalidParameterException("fault", "missing", "a mapping with a type, such as {type: latency, "
                    + "latency: 500ms}");
        }
        if (!node.isObject()) {
            throw new InvalidParameterException("fault", Text.given(node), "a mapping with a type, such as "
                    + "{type: latency, latency: 500ms}");
        }
        JsonNode type = node.get("type");
        if (type == null || !type.isTextual() || !FaultRegistry.types().contains(type.textValue())) {
            throw new InvalidParameterException("fault.type", Text.given(type), types);
        }
        ObjectNode params = ((ObjectNode) node).deepCopy();
        params.remove("type");
        try {
            return FaultRegistry.create(type.textValue(), FaultParams.of(params));
        } catch (InvalidParameterException e) {
            throw e.under("fault");
        }
    }

    private static MessageMatch parseMatch(JsonNode node) {
        if (!node.isObject()) {
            throw new InvalidParameterException("match", Text.given(node), "a mapping, such as {method: tools/call}");
        }
        requireKnownKeys(node, MATCH_KEYS, "match.");
        MessageMatch.Builder match = MessageMatch.builder();
        String direction = choice(node, "direction", Set.of("client_to_server", "server_to_client", "any"),
                "one of client_to_server, server_to_client, any");
        if (direction != null && !direction.equals("any")) {
            match.direction(direction.equals("client_to_server") ? Direction.CLIENT_TO_SERVER
                    : Direction.SERVER_TO_CLIENT);
        }
        String transport = choice(node, "transport", Set.of("stdio", "http", "any"), "one of stdio, http, any");
        if (transport != null && !transport.equals("any")) {
            match.transport(transport.equals("stdio") ? TransportKind.STDIO : TransportKind.HTTP);
        }
        String kind = choice(node, "kind", Set.of("request", "response", "notification", "error", "any"),
                "one of request, response, notification, error, any");
        if (kind != null && !kind.equals("any")) {
            match.kind(MessageKind.valueOf(kind.toUpperCase(Locale.ROOT)));
        }
        match.method(glob(node, "method", "a method name or glob, such as tools/call or notifications/*"));
        match.tool(glob(node, "tool", "a tool name or glob, such as search*"));
        JsonNode id = node.get("id");
        if (id != null && !id.isNull()) {
            if (id.isIntegralNumber() && id.canConvertToLong()) {
                match.id(id.longValue());
            } else if (id.isNumber()) {
                match.id(new BigDecimal(id.asText()));
            } else if (id.isTextual()) {
                match.id(id.textValue());
            } else {
                throw new InvalidParameterException("match.id", Text.given(id), "a JSON-RPC id: a number or a string");
            }
        }
        JsonNode headers = node.get("headers");
        if (headers != null && !headers.isNull()) {
            if (!headers.isObject()) {
                throw new InvalidParameterException("match.headers", Text.given(headers),
                        "a mapping of header names to globs, such as {X-Tenant: blue*}");
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = headers.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> header = it.next();
                if (!header.getValue().isTextual()) {
                    throw new InvalidParameterException("match.headers." + header.getKey(),
                            Text.given(header.getValue()), "a glob, such as blue*");
                }
                match.header(header.getKey(), header.getValue().textValue());
            }
        }
        return match.build();
    }

    private static String choice(JsonNode node, String key, Set<String> allowed, String expected) {
        JsonNode value = node.get(key);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isTextual() || !allowed.contains(value.textValue())) {
            throw new InvalidParameterException("match." + key, Text.given(value), expected);
        }
        return value.textValue();
    }

    private static String glob(JsonNode node, String key, String expected) {
        JsonNode value = node.get(key);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isTextual() || value.textValue().isEmpty()) {
            throw new InvalidParameterException("match." + key, Text.given(value), expected);
        }
        return value.textValue();
    }

    private static Long wholeNumber(JsonNode node, String key, long min, String expected) {
        JsonNode value = node.get(key);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isIntegralNumber() || !value.canConvertToLong() || value.longValue() < min) {
            throw new InvalidParameterException(key, Text.given(value), expected);
        }
        return value.longValue();
    }

    private static Duration duration(JsonNode node, String key, String expected) {
        JsonNode value = node.get(key);
        if (value == null || value.isNull()) {
            return null;
        }
        if (value.isTextual()) {
            try {
                return Units.parseDuration(value.textValue());
            } catch (IllegalArgumentException e) {
                // reported below with the value as given
            }
        }
        throw new InvalidParameterException(key, Text.given(value), expected);
    }

    private static void requireKnownKeys(JsonNode node, List<String> known, String prefix) {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (!known.contains(key)) {
                throw new InvalidParameterException(prefix + key, "unknown key", "one of " + String.join(", ", known));
            }
        }
    }

    /** snakeyaml's words for a character that cannot start a token, such as {@code '@'} or a tab. */
    private static final Pattern CANNOT_START = Pattern.compile("found character '(.+?)' that cannot start any token");

    /**
     * {@code line 3, column 5: not valid YAML/JSON: <what the parser says>}. For YAML, the place
     * and the words are snakeyaml's own problem and mark, without its echo of the line and its
     * caret: jackson's location is that of the last token it read, which may be lines before.
     */
    private static String syntaxProblem(JsonProcessingException e, String text) {
        MarkedYAMLException yaml = markedYamlCause(e);
        if (yaml != null && yaml.getProblemMark() != null && yaml.getProblem() != null) {
            return yamlSyntaxProblem(yaml, text);
        }
        String message = String.valueOf(e.getOriginalMessage()).trim();
        int newline = message.indexOf('\n');
        if (newline >= 0) {
            message = message.substring(0, newline).trim();
        }
        JsonLocation location = e.getLocation();
        String where = location != null && location.getLineNr() > 0
                ? "line " + location.getLineNr() + ", column " + location.getColumnNr() + ": " : "";
        return where + "not valid " + "YAML/JSON: " + message;
    }

    /** {@code line 3, column 5: not valid YAML/JSON: <snakeyaml's problem in plain words>}. */
    private static String yamlSyntaxProblem(MarkedYAMLException yaml, String text) {
        if (yaml.getProblemMark() == null || yaml.getProblem() == null) {
            return "not valid YAML/JSON: " + yaml.getMessage().lines().findFirst().orElse("").trim();
        }
        return at(yaml.getProblemMark()) + ": not valid YAML/JSON: " + yamlProblem(yaml, text);
    }

    private static MarkedYAMLException markedYamlCause(Throwable e) {
        for (Throwable cause = e; cause != null && cause.getCause() != cause; cause = cause.getCause()) {
            if (cause instanceof MarkedYAMLException marked) {
                return marked;
            }
        }
        return null;
    }

    /** {@code line 3, column 12}, counted from 1 (snakeyaml counts from 0). */
    private static String at(Mark mark) {
        return "line " + (mark.getLine() + 1) + ", column " + (mark.getColumn() + 1);
    }

    /** snakeyaml's problem in plain words, with the construct it was reading when it has a start. */
    private static String yamlProblem(MarkedYAMLException e, String text) {
        String problem = e.getProblem().lines().findFirst().orElse("").trim();
        Matcher character = CANNOT_START.matcher(problem);
        if (character.find()) {
            // snakeyaml says "(Do not use @ for indentation)" of every such character; only a tab is that.
            if (character.group(1).equals("\\t(TAB)")) {
                return onlyIndentationBefore(text, e.getProblemMark()) ? "tabs are not allowed for indentation (use "
                        + "spaces)" : "a tab cannot start a value (use a space)";
            }
            return "'" + character.group(1) + "' cannot start a value (put the value in quotes)";
        }
        String context = e.getContext();
        if (problem.equals("found unexpected end of stream")) {
            problem = context != null && context.contains("quoted scalar") ? "the file ended before the closing quote"
                    : "the file ended too soon";
        }
        problem = problem.replace("<stream end>", "the end of the file")
                .replace("<block end>", "the end of the indented block")
                .replace("'<block mapping start>'", "a new key")
                .replace("'<block sequence start>'", "a new list");
        if (context == null || e.getContextMark() == null || !context.startsWith("while ")) {
            return problem;
        }
        return problem + " (in the " + construct(context) + " that starts at " + at(e.getContextMark())
                + (problem.contains("indented block") ? "; check the indentation" : "") + ")";
    }

    /** {@code while parsing a flow mapping} -> {@code {...} mapping}. */
    private static String construct(String context) {
        String what = context.replaceFirst("^while (parsing|scanning) an? ", "");
        if (what.endsWith("quoted scalar")) {
            return "quoted text";
        }
        return switch (what) {
            case "flow mapping" -> "{...} mapping";
            case "flow sequence" -> "[...] list";
            case "block mapping" -> "mapping";
            case "block collection" -> "list"; // snakeyaml's name for a block sequence's entries
            case "block scalar" -> "block of text";
            default -> what;
        };
    }

    /** Whether only spaces and tabs come before {@code mark} on its line: a tab there indents. */
    private static boolean onlyIndentationBefore(String text, Mark mark) {
        String line = text.lines().skip(mark.getLine()).findFirst().orElse("");
        int end = line.offsetByCodePoints(0, Math.min(mark.getColumn(), line.codePointCount(0, line.length())));
        return line.substring(0, end).chars().allMatch(c -> c == ' ' || c == '\t');
    }
}
