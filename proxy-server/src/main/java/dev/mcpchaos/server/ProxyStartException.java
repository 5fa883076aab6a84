package dev.mcpchaos.server;

import java.util.Objects;

/**
 * A proxy could not start; nothing it started is left running. The one exception every
 * {@code start()} of {@link McpChaosProxy} throws, whichever the transport: its message says what
 * failed (the server command, an address, a rule) and {@link #getCause()} keeps the original
 * exception. {@link #reason()} tells the cases apart without reading the message.
 *
 * <pre>{@code
 * mcp-chaos: cannot start the server command [npx, no-such-server]: ... (the server command was not started)
 * mcp-chaos: cannot listen on 127.0.0.1:8080: Address already in use
 * mcp-chaos: rules.yaml: rule 'busy': http_status: only applies to the http transport (this proxy runs the stdio transport)
 * }</pre>
 */
public final class ProxyStartException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** What failed. */
    public enum Reason {
        /** The stdio server command could not be started (not found, not executable, bad directory). */
        SERVER_COMMAND,
        /** An address (the proxy's or the control endpoint's) could not be bound, or a TLS setting used. */
        ADDRESS,
        /** A rule cannot work on this transport; the cause is a {@link dev.mcpchaos.rules.RuleFileException}. */
        RULES,
        /** A setting cannot be used as given (such as a control endpoint beyond loopback without a token). */
        CONFIGURATION
    }

    private final Reason reason;

    /**
     * @param reason what failed
     * @param message what failed and why, shown as is
     * @param cause the original exception
     */
    public ProxyStartException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    /** What failed. */
    public Reason reason() {
        return reason;
    }
}
