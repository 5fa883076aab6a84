package dev.mcpchaos.rules;

import dev.mcpchaos.core.transport.TransportKind;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The rules of one rule file (or built in code), in file order, and the file's {@code seed}.
 *
 * <pre>{@code
 * RuleSet rules = RuleSet.load(Path.of("rules.yaml"));   // refuses a bad file, saying why
 * RuleEngine engine = RuleEngine.builder(rules).seed(42).transport(TransportKind.STDIO).build();
 * }</pre>
 *
 * <p>Files ending in {@code .json} are read as JSON, everything else as YAML; both have the
 * same structure (see {@code docs/rules.md}).
 */
public final class RuleSet {

    private final String source;
    private final OptionalLong seed;
    private final List<Rule> rules;

    RuleSet(String source, OptionalLong seed, List<Rule> rules) {
        this.source = Objects.requireNonNull(source, "source");
        this.seed = Objects.requireNonNull(seed, "seed");
        this.rules = List.copyOf(rules);
        Set<String> names = new LinkedHashSet<>();
        for (Rule rule : this.rules) {
            if (!names.add(rule.name())) {
                throw new RuleFileException(source, "rule '" + rule.name() + "'", "name: '" + rule.name()
                        + "' (expected: a name no other rule has)");
            }
        }
    }

    /** Rules built in code, without a seed; {@code source} names them in messages. */
    public static RuleSet of(String source, List<Rule> rules) {
        return new RuleSet(source, OptionalLong.empty(), rules);
    }

    /** Rules built in code, with a seed. */
    public static RuleSet of(String source, long seed, List<Rule> rules) {
        return new RuleSet(source, OptionalLong.of(seed), rules);
    }

    /**
     * Reads and checks a rule file.
     *
     * @throws RuleFileException when the file cannot be read or is not a valid rule file
     */
    public static RuleSet load(Path file) {
        Objects.requireNonNull(file, "file");
        String name = file.toString();
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new RuleFileException(name, null, "cannot read the file (" + e.getClass().getSimpleName()
                    + (e.getMessage() != null && !e.getMessage().equals(name) ? ": " + e.getMessage() : "") + ')');
        }
        return parse(text, name);
    }

    /**
     * Checks rules given as text.
     *
     * @param source the name to use in messages; ending in {@code .json} means JSON, else YAML
     * @throws RuleFileException when the text is not a valid rule file
     */
    public static RuleSet parse(String text, String source) {
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(source, "source");
        boolean json = source.toLowerCase(Locale.ROOT).endsWith(".json");
        return new RuleFileParser(source, json).parse(text);
    }

    /** The file the rules came from, as named by the user. */
    public String source() {
        return source;
    }

    /** The file's {@code seed}, if it has one. */
    public OptionalLong seed() {
        return seed;
    }

    /** Every rule, enabled or not, in file order. */
    public List<Rule> rules() {
        return rules;
    }

    /**
     * Refuses the set when a rule that could match on {@code transport} uses a fault (or a match
     * key) that does not work there, such as {@code http_status} on stdio.
     *
     * @throws RuleFileException {@code rules.yaml: rule 'x': http_status: only applies to the http transport (...)}
     */
    public void checkTransport(TransportKind transport) {
        Objects.requireNonNull(transport, "transport");
        String why = "this proxy runs the " + transport.name().toLowerCase(Locale.ROOT) + " transport";
        for (Rule rule : rules) {
            if (rule.match().transport() != null && rule.match().transport() != transport) {
                continue; // the rule is for the other transport: it never matches here
            }
            try {
                rule.requireUsableOn(transport, why);
            } catch (IllegalArgumentException e) {
                throw new RuleFileException(source, "rule '" + rule.name() + "'", e.getMessage());
            }
        }
    }

    @Override
    public String toString() {
        return "RuleSet(" + source + ", " + rules.size() + " rules" + (seed.isPresent() ? ", seed " + seed.getAsLong() : "")
                + ')';
    }
}
