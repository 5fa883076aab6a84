package dev.mcpchaos.server.drill;

import dev.mcpchaos.rules.journal.JournalSnapshot;

import java.time.Instant;
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
     * @param clientEnded when the client ended on its own, on the wall clock the journal's
     *                    {@link dev.mcpchaos.rules.journal.JournalEntry#wallTime()} uses; null when it
     *                    was stopped at the timeout or the drill did not note it
     */
    record Run(JournalSnapshot journal, List<String> rules, Integer clientExit, Instant clientEnded) {
        public Run {
            Objects.requireNonNull(journal, "journal");
            rules = List.copyOf(rules);
        }

        /** A run whose end time was not noted. */
        public Run(JournalSnapshot journal, List<String> rules, Integer clientExit) {
            this(journal, rules, clientExit, null);
        }
    }

    /**
     * A grader's answer.
     *
     * @param outcome the verdict
     * @param reason what decided it, in one sentence
     * @param evidence the journal lines that decided it
     * @param level the level of the rule this finding is about, when it is not the scenario's
     *              (a client can break a MUST while failing a scenario that only recommends);
     *              null: the scenario's
     */
    record Finding(Outcome outcome, String reason, List<String> evidence, Level level) {
        public Finding {
            Objects.requireNonNull(outcome, "outcome");
            Objects.requireNonNull(reason, "reason");
            evidence = evidence == null ? List.of() : List.copyOf(evidence);
        }

        /** A finding at the scenario's own level. */
        public Finding(Outcome outcome, String reason, List<String> evidence) {
            this(outcome, reason, evidence, null);
        }
    }
}
