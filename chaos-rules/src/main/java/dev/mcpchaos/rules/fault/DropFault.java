package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;

/** {@code drop}: the message disappears. No parameters. */
public final class DropFault extends DeclaredFault {

    /** {@code drop}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("drop", DropFault::create);

    /** {@code drop} takes no parameters. */
    public record Config() {
        static Config from(FaultParams params) {
            return new Config();
        }
    }

    /** A fault of this type (it takes no parameters). */
    public DropFault() {
        super(TYPE);
    }

    static DropFault create(FaultParams params) {
        Config.from(params);
        return new DropFault();
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        ctx.detail("dropped");
        ctx.drop(frame);
    }

    @Override
    public String toString() {
        return "drop";
    }
}
