package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;

/**
 * {@code blackhole}: the message is swallowed and the connection is kept open, so the peer waits
 * until its own timeout. On stdio this is a {@code drop} under another name, kept apart in the
 * events so a test report says what was meant; on HTTP the exchange is left hanging: what else
 * the response carries still goes out, but the response never ends (no last SSE chunk).
 */
public final class BlackholeFault extends DeclaredFault {

    /** {@code blackhole}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("blackhole", BlackholeFault::create);

    /** {@code blackhole} takes no parameters. */
    public record Config() {
        static Config from(FaultParams params) {
            return new Config();
        }
    }

    /** A fault of this type (it takes no parameters). */
    public BlackholeFault() {
        super(TYPE);
    }

    static BlackholeFault create(FaultParams params) {
        Config.from(params);
        return new BlackholeFault();
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        ctx.detail("swallowed; the connection stays open");
        if (frame.envelope().isResponse()) {
            // The answer a client waits for: on HTTP the rest of the response still goes out,
            // but its end does not (an SSE stream or JSON body that never finishes), as from a
            // server that went silent. A swallowed notification leaves its stream to go on.
            ctx.connection().stallResponse(frame);
        }
        ctx.drop(frame);
    }

    @Override
    public String toString() {
        return "blackhole";
    }
}
