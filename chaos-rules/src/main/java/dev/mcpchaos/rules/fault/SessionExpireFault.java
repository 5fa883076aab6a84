package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.transport.TransportKind;


/**
 * {@code session_expire} (HTTP only): from this message on, the session's requests are answered
 * 404, as for a session the server forgot; a client should start a new one. This message is
 * answered 404 too when it is a request. Needs {@link HttpFaultActions} from the HTTP transport.
 */
public final class SessionExpireFault extends DeclaredFault {

    /** {@code session_expire}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("session_expire", SessionExpireFault::create)
            .only(TransportKind.HTTP);

    /** {@code session_expire} takes no parameters. */
    public record Config() {
        static Config from(FaultParams params) {
            return new Config();
        }
    }

    /** A fault of this type (it takes no parameters). */
    public SessionExpireFault() {
        super(TYPE);
    }

    static SessionExpireFault create(FaultParams params) {
        Config.from(params);
        return new SessionExpireFault();
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        boolean request = frame.envelope().isRequest();
        // A request is answered 404 with a JSON-RPC error by the transport, as every later one is.
        if (!HttpFaults.perform(ctx, frame, type(),
                request ? "session expired; this request answered 404" : "session expired",
                HttpFaultActions::expireSession, "the request belongs to no session (no Mcp-Session-Id)")) {
            return;
        }
        if (request) {
            ctx.drop(frame);
        } else {
            ctx.proceed(frame);
        }
    }

    @Override
    public String toString() {
        return "session_expire";
    }
}
