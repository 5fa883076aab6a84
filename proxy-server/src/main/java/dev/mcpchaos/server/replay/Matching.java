package dev.mcpchaos.server.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.server.record.RedactPath;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * How a replay matches live requests to recorded ones: a {@link MatchMode} and paths left out of
 * the comparison ({@code --match-ignore}: a JSON pointer or a dotted glob from the message's root,
 * as {@link RedactPath}, such as {@code /params/arguments/requestTime} or {@code params.arguments.*.ts}).
 */
public final class Matching {

    /** {@link MatchMode#DEFAULT}, nothing more left out. */
    public static final Matching DEFAULT = new Matching(MatchMode.DEFAULT, List.of());

    private final MatchMode mode;
    private final List<RedactPath> ignore;

    private Matching(MatchMode mode, List<RedactPath> ignore) {
        this.mode = mode;
        this.ignore = ignore;
    }

    /**
     * @param mode   how to match
     * @param ignore paths left out of the comparison, each a JSON pointer or a dotted glob
     * @throws IllegalArgumentException naming a path that is neither
     */
    public static Matching of(MatchMode mode, List<String> ignore) {
        Objects.requireNonNull(mode, "mode");
        List<RedactPath> paths = new ArrayList<>();
        for (String path : Objects.requireNonNull(ignore, "ignore")) {
            try {
                paths.add(RedactPath.parse(path));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("'" + path + "' (expected: a JSON pointer such as "
                        + "/params/arguments/time, or a dotted glob such as params.arguments.* or params.**.time)");
            }
        }
        return new Matching(mode, List.copyOf(paths));
    }

    /** The mode. */
    public MatchMode mode() {
        return mode;
    }

    /** The paths left out, as given. */
    public List<String> ignore() {
        return ignore.stream().map(RedactPath::toString).toList();
    }

    /** {@code message} without the values at the ignored paths: a copy, or {@code message} itself when there are none. */
    JsonNode withoutIgnored(JsonNode message) {
        if (ignore.isEmpty()) {
            return message;
        }
        JsonNode copy = message.deepCopy();
        remove(copy, new ArrayList<>());
        return copy;
    }

    private void remove(JsonNode node, List<String> path) {
        if (node instanceof ObjectNode object) {
            for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> field = it.next();
                path.add(field.getKey());
                if (ignored(path)) {
                    it.remove();
                } else {
                    remove(field.getValue(), path);
                }
                path.remove(path.size() - 1);
            }
        } else if (node instanceof ArrayNode array) {
            // Backwards, so that a removed element does not shift the indices still to be tested.
            for (int i = array.size() - 1; i >= 0; i--) {
                path.add(Integer.toString(i));
                if (ignored(path)) {
                    array.remove(i);
                } else {
                    remove(array.get(i), path);
                }
                path.remove(path.size() - 1);
            }
        }
    }

    private boolean ignored(List<String> path) {
        for (RedactPath p : ignore) {
            if (p.matches(path)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return mode.name().toLowerCase(java.util.Locale.ROOT) + (ignore.isEmpty() ? "" : " ignoring " + ignore);
    }
}
