package dev.mcpchaos.rules.fault;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Every fault type a rule file can name, by its {@code fault.type}: one line per fault.
 */
public final class FaultRegistry {

    /** Makes a fault from its parameters, validating them. */
    @FunctionalInterface
    public interface Factory {
        /**
         * @throws InvalidParameterException naming the parameter, the value and what was expected
         */
        Fault create(FaultParams params);
    }

    /** A fault type: how to make it, and the parameters it takes (anything else is refused). */
    private record Entry(Factory factory, List<String> parameters) {
    }

    private static final Map<String, Entry> TYPES = new LinkedHashMap<>();

    static {
        add("latency", LatencyFault::create, "latency", "jitter", "distribution");
        add("drop", DropFault::create);
        add("duplicate", DuplicateFault::create, "copies");
        add("reorder", ReorderFault::create, "window", "hold");
        add("truncate", TruncateFault::create, "at", "fraction");
        add("corrupt", CorruptFault::create, "mode");
        add("oversize", OversizeFault::create, "size");
        add("error", ErrorFault::create, "code", "message", "data");
        add("tool_error", ToolErrorFault::create, "text");
        add("http_status", HttpStatusFault::create, "status", "headers", "body");
        add("invalid_content_type", InvalidContentTypeFault::create, "content_type");
        add("disconnect", DisconnectFault::create, "side");
        add("blackhole", BlackholeFault::create);
        add("throttle", ThrottleFault::create, "rate", "chunk", "interval");
        add("noise", NoiseFault::create, "text");
        add("mutate", MutateFault::create, "patch");
        add("id_mismatch", IdMismatchFault::create, "id");
        add("session_expire", SessionExpireFault::create);
        add("crash", CrashFault::create, "signal");
    }

    private static void add(String type, Factory factory, String... parameters) {
        TYPES.put(type, new Entry(factory, List.of(parameters)));
    }

    private FaultRegistry() {
    }

    /** The parameters a fault type takes, such as {@code [latency, jitter, distribution]}. */
    public static List<String> parameters(String type) {
        Entry entry = TYPES.get(type);
        return entry == null ? List.of() : entry.parameters;
    }

    /** The fault types, in the order of the reference (docs/rules.md). */
    public static Set<String> types() {
        return Collections.unmodifiableSet(TYPES.keySet());
    }

    /**
     * Makes a fault of {@code type} from its parameters and refuses parameters it does not take.
     *
     * @throws IllegalArgumentException when {@code type} is not a fault type
     * @throws InvalidParameterException for a bad or unknown parameter
     */
    public static Fault create(String type, FaultParams params) {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(params, "params");
        Entry entry = TYPES.get(type);
        if (entry == null) {
            throw new IllegalArgumentException("type: '" + type + "' (expected: one of " + String.join(", ", types())
                    + ')');
        }
        // Unknown keys first: a misspelt parameter is the likely reason a required one is "missing".
        params.requireOnly(entry.parameters);
        return entry.factory.create(params);
    }
}
