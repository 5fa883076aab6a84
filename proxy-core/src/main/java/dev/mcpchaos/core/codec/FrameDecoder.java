package dev.mcpchaos.core.codec;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

import java.util.Objects;

/**
 * What the frame decoders of every wire format ({@code line}, {@code sse}) share: the two steps
 * they offer to code that holds the bytes itself ({@link #decode}, {@link #finish}), and the Netty
 * handler made of them, once: a chunk read is decoded and its frames go up the pipeline, the end
 * of the channel finishes the stream, a removed handler releases what its framer holds. Called
 * once per chunk, not per byte or per frame.
 */
public abstract class FrameDecoder extends ChannelInboundHandlerAdapter {

    private final Direction direction;

    /** @param direction the direction of the bytes this decoder reads */
    protected FrameDecoder(Direction direction) {
        this.direction = Objects.requireNonNull(direction, "direction");
    }

    /** Receives decoded frames. */
    @FunctionalInterface
    public interface FrameConsumer {
        /** Takes ownership of the frame. */
        void accept(Frame frame);
    }

    /** Decodes a chunk; takes ownership of it. Frames go to {@code out} in stream order. */
    public abstract void decode(ByteBuf chunk, FrameConsumer out);

    /** The input ended: passes on what is left of it and releases what is held. */
    public abstract void finish(FrameConsumer out);

    /** Releases what the framer holds, without passing anything on (the handler was removed). */
    protected abstract void closeFramer();

    /** The direction of the bytes this decoder reads. */
    public final Direction direction() {
        return direction;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf) {
            decode((ByteBuf) msg, ctx::fireChannelRead);
        } else {
            ctx.fireChannelRead(msg);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        finish(ctx::fireChannelRead);
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        closeFramer();
    }
}
