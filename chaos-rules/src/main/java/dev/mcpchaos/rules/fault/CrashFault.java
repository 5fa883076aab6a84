package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.transport.TransportKind;

import java.util.Objects;

/**
 * {@code crash} (stdio only): at this message the server process is killed and the message goes
 * nowhere. {@code signal: KILL} (the default) kills it at once; {@code signal: TERM} asks it to
 * stop, which a server may handle (or ignore).
 */
public final class CrashFault extends DeclaredFault {

    /** {@code crash}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("crash", CrashFault::create,
            FaultParameter.optional("signal", "KILL"))
            .only(TransportKind.STDIO)
            .effect(FaultType.Effect.ENDS_CONNECTION);

    /** The signal sent to the server. */
    public enum Signal { TERM, KILL }

    /** @param signal the signal to send */
    public record Config(Signal signal) {
        public Config {
            Objects.requireNonNull(signal, "signal");
        }

        /** Reads {@code signal} (default {@code KILL}). */
        static Config from(FaultParams params) {
            return new Config(params.choice("signal", Signal.class, Signal.KILL));
        }
    }

    private final Config config;

    /** A fault with this configuration (validated by the record). */
    public CrashFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
    }

    static CrashFault create(FaultParams params) {
        return new CrashFault(Config.from(params));
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        // Said first: the connection the context hands out publishes the event before the signal,
        // and the client may see the server go before this call returns.
        if (config.signal == Signal.TERM) {
            ctx.detail("sent SIGTERM to the server");
            ctx.connection().terminateServer(frame);
        } else {
            ctx.detail("sent SIGKILL to the server");
            ctx.connection().killServer(frame);
        }
        ctx.drop(frame);
    }

    @Override
    public String toString() {
        return "crash(" + config.signal + ')';
    }
}
