package dev.mcpchaos.server.traffic;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.intercept.InterceptorContext;
import io.netty.buffer.ByteBuf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;

/**
 * Logs every message that passes, one line each, to the {@code traffic} logger (stderr): direction,
 * sequence number, kind, id, method and tool (for a response, those of the request it answers),
 * size, and the start of the message itself. Forwards every frame untouched.
 */
public final class TrafficLog implements FrameInterceptor {

    private static final Logger log = LoggerFactory.getLogger("traffic");

    private final int maxChars;

    /** @param maxChars how much of each message to show; 0 shows none */
    public TrafficLog(int maxChars) {
        if (maxChars < 0) {
            throw new IllegalArgumentException("maxChars: " + maxChars + " (expected: >= 0)");
        }
        this.maxChars = maxChars;
    }

    @Override
    public void onFrame(InterceptorContext ctx, Frame frame) {
        if (log.isInfoEnabled() && frame.envelope().kind() != MessageKind.BLANK) {
            log.info(describe(frame, maxChars));
        }
        ctx.forward(frame);
    }

    /** One line describing a frame, such as {@code c->s #3 request id=2 tools/call echo (87 B) {...}}. */
    public static String describe(Frame frame, int maxChars) {
        StringBuilder sb = new StringBuilder(96 + maxChars);
        sb.append(frame.direction().arrow()).append(" #").append(frame.sequence()).append(' ')
                .append(frame.envelope().kind().name().toLowerCase());
        if (frame.envelope().hasId()) {
            Object id = frame.envelope().id();
            sb.append(" id=").append(id instanceof String ? "\"" + id + "\"" : id);
        }
        String method = frame.method();
        if (method != null) {
            sb.append(' ').append(method);
        }
        String tool = frame.toolName();
        if (tool != null) {
            sb.append(' ').append(tool);
        }
        if (frame.envelope().malformedReason() != null) {
            sb.append(" (").append(frame.envelope().malformedReason()).append(')');
        }
        ByteBuf content = frame.content();
        sb.append(" (").append(content.readableBytes()).append(" B)");
        if (maxChars > 0) {
            int n = Math.min(content.readableBytes(), maxChars);
            sb.append(' ').append(content.toString(content.readerIndex(), n, StandardCharsets.UTF_8));
            if (n < content.readableBytes()) {
                sb.append('…');
            }
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return "TrafficLog";
    }
}
