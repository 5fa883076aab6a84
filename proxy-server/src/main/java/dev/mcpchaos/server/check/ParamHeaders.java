package dev.mcpchaos.server.check;

import com.fasterxml.jackson.databind.JsonNode;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The 2026-07-28 custom headers from tool parameters (Streamable HTTP, "Custom Headers from Tool
 * Parameters"): a tool's {@code inputSchema} may mark a property with {@code x-mcp-header}, and a
 * client calling it over HTTP mirrors the argument into {@code Mcp-Param-{name}}. This reads the
 * annotations of a schema, with what is wrong with them, and compares a call's headers to its
 * arguments.
 */
final class ParamHeaders {

    static final String ANNOTATION = "x-mcp-header";
    /** RFC 9110's token: 1*tchar. */
    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
    private static final Set<String> PRIMITIVES = Set.of("string", "integer", "boolean");
    private static final long SAFE_INTEGER = (1L << 53) - 1;
    /** Keywords whose value is one subschema. */
    private static final Set<String> SCHEMA_KEYWORDS = Set.of("items", "additionalItems", "additionalProperties",
            "unevaluatedItems", "unevaluatedProperties", "contains", "propertyNames", "not", "if", "then", "else");
    /** Keywords whose value is an array of subschemas. */
    private static final Set<String> SCHEMA_ARRAY_KEYWORDS = Set.of("allOf", "anyOf", "oneOf", "prefixItems", "items");
    /** Keywords whose value maps names to subschemas. */
    private static final Set<String> SCHEMA_MAP_KEYWORDS = Set.of("properties", "patternProperties", "$defs",
            "definitions", "dependentSchemas");

    private ParamHeaders() {
    }

    /** One valid annotation: the argument at {@code path} goes in {@code Mcp-Param-{name}}. */
    record Binding(String name, List<String> path, String type) {
        String header() {
            return "mcp-param-" + name.toLowerCase(Locale.ROOT);
        }
    }

    /** A schema's annotations: the valid ones, or the problems that make the tool definition invalid. */
    record Scan(List<Binding> bindings, List<String> problems) {
    }

    static Scan scan(JsonNode inputSchema) {
        List<Binding> bindings = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        if (inputSchema == null || !inputSchema.isObject()) {
            return new Scan(List.of(), List.of());
        }
        Map<JsonNode, Boolean> reachable = new IdentityHashMap<>();
        collect(inputSchema, new ArrayList<>(), bindings, problems, reachable);
        Set<String> seen = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
        for (Binding b : bindings) {
            if (!seen.add(b.name())) {
                problems.add(ANNOTATION + " '" + b.name() + "' is used twice (names are unique ignoring case)");
            }
        }
        stray(inputSchema, "", reachable, problems);
        return problems.isEmpty() ? new Scan(List.copyOf(bindings), List.of()) : new Scan(List.of(), problems);
    }

    /** The annotations on the chain of {@code properties} keys from {@code schema}. */
    private static void collect(JsonNode schema, List<String> path, List<Binding> bindings, List<String> problems,
                                Map<JsonNode, Boolean> reachable) {
        JsonNode properties = schema.get("properties");
        if (properties == null || !properties.isObject()) {
            return;
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = properties.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> property = it.next();
            JsonNode sub = property.getValue();
            if (!sub.isObject()) {
                continue;
            }
            List<String> at = new ArrayList<>(path);
            at.add(property.getKey());
            reachable.put(sub, Boolean.TRUE);
            JsonNode annotation = sub.get(ANNOTATION);
            if (annotation != null) {
                String where = "/" + String.join("/", at);
                String type = primitiveType(sub.get("type"));
                if (!annotation.isTextual() || !TOKEN.matcher(annotation.asText()).matches()) {
                    problems.add(ANNOTATION + " " + annotation + " at " + where + " is not an HTTP token (1*tchar)");
                } else if (type == null) {
                    problems.add(ANNOTATION + " '" + annotation.asText() + "' at " + where + " is on a property of type "
                            + sub.get("type") + " (expected: string, integer or boolean)");
                } else {
                    bindings.add(new Binding(annotation.asText(), Collections.unmodifiableList(at), type));
                }
            }
            collect(sub, at, bindings, problems, reachable);
        }
    }

    /** The one primitive type a property has ({@code "string"}, or {@code ["string","null"]}), or null. */
    private static String primitiveType(JsonNode type) {
        if (type != null && type.isTextual()) {
            return PRIMITIVES.contains(type.asText()) ? type.asText() : null;
        }
        if (type != null && type.isArray()) {
            String found = null;
            for (JsonNode t : type) {
                if (t.isTextual() && t.asText().equals("null")) {
                    continue;
                }
                if (!t.isTextual() || !PRIMITIVES.contains(t.asText()) || found != null) {
                    return null;
                }
                found = t.asText();
            }
            return found;
        }
        return null;
    }

    /** An annotation anywhere but on a statically reachable property makes the definition invalid. */
    private static void stray(JsonNode schema, String where, Map<JsonNode, Boolean> reachable, List<String> problems) {
        if (!schema.isObject()) {
            return;
        }
        if (schema.has(ANNOTATION) && !reachable.containsKey(schema)) {
            problems.add(ANNOTATION + " " + schema.get(ANNOTATION) + " at " + (where.isEmpty() ? "the root" : where)
                    + " is not reachable through properties alone (not under items, a composition, a condition or"
                    + " $ref)");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = schema.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            String keyword = field.getKey();
            JsonNode value = field.getValue();
            if (SCHEMA_MAP_KEYWORDS.contains(keyword) && value.isObject()) {
                for (Iterator<Map.Entry<String, JsonNode>> sub = value.fields(); sub.hasNext(); ) {
                    Map.Entry<String, JsonNode> e = sub.next();
                    stray(e.getValue(), where + "/" + keyword + "/" + e.getKey(), reachable, problems);
                }
            } else if (SCHEMA_ARRAY_KEYWORDS.contains(keyword) && value.isArray()) {
                for (int i = 0; i < value.size(); i++) {
                    stray(value.get(i), where + "/" + keyword + "/" + i, reachable, problems);
                }
            } else if (SCHEMA_KEYWORDS.contains(keyword)) {
                stray(value, where + "/" + keyword, reachable, problems);
            }
        }
    }

    /**
     * What is wrong with the {@code Mcp-Param-*} headers of a call of a tool with these bindings:
     * a value in the arguments whose header is missing or says something else, or a header sent
     * for a value the arguments do not have (absent or null).
     *
     * @param headers the request's {@code mcp-*} headers, names in lower case
     */
    static List<String> mismatches(List<Binding> bindings, JsonNode arguments, Map<String, String> headers) {
        List<String> found = new ArrayList<>();
        for (Binding b : bindings) {
            JsonNode value = arguments;
            for (String step : b.path()) {
                value = value != null && value.isObject() ? value.get(step) : null;
            }
            String header = headers.get(b.header());
            String shown = "Mcp-Param-" + b.name();
            if (value == null || value.isNull()) {
                if (header != null) {
                    found.add(shown + " '" + header + "' sent, but arguments/" + String.join("/", b.path())
                            + " has no value (expected: no header)");
                }
                continue;
            }
            if (header == null) {
                found.add("no " + shown + " header; arguments/" + String.join("/", b.path()) + " is " + value);
                continue;
            }
            String decoded = HttpHeaderChecks.decodeSentinel(header);
            if (!agrees(b.type(), value, decoded)) {
                found.add(shown + " '" + header + "' but arguments/" + String.join("/", b.path()) + " is " + value);
            }
        }
        return found;
    }

    private static boolean agrees(String type, JsonNode value, String header) {
        switch (type) {
            case "integer":
                if (!value.isNumber()) {
                    return value.isTextual() && value.asText().equals(header);
                }
                try {
                    return new BigDecimal(header.trim()).compareTo(value.decimalValue()) == 0
                            && value.decimalValue().abs().compareTo(BigDecimal.valueOf(SAFE_INTEGER)) <= 0;
                } catch (NumberFormatException notANumber) {
                    return false;
                }
            case "boolean":
                return value.isBoolean() ? header.equals(value.asBoolean() ? "true" : "false")
                        : value.asText().equals(header);
            default:
                return value.isTextual() ? value.asText().equals(header) : value.toString().equals(header);
        }
    }
}
