package dev.mcpchaos.rules.fault;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.core.config.Units;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.internal.Text;
import io.netty.buffer.ByteBuf;

import java.time.Duration;
import java.util.Objects;

/**
 * {@code throttle}: the message is written slowly, in pieces: {@code chunk} bytes every
 * {@code interval}, or {@code rate} bytes per second (in pieces of a tenth of the rate, at least
 * one byte, so about ten a second). The first piece leaves at once; the last one carries the
 * line delimiter, so the peer sees a line that arrives a piece at a time. Later messages in the
 * same direction wait until the last piece is out.
 *
 * <p>On stdio each piece is handed to the writer as a frame of its own with exact bytes, so
 * interceptors after this one see the pieces. On other transports the message is held for as
 * long as writing it at that rate would take, then sent whole.
 */
public final class ThrottleFault implements Fault {

    private static final String RATE = "a size per second, such as 1KiB or 1KiB/s";
    private static final String CHUNK = "a size >= 1B, such as 64B";

    /**
     * @param chunk bytes per piece, >= 1
     * @param interval time between pieces, > 0
     */
    public record Config(long chunk, Duration interval) {
        public Config {
            Objects.requireNonNull(interval, "interval");
            InvalidParameterException.check(chunk >= 1 && chunk <= Integer.MAX_VALUE, "chunk", chunk, CHUNK);
            InvalidParameterException.check(!interval.isNegative() && !interval.isZero(), "interval",
                    Text.quote(Text.duration(interval)), "a duration > 0, such as 100ms");
        }

        /** The pieces for a rate in bytes per second: a tenth of a second's worth each, at least 1 B. */
        public static Config ofRate(long bytesPerSecond) {
            InvalidParameterException.check(bytesPerSecond >= 1, "rate", bytesPerSecond, RATE);
            long chunk = Math.max(1, bytesPerSecond / 10);
            return new Config(chunk, Duration.ofNanos(chunk * 1_000_000_000L / bytesPerSecond));
        }

        /** Reads {@code rate}, or {@code chunk} and {@code interval}. */
        static Config from(FaultParams params) {
            if (params.has("rate")) {
                if (params.has("chunk") || params.has("interval")) {
                    throw new InvalidParameterException("rate", "given with chunk/interval",
                            "either rate, or chunk and interval");
                }
                return ofRate(rate(params.json("rate")));
            }
            if (!params.has("chunk") && !params.has("interval")) {
                throw new InvalidParameterException("rate", "missing", "rate, or chunk and interval");
            }
            long chunk = params.size("chunk", null, CHUNK);
            Duration interval = params.duration("interval", null);
            return new Config(chunk, interval);
        }

        private static long rate(JsonNode value) {
            if (value.isIntegralNumber() && value.canConvertToLong() && value.longValue() >= 1) {
                return value.longValue();
            }
            if (value.isTextual()) {
                String text = value.textValue().trim();
                if (text.endsWith("/s")) {
                    text = text.substring(0, text.length() - 2);
                }
                try {
                    long rate = Units.parseSize(text);
                    if (rate >= 1) {
                        return rate;
                    }
                } catch (IllegalArgumentException e) {
                    // reported below with the value as given
                }
            }
            throw new InvalidParameterException("rate", Text.given(value), RATE);
        }
    }

    private final Config config;

    /** A fault with this configuration (validated by the record). */
    public ThrottleFault(Config config) {
        this.config = Objects.requireNonNull(config, "config");
    }

    static ThrottleFault create(FaultParams params) {
        return new ThrottleFault(Config.from(params));
    }

    @Override
    public String type() {
        return "throttle";
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        if (ctx.transport() != TransportKind.STDIO) {
            long pieces = (frame.contentLength() + config.chunk - 1) / config.chunk;
            Duration delay = config.interval.multipliedBy(Math.max(0, pieces - 1));
            ctx.detail("held " + Text.duration(delay) + " (" + frame.contentLength() + " B at the throttled rate)");
            ctx.schedule(delay, () -> ctx.proceed(frame));
            return;
        }
        ByteBuf all;
        if (frame.isOriginal()) {
            all = frame.wire().retainedSlice(); // the line as read, delimiter included
        } else {
            ByteBuf content = frame.content();
            all = ctx.alloc().buffer(frame.contentLength() + 1)
                    .writeBytes(content, content.readerIndex(), content.readableBytes()).writeByte('\n');
        }
        Piece first = new Piece(ctx, all, frame.envelope(), frame.answers(), frame);
        frame.release();
        long pieces = (all.readableBytes() + config.chunk - 1) / config.chunk;
        ctx.detail("written in " + pieces + " pieces of up to " + config.chunk + " B, one every "
                + Text.duration(config.interval));
        first.writeFrom(0);
    }

    /** Writes one piece, then schedules the next. */
    private final class Piece {
        private final FaultContext ctx;
        private final ByteBuf all;
        private final Envelope envelope;
        private final Envelope answers;
        private final Direction direction;
        private final long sequence;
        private final Object route;

        Piece(FaultContext ctx, ByteBuf all, Envelope envelope, Envelope answers, Frame frame) {
            this.ctx = ctx;
            this.all = all;
            this.envelope = envelope;
            this.answers = answers;
            this.direction = frame.direction();
            this.sequence = frame.sequence();
            this.route = frame.route();
        }

        void writeFrom(int offset) {
            int n = (int) Math.min(config.chunk, all.readableBytes() - offset);
            // An "original" frame is written byte for byte, with no delimiter added: a piece of a line.
            Frame piece = Frame.original(all.retainedSlice(all.readerIndex() + offset, n), n, envelope, direction,
                    sequence);
            piece.answers(answers);
            piece.route(route);
            ctx.output(piece);
            int next = offset + n;
            if (next >= all.readableBytes()) {
                all.release();
                ctx.end();
            } else {
                ctx.schedule(config.interval, () -> writeFrom(next));
            }
        }
    }

    @Override
    public String toString() {
        return "throttle(" + config.chunk + " B every " + Text.duration(config.interval) + ')';
    }
}
