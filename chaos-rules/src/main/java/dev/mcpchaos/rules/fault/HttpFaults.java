package dev.mcpchaos.rules.fault;

import java.util.Locale;

/** Shared by the HTTP-only faults. */
final class HttpFaults {

    private HttpFaults() {
    }

    /**
     * The transport's HTTP actions.
     *
     * @throws IllegalStateException when the transport gave none; the engine then logs it and
     *                               forwards the message unchanged
     */
    static HttpFaultActions require(FaultContext ctx, String type) {
        HttpFaultActions http = ctx.http();
        if (http == null) {
            throw new IllegalStateException(type + ": the " + ctx.transport().name().toLowerCase(Locale.ROOT)
                    + " transport provides no HttpFaultActions (expected: RuleEngine.builder(...).httpActions(...))");
        }
        return http;
    }
}
