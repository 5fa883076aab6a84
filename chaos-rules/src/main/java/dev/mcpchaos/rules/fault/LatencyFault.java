package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.rules.internal.Text;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * {@code latency}: holds the message, then hands it on. Later messages in the same direction
 * wait behind it (the engine keeps per-direction order), as they would behind a slow link.
 *
 * <p>The delay is drawn from {@link Distribution}: {@code fixed} is {@code latency};
 * {@code uniform} is {@code latency ± jitter}; {@code normal} has mean {@code latency} and
 * standard deviation {@code jitter}; {@code lognormal} has median {@code latency} and a long
 * right tail whose spread grows with {@code jitter}. Every delay is kept within
 * {@code [0, latency + 10 × jitter]}.
 */
public final class LatencyFault extends DeclaredFault {

    /** {@code latency}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("latency", LatencyFault::create,
            FaultParameter.required("latency"),
            FaultParameter.optional("jitter", "0s"),
            FaultParameter.optional("distribution", "fixed without jitter, uniform with"))
            .effect(FaultType.Effect.HOLDS);

    /** The shape of the random part of the delay. */
    public enum Distribution {
        /** Always {@code latency}; {@code jitter} must be 0. */
        FIXED,
        /** Evenly spread over {@code [latency - jitter, latency + jitter]}. */
        UNIFORM,
        /** Gaussian: mean {@code latency}, standard deviation {@code jitter}. */
        NORMAL,
        /** {@code latency × e^(σZ)}, with σ = ln(1 + jitter/latency): median {@code latency}, long tail. */
        LOGNORMAL
    }

    /**
     * @param latency the base delay, >= 0
     * @param jitter the spread, >= 0; 0 with {@code fixed}
     * @param distribution the shape of the spread
     */
    public record Config(Duration latency, Duration jitter, Distribution distribution) {
        public Config {
            Objects.requireNonNull(latency, "latency");
            Objects.requireNonNull(jitter, "jitter");
            Objects.requireNonNull(distribution, "distribution");
            InvalidParameterException.check(!latency.isNegative(), "latency", Text.quote(Text.duration(latency)),
                    FaultParams.DURATION);
            InvalidParameterException.check(!jitter.isNegative(), "jitter", Text.quote(Text.duration(jitter)),
                    FaultParams.DURATION);
            InvalidParameterException.check(distribution != Distribution.FIXED || jitter.isZero(), "jitter",
                    Text.quote(Text.duration(jitter)), "0 with distribution fixed (use uniform, normal or lognormal)");
            InvalidParameterException.check(distribution != Distribution.LOGNORMAL || !latency.isZero(), "latency",
                    Text.quote(Text.duration(latency)), "a duration > 0 with distribution lognormal (its median)");
        }

        /** Reads {@code latency} (required), {@code jitter} (default 0), {@code distribution}
         *  (default {@code fixed} without jitter, {@code uniform} with). */
        static Config from(FaultParams params) {
            Duration latency = params.duration("latency", null);
            Duration jitter = params.duration("jitter", Duration.ZERO);
            Distribution distribution = params.choice("distribution", Distribution.class,
                    jitter.isZero() ? Distribution.FIXED : Distribution.UNIFORM);
            return new Config(latency, jitter, distribution);
        }
    }

    private final Config config;

    /** A fault with this configuration (validated by the record). */
    public LatencyFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
    }

    static LatencyFault create(FaultParams params) {
        return new LatencyFault(Config.from(params));
    }

    public Config config() {
        return config;
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        Duration delay = draw(ctx.random());
        ctx.detail("held " + Text.duration(delay));
        ctx.schedule(delay, () -> ctx.proceed(frame));
    }

    /** One delay, rounded to the millisecond so logs and reruns read the same. */
    Duration draw(SplittableRandom random) {
        double base = config.latency.toNanos();
        double jitter = config.jitter.toNanos();
        double nanos;
        switch (config.distribution) {
            case UNIFORM:
                nanos = base + (random.nextDouble() * 2 - 1) * jitter;
                break;
            case NORMAL:
                nanos = base + gaussian(random) * jitter;
                break;
            case LOGNORMAL:
                nanos = base * Math.exp(Math.log1p(jitter / base) * gaussian(random));
                break;
            default:
                nanos = base;
                break;
        }
        double max = base + 10 * jitter;
        nanos = Math.max(0, Math.min(max, nanos));
        return Duration.ofMillis(Math.round(nanos / 1_000_000));
    }

    /**
     * A standard normal draw by Box–Muller: written out rather than taken from the JDK so the
     * same seed gives the same delays on every Java version.
     */
    static double gaussian(SplittableRandom random) {
        double u1 = 1.0 - random.nextDouble(); // (0, 1]: log stays finite
        double u2 = random.nextDouble();
        return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    }

    @Override
    public String toString() {
        return "latency(" + Text.duration(config.latency) + ", jitter " + Text.duration(config.jitter) + ", "
                + config.distribution.name().toLowerCase(Locale.ROOT) + ')';
    }
}
