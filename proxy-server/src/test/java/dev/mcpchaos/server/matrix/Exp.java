package dev.mcpchaos.server.matrix;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.util.List;
import java.util.function.Predicate;

/** An expected message: exact text, or a property with a description (for a 4 KiB padded one). */
final class Exp {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final String description;
    private final Predicate<String> test;

    private Exp(String description, Predicate<String> test) {
        this.description = description;
        this.test = test;
    }

    static Exp is(String text) {
        return new Exp(text, text::equals);
    }

    /** Text matching a regular expression, described by {@code description}. */
    static Exp matching(String description, String regex) {
        return new Exp(description, text -> text.matches(regex));
    }

    /** A String is exact text; an Exp stays itself. */
    static Exp of(Object expected) {
        return expected instanceof Exp ? (Exp) expected : is((String) expected);
    }

    static List<Exp> list(Object... expected) {
        return java.util.Arrays.stream(expected).map(Exp::of).toList();
    }

    /**
     * {@code oversize}: exactly {@code size} bytes, and the original message once the padding
     * ({@code "dev.mcpchaos/padding"} under a {@code _meta}, and the members made to hold it) is
     * taken out again.
     */
    static Exp padded(String original, int size) {
        return new Exp(original + " padded to " + size + " B", text -> {
            if (text.length() != size) {
                return false;
            }
            try {
                return strip(JSON.readTree(text)).equals(JSON.readTree(original));
            } catch (IOException e) {
                return false;
            }
        });
    }

    private static JsonNode strip(JsonNode node) {
        if (node instanceof ObjectNode) {
            ObjectNode object = (ObjectNode) node;
            JsonNode padding = object.get("dev.mcpchaos/padding");
            if (padding != null && padding.isTextual() && padding.textValue().matches("x+")) {
                object.remove("dev.mcpchaos/padding"); // anything else under that name stays, and differs
            }
            for (String field : List.of("params", "result", "_meta")) {
                JsonNode child = object.get(field);
                if (child != null) {
                    strip(child);
                    // An empty object was made to hold the padding: no scripted message has one.
                    if (child.isObject() && child.isEmpty()) {
                        object.remove(field);
                    }
                }
            }
        }
        return node;
    }

    boolean test(String actual) {
        return actual != null && test.test(actual);
    }

    @Override
    public String toString() {
        return description.length() <= 200 ? description : description.substring(0, 200) + "...";
    }
}
