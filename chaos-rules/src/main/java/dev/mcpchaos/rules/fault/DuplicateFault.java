package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;

import java.util.Objects;

/**
 * {@code duplicate}: the message is sent {@code 1 + copies} times in a row. The copies share the
 * original's bytes (no copy is made) and leave in its place in the direction's order.
 */
public final class DuplicateFault extends DeclaredFault {

    /** {@code duplicate}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("duplicate", DuplicateFault::create,
            FaultParameter.optional("copies", "1"));

    /** Upper bound on {@code copies}: more would be a flood, not a duplicate. */
    static final int MAX_COPIES = 1000;

    /** @param copies how many extra times the message is sent, 1 to 1000 */
    public record Config(int copies) {
        public Config {
            InvalidParameterException.check(copies >= 1 && copies <= MAX_COPIES, "copies", copies,
                    "a whole number from 1 to " + MAX_COPIES);
        }

        /** Reads {@code copies} (default 1). */
        static Config from(FaultParams params) {
            return new Config(params.integer("copies", 1L, 1, MAX_COPIES).intValue());
        }
    }

    private final Config config;

    /** A fault with this configuration (validated by the record). */
    public DuplicateFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
    }

    static DuplicateFault create(FaultParams params) {
        return new DuplicateFault(Config.from(params));
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        if (ctx.connection().carriesOneMessage(frame)) {
            ctx.nothingToDo(frame, "it travels in an HTTP body that carries one message (a JSON answer)");
            return;
        }
        ctx.detail("sent " + (1 + config.copies) + " times");
        // The copies go first: they are byte for byte the message, so the peer cannot tell, and a
        // later rule that rewrites the message then changes the last one it sees.
        for (int i = 0; i < config.copies; i++) {
            ctx.output(Edits.copy(frame));
        }
        ctx.proceed(frame);
    }

    @Override
    public String toString() {
        return "duplicate(" + config.copies + ')';
    }
}
