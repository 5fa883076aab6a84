package dev.mcpchaos.server.live;

import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleStats;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * The text of the live view, without any escape sequence: one frame as lines, each cut to the
 * terminal's width (a line that wrapped would make the view move the cursor up by too little on
 * its next redraw, and tear).
 *
 * <pre>
 * mcp-chaos  up 1m02s  seed 42  faults on  sessions 1
 *   c->s      120 msgs     4.0/s    12.3 KiB
 *   s->c      118 msgs     3.5/s     1.2 MiB
 *   rules  matched/injected
 *     slow         latency    40/12
 *     drop-search  drop        5/5
 *     +2 more
 *   last faults
 *     +61.2s c->s rule 'slow' latency tools/call search
 * </pre>
 */
final class LiveBlock {

    /** Rules shown before "+K more". */
    static final int MAX_RULES = 5;
    /** Longest rule name shown whole. */
    private static final int MAX_NAME = 24;

    private LiveBlock() {
    }

    /**
     * @param rateToServer client-to-server messages per second, recently
     * @param rateToClient server-to-client messages per second, recently
     * @param width the terminal's width in columns; lines are cut to one less
     */
    static List<String> lines(LiveSnapshot s, double rateToServer, double rateToClient, int width) {
        List<String> lines = new ArrayList<>();
        lines.add("mcp-chaos  up " + uptime(s.uptime()) + "  seed " + s.seed() + "  faults "
                + (s.faultsEnabled() ? "on" : "OFF") + "  sessions " + s.sessions());
        lines.add(traffic("c->s", s.toServer(), rateToServer, s.bytesToServer()));
        lines.add(traffic("s->c", s.toClient(), rateToClient, s.bytesToClient()));
        rules(s.rules(), lines);
        if (s.recentFaults().isEmpty()) {
            lines.add("  last faults: none yet");
        } else {
            lines.add("  last faults");
            for (FaultEvent event : s.recentFaults()) {
                lines.add("    " + event(event));
            }
        }
        List<String> cut = new ArrayList<>(lines.size());
        int max = Math.max(width - 1, 10);
        for (String line : lines) {
            cut.add(line.length() > max ? line.substring(0, max) : line);
        }
        return cut;
    }

    private static String traffic(String arrow, long messages, double rate, long bytes) {
        return String.format(Locale.ROOT, "  %s %9d msgs %7.1f/s %11s", arrow, messages, rate, bytes(bytes));
    }

    /** The busiest rules first (most injected, then most matched; ties in file order). */
    private static void rules(List<RuleStats> rules, List<String> lines) {
        if (rules.isEmpty()) {
            lines.add("  rules: none");
            return;
        }
        lines.add("  rules  matched/injected");
        List<RuleStats> busiest = new ArrayList<>(rules);
        busiest.sort(Comparator.comparingLong(RuleStats::injected).thenComparingLong(RuleStats::matched).reversed());
        List<RuleStats> shown = busiest.subList(0, Math.min(MAX_RULES, busiest.size()));
        int nameWidth = shown.stream().mapToInt(r -> Math.min(r.name().length(), MAX_NAME)).max().orElse(0);
        int faultWidth = shown.stream().mapToInt(r -> r.fault().length()).max().orElse(0);
        for (RuleStats rule : shown) {
            String name = rule.name().length() > MAX_NAME ? rule.name().substring(0, MAX_NAME - 1) + "~" : rule.name();
            lines.add(String.format(Locale.ROOT, "    %-" + nameWidth + "s  %-" + faultWidth + "s  %d/%d%s", name,
                    rule.fault(), rule.matched(), rule.injected(), rule.enabled() ? "" : " (disabled)"));
        }
        if (busiest.size() > shown.size()) {
            lines.add("    +" + (busiest.size() - shown.size()) + " more");
        }
    }

    /** {@code +1.2s c->s rule 'slow' latency tools/call search}. */
    static String event(FaultEvent e) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "+%.1fs ", e.time().toMillis() / 1000.0))
                .append(e.direction().arrow()).append(" rule '").append(e.rule()).append("' ").append(e.fault());
        if (e.method() != null) {
            sb.append(' ').append(e.method());
        }
        if (e.tool() != null) {
            sb.append(' ').append(e.tool());
        }
        return sb.toString();
    }

    /** {@code 12s}, {@code 1m02s}, {@code 1h02m03s}. */
    static String uptime(Duration d) {
        long s = d.toSeconds();
        if (s < 60) {
            return s + "s";
        }
        if (s < 3600) {
            return String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60);
        }
        return String.format(Locale.ROOT, "%dh%02dm%02ds", s / 3600, s % 3600 / 60, s % 60);
    }

    /** {@code 512 B}, {@code 12.3 KiB}, {@code 1.2 MiB}, {@code 3.0 GiB}. */
    static String bytes(long n) {
        if (n < 1024) {
            return n + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double v = n;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
