package dev.mcpchaos.server.drill;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * What the drill found for one scenario, and why.
 *
 * @param scenario the scenario's name
 * @param level how strongly the protocol asks for it
 * @param outcome the verdict
 * @param reason one sentence: what decided it
 * @param evidence the journal lines (and timings) that decided it; may be empty
 * @param clientExit the client's exit code, or null when it was stopped at the timeout or never ran
 * @param took how long the client ran
 */
public record Verdict(String scenario, Level level, Outcome outcome, String reason, List<String> evidence,
                      Integer clientExit, Duration took) {

    public Verdict {
        Objects.requireNonNull(scenario, "scenario");
        Objects.requireNonNull(level, "level");
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(reason, "reason");
        evidence = evidence == null ? List.of() : List.copyOf(evidence);
        took = took == null ? Duration.ZERO : took;
    }

    /** Whether this verdict makes the drill fail: a MUST scenario that failed. */
    public boolean failsTheDrill() {
        return outcome == Outcome.FAIL && level == Level.MUST;
    }
}
