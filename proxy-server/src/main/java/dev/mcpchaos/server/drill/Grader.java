package dev.mcpchaos.server.drill;

import dev.mcpchaos.rules.journal.JournalSnapshot;

import java.util.List;
import java.util.Objects;

/** Grades one run of a client from what the journal saw. */
@FunctionalInterface
public interface Grader {

    /**
     * The verdict on {@code run}. Must answer {@link Outcome#NOT_EXERCISED} when the scenario's
     * fault never fired.
     */
    Finding grade(Run run);

    /**
     * What a client run left to grade.
     *
     * @param journal the journal at the end of the run
     * @param rules the names of the scenario's rules (to find what they acted on)
     * @param clientExit the client's exit code, or null when it was stopped at the timeout
     */
    record Run(JournalSnapshot journal, List<String> rules, Integer clientExit) {
        public Run {
            Objects.requireNonNull(journal, "journal");
            rules = List.copyOf(rules);
        }
    }

    /**
     * A grader's answer.
     *
     * @param outcome the verdict
     * @param reason what decided it, in one sentence
     * @param evidence the journal lines that decided it
     */
    record Finding(Outcome outcome, String reason, List<String> evidence) {
        public Finding {
            Objects.requireNonNull(outcome, "outcome");
            Objects.requireNonNull(reason, "reason");
            evidence = evidence == null ? List.of() : List.copyOf(evidence);
        }
    }
}
