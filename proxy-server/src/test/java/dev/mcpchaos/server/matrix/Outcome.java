package dev.mcpchaos.server.matrix;

import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleStats;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * What one cell's scenario observed, on both sides of the proxy: what the client received and
 * when, what reached the server, how the client's stream ended, and what the rules said they did
 * (fault events, the rule's counters, the injected-faults meter). Times are nanoseconds on the
 * scenario's {@link Clock}; {@link #t0} is when the target (or what makes the server send it) left
 * its sender.
 */
final class Outcome {

    /** A line the stdio client read: its text, when its first byte and its newline arrived. */
    record Line(String text, long firstAt, long at) {
    }

    final Shape shape;
    /** The proxy refused to start: the message; null when it started. */
    String refusal;
    long t0;

    // stdio
    final List<Line> clientLines = new ArrayList<>();
    /** When the client's input from the proxy ended, or -1 if it did not by the deadline. */
    long eofAt = -1;
    /** The server's exit code, or null if the proxy did not finish in time. */
    Integer exitCode;
    /** The lines that reached the stdio server, in order. */
    final List<String> serverLines = new ArrayList<>();

    // http
    final Map<String, RawExchange> exchanges = new LinkedHashMap<>();
    final List<ScriptedMcpUpstream.Received> upstream = new ArrayList<>();
    final Map<String, Long> upstreamSent = new LinkedHashMap<>();

    // the rules' account
    final List<FaultEvent> events = new ArrayList<>();
    RuleStats stats;
    double injectedMeter;
    /** What the referee on the proxy said of the peers (null if the proxy did not start). */
    dev.mcpchaos.server.check.Referee.Report verdict;

    Outcome(Shape shape) {
        this.shape = shape;
    }

    /** The texts of the lines the stdio client read. */
    List<String> clientTexts() {
        return clientLines.stream().map(Line::text).toList();
    }

    /** The POST bodies that reached the upstream, in order. */
    List<String> upstreamPosts() {
        return upstream.stream().filter(r -> r.method().equals("POST")).map(ScriptedMcpUpstream.Received::body)
                .toList();
    }

    RawExchange exchange(String name) {
        RawExchange exchange = exchanges.get(name);
        if (exchange == null) {
            throw new AssertionError("no exchange '" + name + "' in this scenario (it has " + exchanges.keySet() + ")");
        }
        return exchange;
    }

    static String ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos) + "ms";
    }

    /** Everything observed, for a failure message and the matrix's report. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        if (refusal != null) {
            return "refused: " + refusal;
        }
        if (shape.isStdio()) {
            sb.append("client received:\n");
            for (Line line : clientLines) {
                sb.append("  +").append(ms(line.at - t0)).append(' ').append(abbreviate(line.text)).append('\n');
            }
            sb.append("  end of output ").append(eofAt < 0 ? "never" : "+" + ms(eofAt - t0)).append(", exit code ")
                    .append(exitCode).append('\n');
            sb.append("server received:\n");
            serverLines.forEach(l -> sb.append("  ").append(abbreviate(l)).append('\n'));
        } else {
            sb.append("client received:\n");
            exchanges.forEach((name, e) -> {
                sb.append("  ").append(name).append(" (sent +").append(ms(e.sentAt - t0)).append("): ");
                if (e.status() < 0) {
                    sb.append("no response, ").append(e.end()).append(" +").append(ms(e.endAt() - t0)).append('\n');
                    return;
                }
                sb.append("HTTP ").append(e.status()).append(' ').append(e.header("Content-Type"));
                if (e.header("Mcp-Session-Id") != null) {
                    sb.append(" session ").append(e.header("Mcp-Session-Id"));
                }
                sb.append(" head +").append(ms(e.headAt() - t0)).append('\n');
                if ("text/event-stream".equals(e.header("Content-Type")) || e.body().startsWith("id:")) {
                    for (RawExchange.SseEvent event : e.events()) {
                        sb.append("    +").append(ms(event.at() - t0)).append(" event ")
                                .append(abbreviate(event.raw().replace("\n", "\\n"))).append('\n');
                    }
                } else if (!e.body().isEmpty()) {
                    sb.append("    +").append(ms(e.bodyAt() - t0)).append(" body ").append(abbreviate(e.body()))
                            .append('\n');
                }
                sb.append("    end ").append(e.end()).append(" +").append(ms(e.endAt() - t0)).append('\n');
            });
            sb.append("upstream received:\n");
            upstream.forEach(r -> sb.append("  +").append(ms(r.at() - t0)).append(' ').append(r.method())
                    .append(r.session() != null ? " [" + r.session() + "] " : " ").append(abbreviate(r.body()))
                    .append('\n'));
            sb.append("upstream wrote: ").append(upstreamSent.entrySet().stream()
                    .map(e -> e.getKey() + " +" + ms(e.getValue() - t0)).collect(Collectors.joining(", ")))
                    .append('\n');
        }
        sb.append("fault events:\n");
        events.forEach(e -> sb.append("  ").append(e.decision()).append('\n'));
        sb.append("rule stats: ").append(stats).append("; mcp.chaos.faults.injected ").append(injectedMeter);
        return sb.toString();
    }

    private static String abbreviate(String text) {
        return text.length() <= 160 ? text : text.substring(0, 100) + "...(" + text.length() + " chars)..."
                + text.substring(text.length() - 40);
    }
}
