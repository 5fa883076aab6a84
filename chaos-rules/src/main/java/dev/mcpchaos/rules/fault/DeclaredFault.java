package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.transport.TransportKind;

import java.util.Objects;

/**
 * A fault whose name and transports are those its {@link FaultType} declares: what every built-in
 * fault would otherwise write out again ({@code type()} returning {@code TYPE.name()},
 * {@code supports} asking {@code TYPE}), said once, so a fault can no longer disagree with its
 * own descriptor. A fault passes its {@code TYPE} to the constructor; one may still implement
 * {@link Fault} directly.
 */
public abstract class DeclaredFault implements Fault {

    private final FaultType descriptor;

    /** @param descriptor the fault's own {@code TYPE} */
    protected DeclaredFault(FaultType descriptor) {
        this.descriptor = Objects.requireNonNull(descriptor, "descriptor");
    }

    /** Its descriptor's name. */
    @Override
    public final String type() {
        return descriptor.name();
    }

    /** Whether its descriptor lists {@code transport}. */
    @Override
    public final boolean supports(TransportKind transport) {
        return descriptor.supports(transport);
    }
}
