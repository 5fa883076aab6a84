package dev.mcpchaos.server.traffic;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.intercept.ObservingInterceptor;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.server.redact.SecretRedactor;
import io.netty.buffer.ByteBuf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;

/**
 * Logs every message that passes, one line each, to the {@code traffic} logger (stderr): direction,
 * sequence number, kind, id, method and tool (for a response, those of the request it answers),
 * size, and the start of the message itself. Forwards every frame untouched.
 *
 * <p>Secrets in the part shown are replaced by {@code [redacted]} (see {@link SecretRedactor}):
 * the redaction runs on the first {@code maxChars} plus {@value #LOOKAHEAD} characters, before
 * the cut to {@code maxChars}, so that a secret that starts in the part shown is recognised whole
 * and never shown in part. That costs a few regular-expression passes over that much text per
 * message, which is why this log is off by default and is meant for diagnosis.
 */
public final class TrafficLog implements ObservingInterceptor {

    private static final Logger log = LoggerFactory.getLogger("traffic");

    /**
     * How far past the cut the redactor looks: enough for any secret that starts in the part
     * shown to be recognised (a key's name and the start of its value, a token's prefix and
     * minimum length); a value that goes on further is redacted to the end of what is looked at.
     */
    static final int LOOKAHEAD = 512;

    private final int maxChars;

    /** @param maxChars how many characters of each message to show; 0 shows none */
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
            // The parser's reason quotes the message, possibly beyond the part shown.
            sb.append(" (").append(SecretRedactor.redact(frame.envelope().malformedReason())).append(')');
        }
        ByteBuf content = frame.content();
        sb.append(" (").append(content.readableBytes()).append(" B)");
        if (maxChars > 0) {
            appendStart(sb, content, maxChars);
        }
        return sb.toString();
    }

    /** The first {@code maxChars} characters of the message, redacted before they are cut. */
    private static void appendStart(StringBuilder sb, ByteBuf content, int maxChars) {
        // A UTF-8 character is at least one byte: maxChars + LOOKAHEAD bytes hold at least as
        // many characters as are shown and looked at.
        int bytes = (int) Math.min(content.readableBytes(), (long) maxChars + LOOKAHEAD);
        String text = SecretRedactor.redact(content.toString(content.readerIndex(), bytes, StandardCharsets.UTF_8));
        int shown = text.length();
        if (shown > maxChars) {
            shown = maxChars;
            if (Character.isHighSurrogate(text.charAt(shown - 1))) {
                shown--; // not half a character
            }
        }
        sb.append(' ').append(text, 0, shown);
        if (shown < text.length() || bytes < content.readableBytes()) {
            sb.append('…');
        }
    }

    @Override
    public String toString() {
        return "TrafficLog";
    }
}
