package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.transport.TransportKind;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * What a fault is to everything but its own {@link Fault#apply}: its name in rule files
 * ({@code fault.type}), the parameters it takes, the transports it works on, and how to make it.
 * Each fault class declares its own as {@code public static final FaultType TYPE}, and
 * {@link FaultRegistry} lists those; no other main code spells a fault's name (the Java rule
 * factories take it from here), and what names its parameters is checked against this: the parser
 * refuses a key the type does not declare, and a guard test compares {@code docs/rules.md}'s
 * tables with it.
 *
 * <pre>{@code
 * public final class StutterFault extends DeclaredFault {
 *     public static final FaultType TYPE = FaultType.of("stutter", StutterFault::create,
 *             FaultParameter.optional("copies", "1"));
 *     ...
 * }
 * }</pre>
 *
 * <p>{@link #create} hands the factory a {@link FaultParams} that refuses, before the factory runs,
 * any key not declared here, and after it, any key the factory never looked at; and that throws
 * {@link IllegalStateException} when the factory reads a key not declared (a fault's own bug,
 * which its first test finds).
 */
public final class FaultType {

    private final String name;
    private final Function<FaultParams, ? extends Fault> factory;
    private final List<FaultParameter> parameters;
    private final Set<TransportKind> transports;
    private final Effect effect;

    /**
     * What a fault of this type does to a message or a connection beyond its own message, for
     * whoever judges the peers (the referee): an answer owed by a peer that never got its request,
     * or that a fault is holding back, is not that peer's to give.
     */
    public enum Effect {
        /** Nothing beyond what its events say of the message it acted on. */
        NONE,
        /** Holds messages back for a while (a late answer is the fault's, not the peer's). */
        HOLDS,
        /** Ends the connection or the server (what was owed then is owed by nobody). */
        ENDS_CONNECTION
    }

    private FaultType(String name, Function<FaultParams, ? extends Fault> factory, List<FaultParameter> parameters,
                      Set<TransportKind> transports, Effect effect) {
        this.name = name;
        this.factory = factory;
        this.parameters = parameters;
        this.transports = transports;
        this.effect = effect;
    }

    /**
     * A fault type that works on every transport.
     *
     * @param name its {@code fault.type}: lower case, words joined by {@code _}
     * @param factory makes the fault from its parameters, reading them with {@link FaultParams}'
     *                getters, which throw {@link InvalidParameterException} for a bad value
     * @param parameters every key it takes, in the reference's order
     */
    public static FaultType of(String name, Function<FaultParams, ? extends Fault> factory,
                               FaultParameter... parameters) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(factory, "factory");
        if (!name.matches("[a-z][a-z0-9_]*")) {
            throw new IllegalArgumentException("name: '" + name + "' (expected: lower case words joined by _)");
        }
        List<FaultParameter> list = List.of(parameters);
        Set<String> keys = new LinkedHashSet<>();
        for (FaultParameter p : list) {
            if (!keys.add(p.name())) {
                throw new IllegalArgumentException(name + ": parameter '" + p.name() + "' declared twice");
            }
        }
        return new FaultType(name, factory, list, Collections.unmodifiableSet(EnumSet.allOf(TransportKind.class)),
                Effect.NONE);
    }

    /** This type, working on {@code transport} only (an HTTP status means nothing on stdio). */
    public FaultType only(TransportKind transport) {
        Objects.requireNonNull(transport, "transport");
        return new FaultType(name, factory, parameters, Collections.unmodifiableSet(EnumSet.of(transport)), effect);
    }

    /** This type, with {@code effect} beyond its own message (see {@link Effect}). */
    public FaultType effect(Effect effect) {
        return new FaultType(name, factory, parameters, transports, Objects.requireNonNull(effect, "effect"));
    }

    /** What it does beyond its own message; {@link Effect#NONE} unless its file says otherwise. */
    public Effect effect() {
        return effect;
    }

    /** Its {@code fault.type}, such as {@code latency}. */
    public String name() {
        return name;
    }

    /** The parameters it takes, in the reference's order. */
    public List<FaultParameter> parameters() {
        return parameters;
    }

    /** The keys of {@link #parameters()}. */
    public List<String> parameterNames() {
        List<String> names = new ArrayList<>(parameters.size());
        parameters.forEach(p -> names.add(p.name()));
        return Collections.unmodifiableList(names);
    }

    /** The transports it works on; a rule with it is refused on the others. */
    public Set<TransportKind> transports() {
        return transports;
    }

    /** Whether it works on {@code transport}; what {@link Fault#supports} of its faults answers. */
    public boolean supports(TransportKind transport) {
        return transports.contains(transport);
    }

    /**
     * Makes a fault from {@code params}, refusing keys it does not take.
     *
     * @throws InvalidParameterException for a bad value, a missing required parameter, a key this
     *                                   type does not declare ({@code latncy: unknown key (expected:
     *                                   a parameter of latency: one of latency, jitter, distribution)}),
     *                                   or one its factory never looked at
     */
    public Fault create(FaultParams params) {
        Objects.requireNonNull(params, "params");
        FaultParams reader = params.readerFor(this);
        // Unknown keys first: a misspelt parameter is the likely reason a required one is "missing".
        reader.refuseUndeclared();
        Fault fault = factory.apply(reader);
        reader.refuseUnread();
        return fault;
    }

    /** What a key that is not a parameter of this type was expected to be, for the message. */
    String expectedKeys() {
        return parameters.isEmpty() ? "no parameter: " + name + " takes none"
                : "a parameter of " + name + ": one of " + String.join(", ", parameterNames());
    }

    boolean declares(String key) {
        return parameters.stream().anyMatch(p -> p.name().equals(key));
    }

    @Override
    public String toString() {
        return name + parameterNames() + (transports.size() == 1
                ? " (" + transports.iterator().next().name().toLowerCase(Locale.ROOT) + " only)" : "");
    }

    /** For {@link FaultRegistry}: refuses two types of one name. */
    static void requireDistinct(FaultType... types) {
        Set<String> names = new LinkedHashSet<>();
        Arrays.stream(types).forEach(t -> {
            if (!names.add(t.name)) {
                throw new IllegalStateException("two fault types named '" + t.name + "'");
            }
        });
    }
}
