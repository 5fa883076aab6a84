package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import io.netty.buffer.ByteBuf;

import java.util.Objects;

/**
 * {@code truncate}: the message is cut short, keeping the frame delimiter, so the peer reads a
 * complete line (or SSE event) holding incomplete JSON. The cut is at {@code at} bytes, or at
 * {@code fraction} of the message's length (default 0.5); a message no longer than {@code at}
 * passes unchanged, and that is not an injection ({@link FaultContext#nothingToDo}). The cut is by bytes and may split a UTF-8 sequence, as a real cut would.
 */
public final class TruncateFault extends DeclaredFault {

    /** {@code truncate}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("truncate", TruncateFault::create,
            FaultParameter.optional("at", ""),
            FaultParameter.optional("fraction", "0.5"));

    /**
     * @param at where to cut, in bytes, >= 0; -1 when {@code fraction} is used
     * @param fraction how much to keep, in (0, 1); used when {@code at} is -1
     */
    public record Config(long at, double fraction) {
        public Config {
            InvalidParameterException.check(at >= -1, "at", at, "a size >= 0, such as 100B");
            InvalidParameterException.check(at >= 0 || fraction > 0 && fraction < 1, "fraction", fraction,
                    "a number between 0 and 1 (exclusive), such as 0.5");
        }

        /** Reads {@code at} or {@code fraction} (not both); default: {@code fraction: 0.5}. */
        static Config from(FaultParams params) {
            if (params.has("at") && params.has("fraction")) {
                throw new InvalidParameterException("fraction", "given with at", "either at or fraction, not both");
            }
            if (params.has("at")) {
                return new Config(params.size("at", null, "a size >= 0, such as 100B"), 0);
            }
            return new Config(-1, params.number("fraction", 0.5, Double.MIN_VALUE, Math.nextDown(1.0),
                    "a number between 0 and 1 (exclusive), such as 0.5"));
        }
    }

    private final Config config;

    /** A fault with this configuration (validated by the record). */
    public TruncateFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
    }

    static TruncateFault create(FaultParams params) {
        return new TruncateFault(Config.from(params));
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        int length = frame.contentLength();
        long cut = config.at >= 0 ? config.at : (long) Math.floor(length * config.fraction);
        if (cut >= length) {
            ctx.nothingToDo(frame, "message of " + length + " B is not longer than " + cut + " B");
            return;
        }
        ByteBuf content = frame.content();
        ByteBuf kept = ctx.alloc().buffer((int) cut).writeBytes(content, content.readerIndex(), (int) cut);
        ctx.detail("cut at " + cut + " of " + length + " B");
        ctx.proceed(Edits.replace(frame, kept));
    }

    @Override
    public String toString() {
        return "truncate(" + (config.at >= 0 ? "at " + config.at + " B" : "fraction " + config.fraction) + ')';
    }
}
