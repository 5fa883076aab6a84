package dev.mcpchaos.rules.fault;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Every fault type a rule file can name, by its {@code fault.type}: the list of the fault
 * classes' {@link FaultType}s. Each type's name and parameters are declared in its own class;
 * adding a fault adds one line here.
 */
public final class FaultRegistry {

    /** In the order of the reference (docs/rules.md). */
    private static final List<FaultType> ALL = List.of(
            LatencyFault.TYPE,
            DropFault.TYPE,
            DuplicateFault.TYPE,
            ReorderFault.TYPE,
            TruncateFault.TYPE,
            CorruptFault.TYPE,
            OversizeFault.TYPE,
            ErrorFault.TYPE,
            ToolErrorFault.TYPE,
            HttpStatusFault.TYPE,
            InvalidContentTypeFault.TYPE,
            DisconnectFault.TYPE,
            BlackholeFault.TYPE,
            ThrottleFault.TYPE,
            NoiseFault.TYPE,
            MutateFault.TYPE,
            IdMismatchFault.TYPE,
            SessionExpireFault.TYPE,
            SseRetryFault.TYPE,
            ResumeGapFault.TYPE,
            ResumeRepeatFault.TYPE,
            GetStreamDropFault.TYPE,
            PrimingDropFault.TYPE,
            CrashFault.TYPE,
            InputRequiredFault.TYPE,
            HeaderMismatchFault.TYPE);

    private static final Map<String, FaultType> BY_NAME = new LinkedHashMap<>();

    static {
        FaultType.requireDistinct(ALL.toArray(FaultType[]::new));
        ALL.forEach(t -> BY_NAME.put(t.name(), t));
    }

    private FaultRegistry() {
    }

    /** Every fault type, in the order of the reference (docs/rules.md). */
    public static List<FaultType> all() {
        return ALL;
    }

    /** The fault type of this name, if there is one. */
    public static Optional<FaultType> find(String type) {
        return Optional.ofNullable(BY_NAME.get(Objects.requireNonNull(type, "type")));
    }

    /** The parameters a fault type takes, such as {@code [latency, jitter, distribution]}; empty for no type. */
    public static List<String> parameters(String type) {
        return find(type).map(FaultType::parameterNames).orElse(List.of());
    }

    /** The fault types' names, in the order of the reference (docs/rules.md). */
    public static Set<String> types() {
        return Collections.unmodifiableSet(BY_NAME.keySet());
    }

    /**
     * Makes a fault of {@code type} from its parameters and refuses parameters it does not take.
     *
     * @throws IllegalArgumentException when {@code type} is not a fault type
     * @throws InvalidParameterException for a bad or unknown parameter
     */
    public static Fault create(String type, FaultParams params) {
        Objects.requireNonNull(params, "params");
        FaultType found = find(type).orElseThrow(() -> new IllegalArgumentException("type: '" + type
                + "' (expected: one of " + String.join(", ", types()) + ')'));
        return found.create(params);
    }
}
