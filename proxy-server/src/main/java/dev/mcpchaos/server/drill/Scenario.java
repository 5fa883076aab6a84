package dev.mcpchaos.server.drill;

import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.RuleDraft;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.rules.match.MessageMatch;

import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * One entry of the drill's catalogue: a named fault profile (ordinary rules, as in a rule file),
 * what a resilient client does under it, the protocol rule that asks for it, where it applies,
 * and how the journal grades it.
 *
 * @param name the scenario's name, as {@code --scenario} takes it and {@code MCP_CONFORMANCE_SCENARIO} carries it
 * @param fault what goes wrong, in a few words
 * @param rules the fault profile; empty when the scenario is not built yet
 * @param resilient what a resilient client does
 * @param source where the protocol asks for it: a spec section (such as {@code basic/lifecycle#timeouts}) or an RFC
 * @param level MUST or SHOULD
 * @param transports the transports it applies to
 * @param eras the protocol eras it applies to
 * @param grading how the journal grades it, in words
 * @param grader the grading itself; null when the scenario is not built yet
 * @param notBuilt why this version cannot run it (such as a fault that does not exist yet); null when it can
 */
public record Scenario(String name, String fault, List<RuleDraft> rules, String resilient, String source,
                       Level level, Set<TransportKind> transports, Set<Era> eras, String grading, Grader grader,
                       String notBuilt) {

    public Scenario {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(fault, "fault");
        rules = List.copyOf(rules);
        Objects.requireNonNull(resilient, "resilient");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(level, "level");
        transports = Set.copyOf(transports);
        eras = Set.copyOf(eras);
        Objects.requireNonNull(grading, "grading");
        if ((notBuilt == null) == (grader == null) || (notBuilt == null && rules.isEmpty())) {
            throw new IllegalArgumentException(name + ": a scenario is either built (rules and a grader) "
                    + "or not built yet (a reason), not both");
        }
    }

    /** In {@link #toolsNeeded()}: a tool to call, whichever. */
    public static final String ANY_TOOL = "*";

    /**
     * What it needs of the server, read from its rules: the tool each rule that faults a
     * {@code tools/call} names ({@code add} for {@code onTool("add")}), or {@link #ANY_TOOL} when
     * it faults a call of any tool. Empty when it faults no {@code tools/call} (such as those of
     * {@code tools/list}, which every server answers). A drill against a server without them
     * reports the scenario not applicable, with this reason.
     */
    public Set<String> toolsNeeded() {
        Set<String> needs = new TreeSet<>();
        for (RuleDraft draft : rules) {
            MessageMatch match = draft.toRule().match();
            if (match.method() != null && match.method().matches("tools/call")) {
                String tool = match.tool() == null ? null : match.tool().exactText();
                needs.add(tool != null ? tool : ANY_TOOL);
            }
        }
        return needs;
    }

    /** Whether this version can run it. */
    public boolean built() {
        return notBuilt == null;
    }

    /** Whether a run on {@code transport} in {@code era} can put it to the test. */
    public boolean appliesTo(TransportKind transport, Era era) {
        return transports.contains(transport) && eras.contains(era);
    }

    /** The names of its rules, as the journal names what they did. */
    public List<String> ruleNames() {
        return rules.stream().map(RuleDraft::name).toList();
    }

    /** Its rules as a rule set, checked as a rule file is, seeded with {@code seed}. */
    public RuleSet ruleSet(long seed) {
        if (!built()) {
            throw new IllegalStateException(name + " is not built yet: " + notBuilt);
        }
        return RuleSet.of("drill scenario " + name, seed, rules.stream().map(RuleDraft::toRule).toList());
    }
}
