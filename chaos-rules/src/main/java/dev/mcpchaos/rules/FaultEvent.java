package dev.mcpchaos.rules;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.internal.Text;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * One fault injected into one message: what the event log, the metrics and tests read. With
 * the same seed and the same traffic, two runs give the same events (and, on virtual time, the
 * same {@code time}s).
 *
 * @param sequence the engine's count of injections, from 1
 * @param time how long after the proxy started (the engine was built)
 * @param session the session's id ({@code stdio}, or the HTTP session id)
 * @param direction which way the message was travelling
 * @param rule the rule's name
 * @param fault the fault type, such as {@code latency}
 * @param kind what the message was (request, response, ...)
 * @param id the message's JSON-RPC id: Long, BigDecimal, String, or null (also when it has none)
 * @param method the message's method, or that of the request it answers; may be null
 * @param tool the tool of a {@code tools/call} or of the request answered; may be null
 * @param detail what the fault did, such as {@code held 512ms}; may be empty
 * @param argumentsSha256 the lowercase hex SHA-256 of the bytes of the message's
 *        {@code params.arguments} as the fault got them (as sent, unless an earlier rule's fault
 *        changed the message; see {@link dev.mcpchaos.core.codec.jsonrpc.ArgumentsDigest}), so
 *        that a log can tell calls apart without holding their arguments; null for a response,
 *        an error, a batch, or a message without {@code params.arguments}
 */
public record FaultEvent(long sequence, Duration time, String session, Direction direction, String rule,
                         String fault, MessageKind kind, Object id, String method, String tool, String detail,
                         String argumentsSha256) {

    public FaultEvent {
        Objects.requireNonNull(time, "time");
        Objects.requireNonNull(session, "session");
        Objects.requireNonNull(direction, "direction");
        Objects.requireNonNull(rule, "rule");
        Objects.requireNonNull(fault, "fault");
        Objects.requireNonNull(kind, "kind");
        detail = detail == null ? "" : detail;
    }

    /**
     * The decision without the parts that depend on the clock or numbering: rule, fault,
     * direction, kind, id, method, tool and detail. Equal across two runs with the same seed and
     * traffic even on real time (as long as the detail does not depend on it).
     */
    public String decision() {
        StringBuilder sb = new StringBuilder();
        sb.append(direction.arrow()).append(" rule '").append(rule).append("' ").append(fault).append(": ")
                .append(kind.name().toLowerCase(Locale.ROOT));
        if (id != null) {
            sb.append(" id=").append(Text.id(id));
        }
        if (method != null) {
            sb.append(' ').append(method);
        }
        if (tool != null) {
            sb.append(' ').append(tool);
        }
        if (!detail.isEmpty()) {
            sb.append("; ").append(detail);
        }
        return sb.toString();
    }

    /** One log line: {@code #3 +1.204s stdio c->s rule 'slow' latency: request id=7 tools/call search; held 512ms}. */
    @Override
    public String toString() {
        return "#" + sequence + " +" + String.format(Locale.ROOT, "%.3fs", time.toNanos() / 1e9) + ' ' + session + ' '
                + decision();
    }
}
