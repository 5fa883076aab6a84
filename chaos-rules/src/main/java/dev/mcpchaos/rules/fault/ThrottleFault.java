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
 * one byte, so about ten a second). The first piece leaves when the message's turn comes (the
 * messages before it in its direction have left), or, when the one before was throttled by
 * this rule too, an interval after that one's last piece, so back-to-back messages keep the rate
 * together; the last piece carries the line delimiter, so the peer sees a line that arrives a
 * piece at a time. Later messages in the same direction wait until the last piece is out. A
 * message that fits in one piece has nothing to throttle: it passes, not counted as injected
 * ({@link FaultContext#nothingToDo}).
 *
 * <p>On stdio each piece is handed to the writer as a frame of its own with exact bytes, so
 * interceptors after this one see the pieces. On other transports the message is held, from its
 * turn on, for as long as writing it at that rate would take (its last piece's time), then sent
 * whole.
 */
public final class ThrottleFault extends DeclaredFault {

    /** {@code throttle}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("throttle", ThrottleFault::create,
            FaultParameter.optional("rate", ""),
            FaultParameter.optional("chunk", ""),
            FaultParameter.optional("interval", ""))
            .effect(FaultType.Effect.HOLDS);

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
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
    }

    static ThrottleFault create(FaultParams params) {
        return new ThrottleFault(Config.from(params));
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        boolean stdio = ctx.transport() == TransportKind.STDIO;
        // On stdio the delimiter is written too, in the last piece.
        long bytes = !stdio ? frame.contentLength()
                : frame.isOriginal() ? frame.wire().readableBytes() : frame.contentLength() + 1L;
        long pieces = (bytes + config.chunk - 1) / config.chunk;
        if (pieces <= 1) {
            ctx.nothingToDo(frame, "message of " + bytes + " B fits in one piece of " + config.chunk + " B");
            return;
        }
        Link link = ctx.sessionState(Links::new).of(frame.direction());
        if (!stdio) {
            Duration hold = config.interval.multipliedBy(pieces - 1);
            ctx.detail("held " + Text.duration(hold) + " (" + bytes + " B at the throttled rate)");
            ctx.onTurn(() -> ctx.schedule(Duration.ofNanos(link.wait(ctx) + hold.toNanos()), () -> {
                link.used(ctx);
                ctx.proceed(frame);
            }));
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
        Piece first = new Piece(ctx, all, frame.envelope(), frame.answers(), frame, link);
        frame.release();
        ctx.detail("written in " + pieces + " pieces of up to " + config.chunk + " B, one every "
                + Text.duration(config.interval));
        // The pace starts when the message may leave: paced while it waited behind another, its
        // pieces would pile up and leave together.
        ctx.onTurn(() -> {
            long wait = link.wait(ctx);
            if (wait > 0) {
                ctx.schedule(Duration.ofNanos(wait), () -> first.writeFrom(0));
            } else {
                first.writeFrom(0);
            }
        });
    }

    /**
     * The throttled link of one session and direction, shared by the messages this rule throttles
     * there: a message that follows another on it starts an interval after the other's last
     * piece, so the two together keep the rate too.
     */
    private final class Link {
        private boolean used;
        private long nextPieceNanos;

        /** How long until a piece may go on the link, in nanoseconds; 0 when it may now. */
        long wait(FaultContext ctx) {
            return used ? Math.max(0, nextPieceNanos - ctx.executor().ticker().nanoTime()) : 0;
        }

        /** A piece went on the link now. */
        void used(FaultContext ctx) {
            used = true;
            nextPieceNanos = ctx.executor().ticker().nanoTime() + config.interval.toNanos();
        }
    }

    /** One session's links, one per direction. */
    private final class Links {
        private final Link toServer = new Link();
        private final Link toClient = new Link();

        Link of(Direction direction) {
            return direction == Direction.CLIENT_TO_SERVER ? toServer : toClient;
        }
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
        private final Link link;

        Piece(FaultContext ctx, ByteBuf all, Envelope envelope, Envelope answers, Frame frame, Link link) {
            this.ctx = ctx;
            this.all = all;
            this.envelope = envelope;
            this.answers = answers;
            this.direction = frame.direction();
            this.sequence = frame.sequence();
            this.route = frame.route();
            this.link = link;
        }

        void writeFrom(int offset) {
            int n = (int) Math.min(config.chunk, all.readableBytes() - offset);
            // An "original" frame is written byte for byte, with no delimiter added: a piece of a line.
            Frame piece = Frame.original(all.retainedSlice(all.readerIndex() + offset, n), n, envelope, direction,
                    sequence);
            piece.answers(answers);
            piece.route(route);
            link.used(ctx);
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
