package dev.mcpchaos.server.check;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.server.redact.SecretRedactor;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * What the checks found: each check's count and its first {@value Referee#KEPT_PER_CHECK}
 * violations, and what faults caused (charged to no peer). The one way a check reports.
 */
final class Findings {

    final Map<Check, List<Violation>> kept = new EnumMap<>(Check.class);
    final Map<Check, Long> counts = new EnumMap<>(Check.class);
    /** What would have been a violation but a fault caused: kept and counted apart, charged to no peer. */
    final List<Referee.FaultFinding> byFaults = new ArrayList<>();
    long byFaultsCount;

    /** A violation of {@code check} by the message {@code m}. */
    void violate(Check check, String detail, Referee.Message m, Object id, String method) {
        violate(check, detail, m.session(), m.direction(), m.index(), id, method, m.text());
    }

    void violate(Check check, String detail, String session, Direction direction, long index, Object id,
                 String method, String text) {
        long count = counts.merge(check, 1L, Long::sum);
        if (count <= Referee.KEPT_PER_CHECK) {
            kept.computeIfAbsent(check, c -> new ArrayList<>())
                    .add(new Violation(check, detail, session, direction, index, id, method, excerpt(text)));
        }
    }

    /** What would be a violation of {@code check} but a fault of {@code rule} caused: charged to no peer. */
    void attribute(Check check, String rule, String detail, String session, Direction direction, long index,
                   Object id, String method, String text) {
        byFaultsCount++;
        if (byFaults.size() < Referee.KEPT_PER_CHECK * 4) {
            byFaults.add(new Referee.FaultFinding(rule, new Violation(check, detail, session, direction, index, id,
                    method, excerpt(text))));
        }
    }

    /** The text with its secrets redacted, then cut short. */
    static String excerpt(String text) {
        String redacted = SecretRedactor.redact(text);
        return redacted.length() <= Referee.EXCERPT_CHARS ? redacted
                : redacted.substring(0, Referee.EXCERPT_CHARS - 1) + "…";
    }
}
