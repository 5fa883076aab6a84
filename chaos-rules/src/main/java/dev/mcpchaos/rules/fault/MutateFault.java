package dev.mcpchaos.rules.fault;

import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.internal.Json;
import dev.mcpchaos.rules.internal.JsonPatch;
import dev.mcpchaos.rules.internal.Text;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * {@code mutate}: schema drift. The message is changed by an RFC 6902 JSON Patch ({@code add},
 * {@code remove}, {@code replace}, {@code move}, {@code copy}, {@code test}): remove a tool from a
 * {@code tools/list} result, drop a required property, rename a field, change a type. Only this
 * message is parsed (into a tree), patched and written again. The patch applies whole or not at
 * all: when an operation fails (a {@code test} that does not hold, a path that is not there), or
 * the patch changes nothing, the message passes unchanged and that is not an injection
 * ({@link FaultContext#nothingToDo}; the fault log says which operation failed).
 */
public final class MutateFault extends DeclaredFault {

    /** {@code mutate}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("mutate", MutateFault::create,
            FaultParameter.required("patch"));

    private static final Set<String> OP_KEYS = Set.of("op", "path", "from", "value");
    private static final String OPS = "one of add, remove, replace, move, copy, test";

    /** @param patch the operations, at least one */
    public record Config(List<JsonPatch.Operation> patch) {
        public Config {
            patch = List.copyOf(Objects.requireNonNull(patch, "patch"));
            InvalidParameterException.check(!patch.isEmpty(), "patch", "[]", "at least one operation");
        }

        /** Reads {@code patch} (required): a list of {@code {op, path, from, value}} mappings. */
        static Config from(FaultParams params) {
            JsonNode patch = params.json("patch");
            if (patch == null || !patch.isArray()) {
                throw new InvalidParameterException("patch", Text.given(patch),
                        "a list of JSON Patch operations, such as [{op: remove, path: /result/tools/0}]");
            }
            List<JsonPatch.Operation> ops = new ArrayList<>();
            for (int i = 0; i < patch.size(); i++) {
                ops.add(operation(patch.get(i), "patch[" + i + "]"));
            }
            return new Config(ops);
        }

        private static JsonPatch.Operation operation(JsonNode node, String at) {
            if (!node.isObject()) {
                throw new InvalidParameterException(at, Text.given(node), "a mapping with op and path");
            }
            for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
                String key = it.next();
                if (!OP_KEYS.contains(key)) {
                    throw new InvalidParameterException(at + '.' + key, "unknown key", "one of op, path, from, value");
                }
            }
            JsonNode opNode = node.get("op");
            JsonPatch.OpType op = null;
            if (opNode != null && opNode.isTextual()) {
                for (JsonPatch.OpType type : JsonPatch.OpType.values()) {
                    if (type.name().toLowerCase(Locale.ROOT).equals(opNode.textValue())) {
                        op = type;
                    }
                }
            }
            if (op == null) {
                throw new InvalidParameterException(at + ".op", Text.given(opNode), OPS);
            }
            JsonPointer path = pointer(node.get("path"), at + ".path");
            JsonPointer from = null;
            if (op == JsonPatch.OpType.MOVE || op == JsonPatch.OpType.COPY) {
                from = pointer(node.get("from"), at + ".from");
            } else if (node.has("from")) {
                throw new InvalidParameterException(at + ".from", Text.given(node.get("from")),
                        "no from with op " + opNode.textValue() + " (only move and copy take one)");
            }
            JsonNode value = node.get("value");
            boolean needsValue = op == JsonPatch.OpType.ADD || op == JsonPatch.OpType.REPLACE
                    || op == JsonPatch.OpType.TEST;
            if (needsValue && value == null) {
                throw new InvalidParameterException(at + ".value", "missing", "the value to " + opNode.textValue());
            }
            if (!needsValue && value != null) {
                throw new InvalidParameterException(at + ".value", Text.given(value),
                        "no value with op " + opNode.textValue());
            }
            return new JsonPatch.Operation(op, path, from, value);
        }

        private static JsonPointer pointer(JsonNode node, String at) {
            String expected = "a JSON Pointer, such as /result/tools/0 (or \"\" for the whole message)";
            if (node == null || !node.isTextual()) {
                throw new InvalidParameterException(at, Text.given(node), expected);
            }
            try {
                return JsonPointer.compile(node.textValue());
            } catch (IllegalArgumentException e) {
                throw new InvalidParameterException(at, Text.given(node), expected);
            }
        }
    }

    private final Config config;

    /** A fault with this configuration (validated by the record). */
    public MutateFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
    }

    static MutateFault create(FaultParams params) {
        return new MutateFault(Config.from(params));
    }

    @Override
    public boolean canApply(Frame frame) {
        MessageKind kind = frame.envelope().kind();
        return kind != MessageKind.MALFORMED && kind != MessageKind.BLANK;
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        JsonNode message;
        JsonNode patched;
        try {
            message = Json.MAPPER.readTree(Edits.bytes(frame));
            patched = JsonPatch.apply(message, config.patch);
        } catch (JsonPatch.PatchException e) {
            ctx.nothingToDo(frame, "patch not applied: " + e.getMessage());
            return;
        } catch (IOException e) {
            ctx.nothingToDo(frame, "not JSON");
            return;
        }
        if (patched.equals(message)) {
            // Only tests that held, or a replace with the value already there: no drift to inject.
            ctx.nothingToDo(frame, "the patch changes nothing in this message");
            return;
        }
        if (patched.isMissingNode()) {
            ctx.detail("the patch removed the whole message; dropped");
            ctx.drop(frame);
            return;
        }
        byte[] bytes;
        try {
            bytes = Json.MAPPER.writeValueAsBytes(patched);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write a patched tree", e);
        }
        ctx.detail("patched (" + config.patch.size() + " operation" + (config.patch.size() == 1 ? "" : "s") + ")");
        ctx.proceed(Edits.replace(ctx, frame, bytes));
    }

    @Override
    public String toString() {
        return "mutate" + config.patch;
    }
}
