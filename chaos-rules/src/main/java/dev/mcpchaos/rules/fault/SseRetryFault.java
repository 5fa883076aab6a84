package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.codec.sse.SseFields;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.internal.Text;

import java.time.Duration;
import java.util.Objects;

/**
 * {@code sse_retry} (HTTP only): the SSE event that carries the message gets a {@code retry:}
 * field of {@code retry} (in whole milliseconds), written before its other fields: the server
 * asks the client to wait that long before it reconnects. The 2025-11-25 transport says a client
 * MUST respect it ("Sending Messages to the Server", item 6). The message itself is unchanged and
 * keeps its event id. A message in a JSON body, or the client's, has no SSE event to change: nothing
 * to do.
 */
public final class SseRetryFault extends DeclaredFault {

    /** {@code sse_retry}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("sse_retry", SseRetryFault::create,
            FaultParameter.required("retry"))
            .only(TransportKind.HTTP);

    /** Upper bound on {@code retry}: a day; a longer delay is a stream that never comes back. */
    static final Duration MAX_RETRY = Duration.ofDays(1);

    /** @param retry the reconnection delay the event asks for, 0 to a day, in whole milliseconds */
    public record Config(Duration retry) {
        public Config {
            Objects.requireNonNull(retry, "retry");
            InvalidParameterException.check(!retry.isNegative() && retry.compareTo(MAX_RETRY) <= 0
                    && retry.toNanos() % 1_000_000 == 0, "retry", Text.quote(Text.duration(retry)),
                    "a duration from 0ms to 1d in whole milliseconds, such as 3000ms (SSE counts retry in ms)");
        }

        /** Reads {@code retry} (required). */
        static Config from(FaultParams params) {
            return new Config(params.duration("retry", null));
        }
    }

    private final Config config;

    /** A fault with this configuration (validated by the record). */
    public SseRetryFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
    }

    static SseRetryFault create(FaultParams params) {
        return new SseRetryFault(Config.from(params));
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        if (!SseStreams.onSseEvent(ctx, frame)) {
            return;
        }
        long millis = config.retry.toMillis();
        ctx.detail("retry: " + millis);
        // A rewritten frame, not the original bytes: the transport writes it with the retry field.
        Frame rewritten = frame.withContent(frame.content().retainedSlice(), frame.envelope());
        rewritten.framing(SseFields.withRetry(frame.framing(), millis));
        frame.release();
        ctx.proceed(rewritten);
    }

    @Override
    public String toString() {
        return "sse_retry(" + config.retry.toMillis() + "ms)";
    }
}
