package dev.mcpchaos.rules.fault;

/**
 * The HTTP fault actions as the transport offers them through
 * {@link dev.mcpchaos.core.intercept.ConnectionControl}: the engine's default. It is
 * {@link HttpFaultActions}' defaults and nothing else.
 */
public final class ConnectionHttpActions implements HttpFaultActions {

    /** The one instance: it holds no state. */
    public static final ConnectionHttpActions INSTANCE = new ConnectionHttpActions();

    private ConnectionHttpActions() {
    }
}
