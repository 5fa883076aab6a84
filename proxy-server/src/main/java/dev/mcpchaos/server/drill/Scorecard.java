package dev.mcpchaos.server.drill;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The drill's verdicts, one per scenario, as a table (stderr), JSON ({@code --report-json}) and
 * JUnit XML ({@code --junit}); {@link #exitCode()} is non-zero when a MUST scenario failed. The
 * JSON carries each scenario's journal too, so that {@code mcp-chaos report} can draw its timeline
 * ({@code HtmlReport#drill}).
 *
 * @param seed the seed the scenarios' rules ran with
 * @param verdicts one per scenario, in the order they ran
 * @param journals each scenario's journal as {@code GET /journal} serves it ({@code JournalJson.write}),
 *                 by scenario name; a scenario that did not run has none
 */
public record Scorecard(long seed, List<Verdict> verdicts, Map<String, String> journals) {

    public Scorecard {
        verdicts = List.copyOf(Objects.requireNonNull(verdicts, "verdicts"));
        journals = Collections.unmodifiableMap(new LinkedHashMap<>(
                Objects.requireNonNull(journals, "journals")));
    }

    /** A scorecard without journals. */
    public Scorecard(long seed, List<Verdict> verdicts) {
        this(seed, verdicts, Map.of());
    }

    /** The {@code format} of {@link #toJson()}: what {@code mcp-chaos report} recognises a scorecard by. */
    public static final String FORMAT = "mcp-chaos-drill";

    /** 1 when a MUST scenario failed, else 0. */
    public int exitCode() {
        return verdicts.stream().anyMatch(Verdict::failsTheDrill) ? 1 : 0;
    }

    /** Each scenario with its outcome, {@code name=outcome} separated by commas: what two runs with one seed share. */
    public String outcomes() {
        return verdicts.stream().map(v -> v.scenario() + "=" + v.outcome().label())
                .reduce((a, b) -> a + ", " + b).orElse("");
    }

    /** The scorecard as a text table, then each verdict's evidence. */
    public String table() {
        int width = Math.max(8, verdicts.stream().mapToInt(v -> v.scenario().length()).max().orElse(8));
        StringBuilder sb = new StringBuilder();
        String row = "%-" + width + "s  %-6s  %-13s  %7s  %s%n";
        sb.append(String.format(Locale.ROOT, row, "scenario", "level", "verdict", "took", "why"));
        for (Verdict v : verdicts) {
            sb.append(String.format(Locale.ROOT, row, v.scenario(), v.level(), v.outcome().label(),
                    String.format(Locale.ROOT, "%.1fs", v.took().toMillis() / 1000.0), v.reason()));
        }
        for (Verdict v : verdicts) {
            if (!v.evidence().isEmpty()) {
                sb.append(System.lineSeparator()).append(v.scenario()).append(" (").append(v.outcome().label())
                        .append("), the journal:").append(System.lineSeparator());
                v.evidence().forEach(line -> sb.append("  ").append(line).append(System.lineSeparator()));
            }
        }
        long failed = verdicts.stream().filter(v -> v.outcome() == Outcome.FAIL).count();
        long passed = verdicts.stream().filter(v -> v.outcome() == Outcome.PASS).count();
        sb.append(System.lineSeparator()).append(String.format(Locale.ROOT,
                "%d scenarios: %d pass, %d fail (%d of them MUST), %d other; seed %d%n", verdicts.size(), passed,
                failed, verdicts.stream().filter(Verdict::failsTheDrill).count(),
                verdicts.size() - passed - failed, seed));
        return sb.toString();
    }

    /**
     * The scorecard as JSON: {@code {"format": "mcp-chaos-drill", "seed", "exit_code", "scenarios":
     * [{"name", "level", "outcome", "reason", "client_exit", "took_ms", "evidence", "journal"}]}},
     * {@code journal} being the scenario's journal as {@code GET /journal} serves it.
     */
    public String toJson() {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode root = mapper.createObjectNode();
        root.put("format", FORMAT);
        root.put("seed", seed);
        root.put("exit_code", exitCode());
        ArrayNode list = root.putArray("scenarios");
        for (Verdict v : verdicts) {
            ObjectNode o = list.addObject();
            o.put("name", v.scenario());
            o.put("level", v.level().name());
            o.put("outcome", v.outcome().name().toLowerCase(Locale.ROOT));
            o.put("reason", v.reason());
            if (v.clientExit() != null) {
                o.put("client_exit", v.clientExit());
            }
            o.put("took_ms", v.took().toMillis());
            ArrayNode evidence = o.putArray("evidence");
            v.evidence().forEach(evidence::add);
            String journal = journals.get(v.scenario());
            if (journal != null) {
                try {
                    o.set("journal", mapper.readTree(journal));
                } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                    throw new IllegalStateException("scenario " + v.scenario() + ": its journal is not JSON", e);
                }
            }
        }
        try {
            return mapper.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n";
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The scorecard as JUnit XML: one test case per scenario; a failure for {@code fail}, skipped
     * for {@code not applicable}, {@code not exercised} and {@code not built} (none of them passed).
     */
    public String toJunitXml() {
        long failures = verdicts.stream().filter(v -> v.outcome() == Outcome.FAIL).count();
        long skipped = verdicts.stream().filter(v -> v.outcome() != Outcome.FAIL && v.outcome() != Outcome.PASS)
                .count();
        double total = verdicts.stream().mapToLong(v -> v.took().toMillis()).sum() / 1000.0;
        StringBuilder sb = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        sb.append(String.format(Locale.ROOT, "<testsuite name=\"mcp-chaos drill\" tests=\"%d\" failures=\"%d\" "
                + "errors=\"0\" skipped=\"%d\" time=\"%.3f\">%n", verdicts.size(), failures, skipped, total));
        for (Verdict v : verdicts) {
            sb.append(String.format(Locale.ROOT, "  <testcase classname=\"drill\" name=\"%s\" time=\"%.3f\"",
                    xml(v.scenario()), v.took().toMillis() / 1000.0));
            String body = String.join("\n", v.evidence());
            switch (v.outcome()) {
                case PASS -> sb.append("/>\n");
                case FAIL -> sb.append(">\n    <failure message=\"").append(xml(v.level() + ": " + v.reason()))
                        .append("\">").append(xml(body)).append("</failure>\n  </testcase>\n");
                default -> sb.append(">\n    <skipped message=\"").append(xml(v.outcome().label() + ": " + v.reason()))
                        .append("\"/>\n  </testcase>\n");
            }
        }
        return sb.append("</testsuite>\n").toString();
    }

    private static String xml(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        for (char c : s.toCharArray()) {
            switch (c) {
                case '<' -> sb.append("&lt;");
                case '>' -> sb.append("&gt;");
                case '&' -> sb.append("&amp;");
                case '"' -> sb.append("&quot;");
                default -> {
                    if (c >= 0x20 || c == '\n' || c == '\t') {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.toString();
    }
}
