package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;

import java.util.Locale;
import java.util.Objects;

/**
 * {@code disconnect}: at this message the connection is closed and the message goes nowhere.
 * {@code side: client} closes the client's side (on stdio the proxy's stdout: the client reads
 * end of file); {@code side: server} (the default) closes the server's side (on stdio the
 * server's stdin: a well-behaved server then exits).
 */
public final class DisconnectFault extends DeclaredFault {

    /** {@code disconnect}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("disconnect", DisconnectFault::create,
            FaultParameter.optional("side", "server"))
            .effect(FaultType.Effect.ENDS_CONNECTION);

    /** Which side is cut off. */
    public enum Side { CLIENT, SERVER }

    /** @param side which side is closed */
    public record Config(Side side) {
        public Config {
            Objects.requireNonNull(side, "side");
        }

        /** Reads {@code side} (default {@code server}). */
        static Config from(FaultParams params) {
            return new Config(params.choice("side", Side.class, Side.SERVER));
        }
    }

    private final Config config;

    /** A fault with this configuration (validated by the record). */
    public DisconnectFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
    }

    static DisconnectFault create(FaultParams params) {
        return new DisconnectFault(Config.from(params));
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        // Said first: the connection the context hands out publishes the event before it closes,
        // and the client may see the close (or the 502 it makes) before this call returns.
        ctx.detail("closed the " + config.side.name().toLowerCase(Locale.ROOT) + "'s side");
        if (config.side == Side.CLIENT) {
            ctx.connection().closeClientSide(frame);
        } else {
            ctx.connection().closeServerSide(frame);
        }
        ctx.drop(frame);
    }

    @Override
    public String toString() {
        return "disconnect(" + config.side.name().toLowerCase(Locale.ROOT) + ')';
    }
}
