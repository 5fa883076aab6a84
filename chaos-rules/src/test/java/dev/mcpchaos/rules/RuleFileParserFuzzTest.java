package dev.mcpchaos.rules;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.mcpchaos.core.transport.TransportKind;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Coverage-guided fuzzing of the rule file parser (Jazzer; see docs/fuzzing.md). Each input is
 * the text of a rule file (UTF-8, undecodable bytes replaced), read as YAML and as JSON, as one
 * rule, and as a patch of a rule. Properties:
 * <ul>
 *   <li>every input gives a {@link RuleSet} (or {@link Rule}) or a {@link RuleFileException}
 *       whose message names the source and says what is wrong in the parser's words: what was
 *       given and what was expected, a syntax error, or a fault that does not fit a transport
 *       (not, say, a {@code NumberFormatException}'s message passed on); any other exception
 *       escapes and is a finding;</li>
 *   <li>a rule set read is its own JSON: {@link RuleSet#toJson()} reads back as the same rules,
 *       and checking it for each transport gives a set or a {@link RuleFileException}.</li>
 * </ul>
 * Without {@code JAZZER_FUZZ} it runs the committed inputs in {@code RuleFileParserFuzzTestInputs/}.
 */
class RuleFileParserFuzzTest {

    private static final RuleSet BASE = RuleSet.parse("rules:\n  - name: slow\n    match: {method: tools/call}\n"
            + "    fault: {type: latency, latency: 10ms}\n", "base.yaml");

    @FuzzTest
    void givesRulesOrItsOwnClearError(byte[] input) {
        String text = new String(input, StandardCharsets.UTF_8);
        for (String source : List.of("rules.yaml", "rules.json")) {
            RuleSet set = orRefused(() -> RuleSet.parse(text, source), source);
            if (set != null) {
                RuleSet again = RuleSet.parse(set.toJson(), "again.json");
                assertThat(again.rules()).extracting(Rule::name).as("the rules read back from toJson()")
                        .isEqualTo(set.rules().stream().map(Rule::name).toList());
                assertThat(again.toJson()).as("toJson() of the rules read back").isEqualTo(set.toJson());
                for (TransportKind transport : TransportKind.values()) {
                    orRefused(() -> {
                        set.checkTransport(transport);
                        return set;
                    }, source);
                }
            }
            orRefused(() -> RuleSet.parseRule(text, source), source);
            orRefused(() -> BASE.patch("slow", text, source), source);
        }
    }

    /** What {@code parse} gives, or null when it refused the text with a clear {@link RuleFileException}. */
    private static <T> T orRefused(Parse<T> parse, String source) {
        try {
            return parse.run();
        } catch (RuleFileException e) {
            assertThat(e.getMessage()).as("the message").startsWith(source + ": ");
            // Clear: the parser's own words (the value and what was expected), not another library's.
            assertThat(e.problem()).as("the problem says what was expected")
                    .matches("(?s).*(\\(expected: .*\\)|not valid YAML/JSON: .+|: only applies to the .*)");
            return null;
        }
    }

    @FunctionalInterface
    private interface Parse<T> {
        T run();
    }
}
