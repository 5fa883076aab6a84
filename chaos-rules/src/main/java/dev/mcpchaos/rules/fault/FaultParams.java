package dev.mcpchaos.rules.fault;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.core.config.Units;
import dev.mcpchaos.rules.internal.Json;
import dev.mcpchaos.rules.internal.Text;

import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The parameters of one fault as written in a rule file (the {@code fault:} mapping without its
 * {@code type}), read with typed getters that reject bad values with a message naming the
 * parameter, the value given and what is expected.
 *
 * <p>Read for a fault by its {@link FaultType#create}, they refuse a key the type does not declare
 * or its factory never looks at (a typo such as {@code latncy}), naming the key, the type and the
 * keys it takes. Durations read {@code 250ms}, {@code 2s},
 * {@code 1m}; sizes read {@code 512B}, {@code 64KiB}, {@code 10MiB} (see
 * {@link dev.mcpchaos.core.config.Units}).
 *
 * <p>Used while loading rules only, never per message.
 */
public final class FaultParams {

    /** Expected-text for durations, shared so every message reads the same. */
    static final String DURATION = "a duration >= 0, such as 250ms";

    private final ObjectNode node;
    /** The type reading these parameters, or null for parameters not being read for a fault. */
    private final FaultType type;
    /** The keys looked at (read or tested with {@link #has}) while {@link #type} reads them. */
    private final Set<String> read = new HashSet<>();

    private FaultParams(ObjectNode node) {
        this(node, null);
    }

    private FaultParams(ObjectNode node, FaultType type) {
        this.node = node;
        this.type = type;
    }

    /** Parameters from a mapping, such as the {@code fault:} node of a rule without {@code type}. */
    public static FaultParams of(ObjectNode node) {
        return new FaultParams(Objects.requireNonNull(node, "node").deepCopy());
    }

    /** Parameters from a map of plain values (strings, numbers, booleans, lists, maps); for code and tests. */
    public static FaultParams of(Map<String, ?> values) {
        Objects.requireNonNull(values, "values");
        ObjectNode node = JsonNodeFactory.instance.objectNode();
        values.forEach((k, v) -> node.set(k, Json.MAPPER.valueToTree(v)));
        return new FaultParams(node);
    }

    /** No parameters. */
    public static FaultParams none() {
        return new FaultParams(JsonNodeFactory.instance.objectNode());
    }

    /** Whether the parameter is given (and not null). */
    public boolean has(String key) {
        JsonNode value = node.get(looked(key));
        return value != null && !value.isNull();
    }

    /** A duration; {@code defaultValue} when absent, which may be null to make it required. */
    public Duration duration(String key, Duration defaultValue) {
        JsonNode value = value(key);
        if (value == null) {
            return orRequired(key, defaultValue, DURATION);
        }
        if (!value.isTextual()) {
            throw new InvalidParameterException(key, Text.given(value), DURATION);
        }
        try {
            return Units.parseDuration(value.textValue());
        } catch (IllegalArgumentException e) {
            throw new InvalidParameterException(key, Text.given(value), DURATION);
        }
    }

    /** A size in bytes ({@code 64KiB}, or a bare whole number of bytes); null default makes it required. */
    public Long size(String key, Long defaultValue, String expected) {
        JsonNode value = value(key);
        if (value == null) {
            return orRequired(key, defaultValue, expected);
        }
        if (value.isIntegralNumber() && value.canConvertToLong() && value.longValue() >= 0) {
            return value.longValue();
        }
        if (!value.isTextual()) {
            throw new InvalidParameterException(key, Text.given(value), expected);
        }
        try {
            return Units.parseSize(value.textValue());
        } catch (IllegalArgumentException e) {
            throw new InvalidParameterException(key, Text.given(value), expected);
        }
    }

    /** A whole number in {@code [min, max]}; null default makes it required. */
    public Long integer(String key, Long defaultValue, long min, long max) {
        String expected = max == Long.MAX_VALUE ? "a whole number >= " + min
                : "a whole number from " + min + " to " + max;
        JsonNode value = value(key);
        if (value == null) {
            return orRequired(key, defaultValue, expected);
        }
        if (!value.isIntegralNumber() || !value.canConvertToLong()
                || value.longValue() < min || value.longValue() > max) {
            throw new InvalidParameterException(key, Text.given(value), expected);
        }
        return value.longValue();
    }

    /** A number; null default makes it required. {@code expected} describes the allowed range. */
    public Double number(String key, Double defaultValue, double min, double max, String expected) {
        JsonNode value = value(key);
        if (value == null) {
            return orRequired(key, defaultValue, expected);
        }
        if (!value.isNumber() || value.doubleValue() < min || value.doubleValue() > max
                || Double.isNaN(value.doubleValue())) {
            throw new InvalidParameterException(key, Text.given(value), expected);
        }
        return value.doubleValue();
    }

    /** A string; null default makes it required. */
    public String string(String key, String defaultValue, String expected) {
        JsonNode value = value(key);
        if (value == null) {
            return orRequired(key, defaultValue, expected);
        }
        if (!value.isTextual()) {
            throw new InvalidParameterException(key, Text.given(value), expected);
        }
        return value.textValue();
    }

    /**
     * One of an enum's constants, written in lower case ({@code lognormal}, {@code client}).
     * A null default makes it required.
     */
    public <E extends Enum<E>> E choice(String key, Class<E> type, E defaultValue) {
        String expected = "one of " + Arrays.stream(type.getEnumConstants())
                .map(c -> c.name().toLowerCase(Locale.ROOT)).collect(Collectors.joining(", "));
        JsonNode value = value(key);
        if (value == null) {
            return orRequired(key, defaultValue, expected);
        }
        if (value.isTextual()) {
            for (E constant : type.getEnumConstants()) {
                if (constant.name().equalsIgnoreCase(value.textValue())) {
                    return constant;
                }
            }
        }
        throw new InvalidParameterException(key, Text.given(value), expected);
    }

    /** A mapping of strings to strings, such as HTTP headers; empty when absent. */
    public Map<String, String> stringMap(String key, String expected) {
        JsonNode value = value(key);
        Map<String, String> map = new LinkedHashMap<>();
        if (value == null) {
            return map;
        }
        if (!value.isObject()) {
            throw new InvalidParameterException(key, Text.given(value), expected);
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = value.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode v = entry.getValue();
            if (!v.isTextual() && !v.isNumber()) {
                throw new InvalidParameterException(key + '.' + entry.getKey(), Text.given(v), "a string");
            }
            map.put(entry.getKey(), v.asText());
        }
        return map;
    }

    /** The raw JSON value, or null when absent; for structured parameters (a JSON Patch, error data). */
    public JsonNode json(String key) {
        return value(key);
    }

    /** These parameters as {@code type} reads them: declared keys only, and each one noted. */
    FaultParams readerFor(FaultType type) {
        return new FaultParams(node, Objects.requireNonNull(type, "type"));
    }

    /** Refuses the first key the type does not declare, naming it, the type and the keys it does. */
    void refuseUndeclared() {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (!type.declares(key)) {
                throw new InvalidParameterException(key, "unknown key", type.expectedKeys());
            }
        }
    }

    /**
     * Refuses the first key given that the type's factory never looked at: a declared parameter
     * it ignores would otherwise be accepted and do nothing.
     */
    void refuseUnread() {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (!read.contains(key) && !node.get(key).isNull()) { // null is as good as absent
                throw new InvalidParameterException(key, Text.given(node.get(key)), "no value: " + type.name()
                        + " does not use it with the other parameters given");
            }
        }
    }

    /** Notes that the type's factory looked at {@code key}, which its type must declare. */
    private String looked(String key) {
        Objects.requireNonNull(key, "key");
        if (type != null) {
            if (!type.declares(key)) {
                // The fault's own bug, not the rule file's: its descriptor and its reading disagree.
                throw new IllegalStateException(type.name() + " reads parameter '" + key
                        + "', which its FaultType does not declare (declared: " + type.parameterNames() + ')');
            }
            read.add(key);
        }
        return key;
    }

    private JsonNode value(String key) {
        JsonNode value = node.get(looked(key));
        return value == null || value.isNull() ? null : value;
    }

    private static <T> T orRequired(String key, T defaultValue, String expected) {
        if (defaultValue == null) {
            throw new InvalidParameterException(key, "missing", expected);
        }
        return defaultValue;
    }

    @Override
    public String toString() {
        return node.toString();
    }
}
