package dev.mcpchaos.rules;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.core.transport.TransportKind;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
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
        return new RuleFileParser(source, isJson(source)).parse(text);
    }

    /**
     * Checks one rule given as text: a mapping with name, match, fault and the other keys of a
     * rule in a rule file's list.
     *
     * @param source the name to use in messages; ending in {@code .json} means JSON, else YAML
     * @throws RuleFileException when the text is not a valid rule
     */
    public static Rule parseRule(String text, String source) {
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(source, "source");
        return new RuleFileParser(source, isJson(source)).parseOne(text);
    }

    /** The rule named {@code name}, if there is one. */
    public Optional<Rule> rule(String name) {
        Objects.requireNonNull(name, "name");
        return rules.stream().filter(r -> r.name().equals(name)).findFirst();
    }

    /**
     * These rules and {@code rule} after them, from {@code source}.
     *
     * @throws RuleFileException when a rule already has its name
     */
    public RuleSet with(Rule rule, String source) {
        Objects.requireNonNull(rule, "rule");
        List<Rule> changed = new ArrayList<>(rules);
        changed.add(rule);
        return new RuleSet(source, seed, changed);
    }

    /**
     * These rules without the one named {@code name}, from {@code source}.
     *
     * @throws NoSuchElementException when no rule has that name
     */
    public RuleSet without(String name, String source) {
        Rule gone = rule(name).orElseThrow(() -> unknown(name));
        List<Rule> changed = new ArrayList<>(rules);
        changed.remove(gone);
        return new RuleSet(source, seed, changed);
    }

    /**
     * These rules with the one named {@code name} changed by {@code patch}: a mapping (YAML or
     * JSON) of the keys to change, merged into the rule as written (RFC 7386: {@code null}
     * removes a key, {@code match} and {@code fault} merge key by key), then checked as a new
     * rule. The rule keeps its place. A rule built in code can only be switched on or off.
     *
     * @param source names the change in messages; ending in {@code .json} means JSON, else YAML
     * @throws NoSuchElementException when no rule has that name
     * @throws RuleFileException when the patch or the changed rule is not valid
     */
    public RuleSet patch(String name, String patch, String source) {
        Objects.requireNonNull(patch, "patch");
        Rule old = rule(name).orElseThrow(() -> unknown(name));
        Rule changed = new RuleFileParser(source, isJson(source)).patch(old, patch);
        List<Rule> all = new ArrayList<>(rules);
        all.set(all.indexOf(old), changed);
        return new RuleSet(source, seed, all);
    }

    /** These rules, now said to come from {@code source}. */
    public RuleSet from(String source) {
        return new RuleSet(source, seed, rules);
    }

    /**
     * The rules as JSON, in the rule file's format ({@code {"rules": [...]}}, without the seed),
     * each as it was written; a rule built in code shows its settings and its fault's type only.
     */
    public String toJson() {
        ObjectNode root = RuleJson.MAPPER.createObjectNode();
        ArrayNode list = root.putArray("rules");
        rules.forEach(rule -> list.add(RuleJson.of(rule)));
        return root.toString();
    }

    private static NoSuchElementException unknown(String name) {
        return new NoSuchElementException("rule '" + name + "': no rule has this name");
    }

    private static boolean isJson(String source) {
        return source.toLowerCase(Locale.ROOT).endsWith(".json");
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
        // Made for the first rule that needs it: with no rules (a plain stdio proxy, checked after
        // its server was spawned) no concatenation is linked here, which spun 8 method-handle
        // classes at run time, about 10 ms of CPU while the server starts.
        String why = null;
        for (Rule rule : rules) {
            if (rule.match().transport() != null && rule.match().transport() != transport) {
                continue; // the rule is for the other transport: it never matches here
            }
            if (why == null) {
                why = "this proxy runs the " + transport.name().toLowerCase(Locale.ROOT) + " transport";
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
