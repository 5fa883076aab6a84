package dev.mcpchaos.rules.internal;

import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.math.BigDecimal;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * RFC 6902 JSON Patch over Jackson trees: {@code add}, {@code remove}, {@code replace},
 * {@code move}, {@code copy}, {@code test}. A patch applies whole or not at all. Numbers compare
 * by value in {@code test} ({@code 1} equals {@code 1.0}). Not API.
 */
public final class JsonPatch {

    /** The six operations of RFC 6902. */
    public enum OpType { ADD, REMOVE, REPLACE, MOVE, COPY, TEST }

    /** One operation; {@code from} is set for move and copy, {@code value} for add, replace and test. */
    public record Operation(OpType op, JsonPointer path, JsonPointer from, JsonNode value) {
        public Operation {
            Objects.requireNonNull(op, "op");
            Objects.requireNonNull(path, "path");
        }

        @Override
        public String toString() {
            return op.name().toLowerCase(Locale.ROOT) + ' ' + (from != null ? from + " -> " : "") + path;
        }
    }

    /** Why a patch did not apply: which operation (from 0) and what was wrong. */
    public static final class PatchException extends Exception {
        private static final long serialVersionUID = 1L;

        PatchException(int index, Operation operation, String reason) {
            super("operation " + index + " (" + operation + "): " + reason, null, false, false);
        }
    }

    private static final Comparator<JsonNode> NUMERIC_AWARE = (a, b) -> {
        if (a.equals(b)) {
            return 0;
        }
        if (a.isNumber() && b.isNumber()) {
            return new BigDecimal(a.asText()).compareTo(new BigDecimal(b.asText())) == 0 ? 0 : 1;
        }
        return 1;
    };

    private JsonPatch() {
    }

    /**
     * Applies the operations in order to a copy of {@code document} and returns it.
     *
     * @throws PatchException when an operation cannot apply; {@code document} is untouched
     */
    public static JsonNode apply(JsonNode document, List<Operation> operations) throws PatchException {
        JsonNode doc = document.deepCopy();
        for (int i = 0; i < operations.size(); i++) {
            Operation op = operations.get(i);
            doc = applyOne(doc, op, i);
        }
        return doc;
    }

    private static JsonNode applyOne(JsonNode doc, Operation op, int index) throws PatchException {
        switch (op.op) {
            case ADD:
                return add(doc, op.path, op.value.deepCopy(), op, index);
            case REMOVE:
                require(doc, op.path, op, index);
                return remove(doc, op.path, op, index);
            case REPLACE:
                require(doc, op.path, op, index);
                return add(remove(doc, op.path, op, index), op.path, op.value.deepCopy(), op, index);
            case MOVE: {
                JsonNode moved = require(doc, op.from, op, index);
                if (isProperPrefix(op.from, op.path)) {
                    throw new PatchException(index, op, "cannot move a value into itself");
                }
                return add(remove(doc, op.from, op, index), op.path, moved, op, index);
            }
            case COPY:
                return add(doc, op.path, require(doc, op.from, op, index).deepCopy(), op, index);
            case TEST: {
                JsonNode actual = require(doc, op.path, op, index);
                if (!actual.equals(NUMERIC_AWARE, op.value)) {
                    throw new PatchException(index, op, "test failed: the value is " + abbreviate(actual));
                }
                return doc;
            }
            default:
                throw new IllegalStateException("op: " + op.op);
        }
    }

    private static JsonNode require(JsonNode doc, JsonPointer pointer, Operation op, int index) throws PatchException {
        JsonNode node = doc.at(pointer);
        if (node.isMissingNode()) {
            throw new PatchException(index, op, "no value at " + (pointer.toString().isEmpty() ? "the root" : pointer));
        }
        return node;
    }

    private static JsonNode add(JsonNode doc, JsonPointer path, JsonNode value, Operation op, int index)
            throws PatchException {
        if (path.matches()) {
            return value; // the whole document
        }
        JsonNode parent = doc.at(path.head());
        String last = path.last().getMatchingProperty();
        if (parent instanceof ObjectNode) {
            ((ObjectNode) parent).set(last, value);
        } else if (parent instanceof ArrayNode) {
            ArrayNode array = (ArrayNode) parent;
            int at = "-".equals(last) ? array.size() : arrayIndex(last, array.size(), op, index);
            array.insert(at, value);
        } else {
            throw new PatchException(index, op, "no object or array at " + pathOrRoot(path.head()));
        }
        return doc;
    }

    private static JsonNode remove(JsonNode doc, JsonPointer path, Operation op, int index) throws PatchException {
        if (path.matches()) {
            return MissingNode.getInstance();
        }
        JsonNode parent = doc.at(path.head());
        String last = path.last().getMatchingProperty();
        if (parent instanceof ObjectNode) {
            ((ObjectNode) parent).remove(last);
        } else if (parent instanceof ArrayNode) {
            ArrayNode array = (ArrayNode) parent;
            array.remove(arrayIndex(last, array.size() - 1, op, index));
        } else {
            throw new PatchException(index, op, "no object or array at " + pathOrRoot(path.head()));
        }
        return doc;
    }

    private static int arrayIndex(String segment, int max, Operation op, int index) throws PatchException {
        if (!segment.matches("0|[1-9][0-9]{0,8}")) {
            throw new PatchException(index, op, "'" + segment + "' is not an array index");
        }
        int i = Integer.parseInt(segment);
        if (i > max) {
            throw new PatchException(index, op, "index " + i + " is out of bounds (at most " + max + ")");
        }
        return i;
    }

    private static boolean isProperPrefix(JsonPointer prefix, JsonPointer path) {
        String p = prefix.toString();
        String q = path.toString();
        return q.startsWith(p + "/");
    }

    private static String pathOrRoot(JsonPointer pointer) {
        return pointer.matches() ? "the root" : pointer.toString();
    }

    private static String abbreviate(JsonNode node) {
        String text = node.toString();
        return text.length() > 60 ? text.substring(0, 57) + "..." : text;
    }
}
