package dev.mcpchaos.rules;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.fault.Fault;
import dev.mcpchaos.rules.fault.InvalidParameterException;
import dev.mcpchaos.rules.internal.Text;
import dev.mcpchaos.rules.match.MessageMatch;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * One rule: which messages it picks ({@link MessageMatch}), when and how often it acts
 * ({@code probability}, {@code after}, {@code times}, {@code start}, {@code duration}), and the
 * {@link Fault} it applies. Immutable; the counters live in the engine.
 *
 * <p>Made by the rule file loader ({@link RuleSet#load}) or by {@link #builder(String, Fault)}.
 */
public final class Rule {

    private final String name;
    private final boolean enabled;
    private final MessageMatch match;
    private final double probability;
    private final long after;
    private final long times;
    private final Duration start;
    private final Duration duration;
    private final Fault fault;
    /** The rule as written in its file (or API body), or null when it was built in code. */
    private final ObjectNode definition;

    private Rule(Builder b) {
        name = b.name;
        enabled = b.enabled;
        match = b.match;
        probability = b.probability;
        after = b.after;
        times = b.times;
        start = b.start;
        duration = b.duration;
        fault = b.fault;
        definition = b.definition;
    }

    /** A builder for a rule named {@code name} (unique in its set) applying {@code fault}. */
    public static Builder builder(String name, Fault fault) {
        return new Builder(name, fault);
    }

    /** The rule's name, unique in its set; it also seeds the rule's random source. */
    public String name() {
        return name;
    }

    /** Whether the rule acts at all; a disabled rule is kept (and validated) but never applied. */
    public boolean enabled() {
        return enabled;
    }

    public MessageMatch match() {
        return match;
    }

    /** The chance, from 0 to 1, that an eligible match is injected; drawn from the seeded source. */
    public double probability() {
        return probability;
    }

    /** How many matches pass untouched before the rule starts injecting. */
    public long after() {
        return after;
    }

    /** The most injections, or empty for no limit. */
    public OptionalLong times() {
        return times == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(times);
    }

    /** How long after the proxy started the rule becomes active. */
    public Duration start() {
        return start;
    }

    /** How long the rule stays active after {@link #start()}, or empty for ever. */
    public Optional<Duration> duration() {
        return Optional.ofNullable(duration);
    }

    public Fault fault() {
        return fault;
    }

    long timesOrMax() {
        return times;
    }

    /**
     * The rule as it was written (a copy the caller may change), or null when it was built in
     * code. What {@code GET /rules} shows, and what a change to the rule is merged into.
     */
    ObjectNode definition() {
        return definition == null ? null : definition.deepCopy();
    }

    /**
     * Whether {@code other} is the same rule: the same object, or both read from text with equal
     * definitions. A rule that stays the same through a change of the rule set keeps its counters.
     */
    boolean sameAs(Rule other) {
        return this == other || definition != null && other.definition != null && definition.equals(other.definition);
    }

    /** This rule, switched on or off; everything else (and the definition, apart from {@code enabled}) kept. */
    Rule withEnabled(boolean on) {
        Builder b = new Builder(name, fault).match(match).probability(probability).after(after).start(start)
                .enabled(on);
        b.times = times;
        b.duration = duration;
        if (definition != null) {
            ObjectNode changed = definition.deepCopy();
            changed.put("enabled", on);
            b.definition = changed;
        }
        return b.build();
    }

    /**
     * Refuses this rule on {@code transport} when its fault or match cannot work there.
     *
     * @param why says where the transport comes from, such as {@code the rule's match.transport is stdio}
     * @throws IllegalArgumentException {@code <fault type>: only applies to the <transport> transport (<why>)}
     */
    void requireUsableOn(TransportKind transport, String why) {
        if (!fault.supports(transport)) {
            throw new IllegalArgumentException(fault.type() + ": only applies to the " + supportedBy(fault)
                    + " (" + why + ')');
        }
        if (!match.headers().isEmpty() && transport != TransportKind.HTTP) {
            throw new IllegalArgumentException("match.headers: only applies to the http transport (" + why + ')');
        }
    }

    private static String supportedBy(Fault fault) {
        StringBuilder sb = new StringBuilder();
        for (TransportKind kind : TransportKind.values()) {
            if (fault.supports(kind)) {
                sb.append(sb.length() == 0 ? "" : " and ").append(kind.name().toLowerCase(Locale.ROOT));
            }
        }
        return sb.length() == 0 ? "no transport" : sb + " transport";
    }

    @Override
    public String toString() {
        return "Rule('" + name + "', " + match + ", " + fault + (enabled ? "" : ", disabled") + ')';
    }

    /** Builds a {@link Rule}; every setting but the name and fault has a default. */
    public static final class Builder {
        private final String name;
        private final Fault fault;
        private boolean enabled = true;
        private MessageMatch match = MessageMatch.ANY;
        private double probability = 1.0;
        private long after;
        private long times = Long.MAX_VALUE;
        private Duration start = Duration.ZERO;
        private Duration duration;
        private ObjectNode definition;

        private Builder(String name, Fault fault) {
            this.name = Objects.requireNonNull(name, "name");
            this.fault = Objects.requireNonNull(fault, "fault");
            InvalidParameterException.check(!name.isBlank(), "name", "''", "a name that is not empty");
        }

        /** Default true. */
        public Builder enabled(boolean enabled) {
            this.enabled = enabled;
            return this;
        }

        /** Default: every message that is not blank. */
        public Builder match(MessageMatch match) {
            this.match = Objects.requireNonNull(match, "match");
            return this;
        }

        /** From 0 to 1; default 1. */
        public Builder probability(double probability) {
            InvalidParameterException.check(probability >= 0 && probability <= 1, "probability", probability,
                    "a number from 0 to 1, such as 0.3");
            this.probability = probability;
            return this;
        }

        /** Matches that pass untouched first; >= 0, default 0. */
        public Builder after(long after) {
            InvalidParameterException.check(after >= 0, "after", after, "a whole number >= 0");
            this.after = after;
            return this;
        }

        /** The most injections; >= 1, default no limit. */
        public Builder times(long times) {
            InvalidParameterException.check(times >= 1, "times", times, "a whole number >= 1");
            this.times = times;
            return this;
        }

        /** Active from this long after the proxy started; >= 0, default 0. */
        public Builder start(Duration start) {
            Objects.requireNonNull(start, "start");
            InvalidParameterException.check(!start.isNegative(), "start", Text.quote(Text.duration(start)),
                    "a duration >= 0, such as 5s");
            this.start = start;
            return this;
        }

        /** Active for this long from {@link #start}; > 0, default for ever. */
        public Builder duration(Duration duration) {
            Objects.requireNonNull(duration, "duration");
            InvalidParameterException.check(!duration.isNegative() && !duration.isZero(), "duration",
                    Text.quote(Text.duration(duration)), "a duration > 0, such as 60s");
            this.duration = duration;
            return this;
        }

        /** The rule as written; kept by the rule file parser. */
        Builder definition(ObjectNode definition) {
            this.definition = definition;
            return this;
        }

        /**
         * @throws IllegalArgumentException when the match's transport is one the fault does not
         *                                  work on, or headers are matched off HTTP
         */
        public Rule build() {
            Rule rule = new Rule(this);
            if (match.transport() != null) {
                rule.requireUsableOn(match.transport(), "the rule's match.transport is "
                        + match.transport().name().toLowerCase(Locale.ROOT));
            }
            return rule;
        }
    }
}
