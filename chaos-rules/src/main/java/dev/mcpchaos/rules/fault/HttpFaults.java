package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.InterceptorContext;

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

    /** One of the transport's {@link HttpFaultActions}, done on a frame: true when it was done. */
    @FunctionalInterface
    interface Action {
        boolean perform(HttpFaultActions http, InterceptorContext interceptor, Frame frame);
    }

    /**
     * What every HTTP-only fault does with its action: says {@code detail} first (the event goes
     * out the moment the transport takes the action), then asks the transport. When the exchange
     * is past the point where the action means anything, the frame passes untouched,
     * {@link FaultContext#nothingToDo nothing to do} for {@code impossible}, and this returns
     * false; otherwise true, and the caller drops or forwards the frame.
     */
    static boolean perform(FaultContext ctx, Frame frame, String type, String detail, Action action,
                           String impossible) {
        HttpFaultActions http = require(ctx, type);
        ctx.detail(detail);
        if (!action.perform(http, ctx.interceptor(), frame)) {
            ctx.nothingToDo(frame, impossible);
            return false;
        }
        return true;
    }
}
