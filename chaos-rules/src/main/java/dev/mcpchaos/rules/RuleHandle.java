package dev.mcpchaos.rules;

import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * One rule of a running proxy, by name: made by {@link Chaos#add} and {@link Chaos#rule}. It
 * holds no state of its own: every call acts on the rule named so at that moment.
 */
public final class RuleHandle {

    private final Chaos chaos;
    private final String name;

    /** A handle on the rule {@code name} of {@code chaos}; for {@link Chaos} implementations. */
    public RuleHandle(Chaos chaos, String name) {
        this.chaos = Objects.requireNonNull(chaos, "chaos");
        this.name = Objects.requireNonNull(name, "name");
    }

    /** The rule's name. */
    public String name() {
        return name;
    }

    /**
     * Removes the rule: the next message does not meet it.
     *
     * @throws NoSuchElementException when it is gone already
     */
    public void remove() {
        chaos.remove(name);
    }

    /** Switches the rule on (its counters start again). */
    public void enable() {
        chaos.enabled(name, true);
    }

    /** Switches the rule off, keeping it. */
    public void disable() {
        chaos.enabled(name, false);
    }

    /**
     * The rule's counters now: how many messages it matched and injected since it was added,
     * last changed or reset.
     *
     * @throws NoSuchElementException when it is gone
     */
    public RuleStats stats() {
        return chaos.rules().stream().filter(s -> s.name().equals(name)).findFirst()
                .orElseThrow(() -> new NoSuchElementException("rule '" + name + "': no rule has this name"));
    }

    /** How many times it injected its fault; see {@link #stats()}. */
    public long injected() {
        return stats().injected();
    }

    /** How many messages it matched; see {@link #stats()}. */
    public long matched() {
        return stats().matched();
    }

    @Override
    public String toString() {
        return "RuleHandle('" + name + "')";
    }
}
