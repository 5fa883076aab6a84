package dev.mcpchaos.server.demo;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The demo server's tools: their {@code tools/list} descriptions and their implementations.
 *
 * <ul>
 *   <li>{@code echo {text}}: returns the text unchanged.
 *   <li>{@code add {a, b}}: returns the sum; integral inputs give an exact integer (no {@code .0}).
 *   <li>{@code slow {ms}}: sleeps, reporting {@value #SLOW_PROGRESS_STEPS} progress steps when the
 *       caller asked for progress. At most {@value #SLOW_MAX_MS} ms.
 *   <li>{@code large {bytes}}: returns exactly that many ASCII characters. At most
 *       {@value #LARGE_MAX_BYTES} (64 MiB).
 * </ul>
 *
 * <p>Tool calls run on worker threads, so {@link #call} may block (the {@code slow} tool does).
 * Bad arguments are not exceptions: following MCP, they come back as a tool result with
 * {@code isError: true} and a text that says what was wrong, so a model could correct itself.
 */
final class DemoTools {

    /** Largest {@code large} payload: big enough to hit any sane proxy or client limit. */
    static final long LARGE_MAX_BYTES = 64L * 1024 * 1024;

    /** Longest {@code slow} sleep: one hour, so a typo cannot park a worker thread for days. */
    static final long SLOW_MAX_MS = 3_600_000L;

    /** How many progress notifications {@code slow} sends when asked for progress. */
    static final int SLOW_PROGRESS_STEPS = 5;

    private static final List<String> TOOL_NAMES = List.of("echo", "add", "slow", "large");

    /** Readable so a truncated payload can be spotted by eye; pure ASCII so chars equal bytes. */
    private static final String LARGE_PATTERN = "The quick brown fox jumps over the lazy dog. ";

    /** Receives progress of a long tool call; the session turns it into {@code notifications/progress}. */
    @FunctionalInterface
    interface ProgressReporter {
        /** A reporter for calls whose caller did not ask for progress. */
        ProgressReporter NONE = (progress, total, message) -> { };

        void report(long progress, long total, String message);
    }

    /** A tool argument that is missing or has the wrong type or range; its message goes to the caller. */
    private static final class BadArgumentException extends Exception {
        BadArgumentException(String message) {
            super(message, null, false, false);
        }
    }

    private final JsonNodeFactory nodes;
    private final ArrayNode toolList;

    DemoTools(JsonNodeFactory nodes) {
        this.nodes = requireNonNull(nodes, "nodes");
        this.toolList = buildToolList();
    }

    /** Whether {@code name} is one of this server's tools. */
    boolean isKnown(String name) {
        return TOOL_NAMES.contains(name);
    }

    /** The {@code tools} array of a {@code tools/list} result (a fresh copy, so callers may modify it). */
    ArrayNode list() {
        return toolList.deepCopy();
    }

    /**
     * Runs a known tool and returns its {@code CallToolResult}.
     *
     * @param name a name for which {@link #isKnown} is true
     * @param arguments the request's {@code arguments}, or {@code null} when it had none
     * @param progress where {@code slow} reports its steps
     */
    ObjectNode call(String name, JsonNode arguments, ProgressReporter progress) {
        requireNonNull(name, "name");
        requireNonNull(progress, "progress");
        try {
            JsonNode args = checkArgumentsObject(name, arguments);
            switch (name) {
                case "echo":
                    return textResult(requiredString(name, args, "text"), false);
                case "add":
                    return textResult(add(requiredNumber(name, args, "a"), requiredNumber(name, args, "b")), false);
                case "slow":
                    return slow(requiredLong(name, args, "ms", SLOW_MAX_MS), progress);
                case "large":
                    return textResult(large((int) requiredLong(name, args, "bytes", LARGE_MAX_BYTES)), false);
                default:
                    throw new IllegalArgumentException("name: " + name + " (expected: one of " + TOOL_NAMES + ")");
            }
        } catch (BadArgumentException e) {
            return textResult(e.getMessage(), true);
        }
    }

    private static JsonNode checkArgumentsObject(String tool, JsonNode arguments) throws BadArgumentException {
        if (arguments == null || arguments.isNull()) {
            // Let the per-argument checks name what is missing.
            return JsonNodeFactory.instance.objectNode();
        }
        if (!arguments.isObject()) {
            throw new BadArgumentException(tool + ": arguments must be an object, got " + describe(arguments));
        }
        return arguments;
    }

    private static String requiredString(String tool, JsonNode args, String field) throws BadArgumentException {
        JsonNode value = required(tool, args, field, "string");
        if (!value.isTextual()) {
            throw wrongType(tool, field, "string", value);
        }
        return value.textValue();
    }

    private static JsonNode requiredNumber(String tool, JsonNode args, String field) throws BadArgumentException {
        JsonNode value = required(tool, args, field, "number");
        if (!value.isNumber()) {
            throw wrongType(tool, field, "number", value);
        }
        return value;
    }

    /** An integer in {@code [0, max]}; {@code 5.0} counts as an integer, as in JSON Schema. */
    private static long requiredLong(String tool, JsonNode args, String field, long max) throws BadArgumentException {
        JsonNode value = required(tool, args, field, "integer");
        if (!value.isNumber() || !isIntegral(value)) {
            throw wrongType(tool, field, "integer", value);
        }
        BigDecimal number = value.decimalValue();
        if (number.signum() < 0 || number.compareTo(BigDecimal.valueOf(max)) > 0) {
            throw new BadArgumentException(tool + ": argument '" + field + "' is " + number.toPlainString()
                    + " (expected: an integer from 0 to " + max + ")");
        }
        return number.longValueExact();
    }

    private static JsonNode required(String tool, JsonNode args, String field, String type) throws BadArgumentException {
        JsonNode value = args.get(field);
        if (value == null || value.isNull()) {
            throw new BadArgumentException(tool + ": argument '" + field + "' is required (expected: " + type + ")");
        }
        return value;
    }

    private static BadArgumentException wrongType(String tool, String field, String expected, JsonNode value) {
        return new BadArgumentException(tool + ": argument '" + field + "' must be " + article(expected) + " "
                + expected + ", got " + describe(value));
    }

    private static String article(String word) {
        return "aeiou".indexOf(word.charAt(0)) >= 0 ? "an" : "a";
    }

    private static String describe(JsonNode value) {
        String type = value.isTextual() ? "string"
                : value.isNumber() ? "number"
                : value.isBoolean() ? "boolean"
                : value.isArray() ? "array"
                : value.isObject() ? "object"
                : "null";
        String text = value.toString();
        return type + " " + (text.length() > 40 ? text.substring(0, 40) + "..." : text);
    }

    private static boolean isIntegral(JsonNode number) {
        return number.isIntegralNumber() || number.canConvertToExactIntegral();
    }

    private static String add(JsonNode a, JsonNode b) {
        if (isIntegral(a) && isIntegral(b)) {
            // Exact, so 9007199254740993 + 1 does not silently round as a double would.
            return a.decimalValue().add(b.decimalValue()).toBigIntegerExact().toString();
        }
        return Double.toString(a.doubleValue() + b.doubleValue());
    }

    private ObjectNode slow(long ms, ProgressReporter progress) {
        long slept = 0;
        try {
            for (int step = 1; step <= SLOW_PROGRESS_STEPS; step++) {
                // Spread the remainder so the steps add up to exactly ms.
                long until = ms * step / SLOW_PROGRESS_STEPS;
                TimeUnit.MILLISECONDS.sleep(until - slept);
                slept = until;
                progress.report(step, SLOW_PROGRESS_STEPS, "slept " + slept + " of " + ms + " ms");
            }
        } catch (InterruptedException e) {
            // The server is shutting down and gave up waiting; say so rather than claim success.
            Thread.currentThread().interrupt();
            return textResult("slow: interrupted after " + slept + " of " + ms + " ms", true);
        }
        return textResult("slept " + ms + " ms", false);
    }

    private static String large(int bytes) {
        StringBuilder text = new StringBuilder(bytes);
        while (text.length() + LARGE_PATTERN.length() <= bytes) {
            text.append(LARGE_PATTERN);
        }
        text.append(LARGE_PATTERN, 0, bytes - text.length());
        return text.toString();
    }

    private ObjectNode textResult(String text, boolean isError) {
        ObjectNode result = nodes.objectNode();
        result.putArray("content").addObject().put("type", "text").put("text", text);
        result.put("isError", isError);
        return result;
    }

    private ArrayNode buildToolList() {
        ArrayNode tools = nodes.arrayNode();

        ObjectNode echo = addTool(tools, "echo", "Returns the given text unchanged.");
        property(echo, "text", "string", "The text to send back.");
        required(echo, "text");

        ObjectNode add = addTool(tools, "add",
                "Adds two numbers and returns the sum as text (integers stay integers, without \".0\").");
        property(add, "a", "number", "The first addend.");
        property(add, "b", "number", "The second addend.");
        required(add, "a", "b");

        ObjectNode slow = addTool(tools, "slow", "Sleeps for the given number of milliseconds, then returns "
                + "\"slept <ms> ms\". Sends " + SLOW_PROGRESS_STEPS + " progress notifications while sleeping "
                + "when the request carries a progress token.");
        property(slow, "ms", "integer", "How long to sleep, in milliseconds.")
                .put("minimum", 0).put("maximum", SLOW_MAX_MS);
        required(slow, "ms");

        ObjectNode large = addTool(tools, "large", "Returns a text of exactly the given number of ASCII characters "
                + "(a repeated sentence), for testing size limits. At most 64 MiB.");
        property(large, "bytes", "integer", "How many characters (= bytes, all ASCII) to return.")
                .put("minimum", 0).put("maximum", LARGE_MAX_BYTES);
        required(large, "bytes");

        return tools;
    }

    /** Appends a tool to {@code tools} and returns its {@code inputSchema}, an object schema without properties yet. */
    private static ObjectNode addTool(ArrayNode tools, String name, String description) {
        ObjectNode tool = tools.addObject();
        tool.put("name", name);
        tool.put("description", description);
        ObjectNode schema = tool.putObject("inputSchema");
        schema.put("type", "object");
        schema.putObject("properties");
        return schema;
    }

    /** Adds a property to an input schema and returns the property's schema, for further constraints. */
    private static ObjectNode property(ObjectNode inputSchema, String name, String type, String description) {
        return ((ObjectNode) inputSchema.get("properties")).putObject(name)
                .put("type", type)
                .put("description", description);
    }

    private static void required(ObjectNode inputSchema, String... names) {
        ArrayNode required = inputSchema.putArray("required");
        for (String name : names) {
            required.add(name);
        }
    }
}
