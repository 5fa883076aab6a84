package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.internal.Json;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

/** Small operations the faults share: copying frames and replacing their content. */
final class Edits {

    private Edits() {
    }

    /** The message bytes, copied: faults that rewrite work on an array. */
    static byte[] bytes(Frame frame) {
        return ByteBufUtil.getBytes(frame.content());
    }

    /**
     * A second frame with the same bytes (shared, not copied), envelope and correlation. An
     * original frame stays original, so its exact wire bytes (delimiter included) leave again.
     */
    static Frame copy(Frame frame) {
        return frame.duplicate();
    }

    /** Releases {@code frame} and returns its replacement holding {@code content} (owned by the new frame). */
    static Frame replace(Frame frame, ByteBuf content) {
        try {
            return frame.withContent(content, Json.sniff(content));
        } finally {
            frame.release();
        }
    }

    /** {@link #replace(Frame, ByteBuf)} with bytes in a buffer from the context's allocator. */
    static Frame replace(FaultContext ctx, Frame frame, byte[] content) {
        ByteBuf buf = ctx.alloc().buffer(content.length).writeBytes(content);
        return replace(frame, buf);
    }

    /** A JSON object that is a JSON-RPC message (request, notification, response or error). */
    static boolean isMessageObject(Frame frame) {
        MessageKind kind = frame.envelope().kind();
        return kind == MessageKind.REQUEST || kind == MessageKind.NOTIFICATION || kind == MessageKind.RESPONSE
                || kind == MessageKind.ERROR;
    }

    /**
     * A request, or an answer to one (a response or an error response): what an injected answer
     * can take the place of.
     */
    static boolean isRequestOrAnswer(Frame frame) {
        MessageKind kind = frame.envelope().kind();
        return kind == MessageKind.REQUEST || kind == MessageKind.RESPONSE || kind == MessageKind.ERROR;
    }

    /**
     * {@link #answerOrReplace} with an answer written here: {@code {"jsonrpc":"2.0","id":<the
     * frame's id>,"<member>":...}}, the member's value written by {@code value}.
     *
     * @param member {@code "result"} or {@code "error"}
     */
    static void answerOrReplace(FaultContext ctx, Frame frame, String member, Json.Writer value,
                                String answered, String replaced) {
        Object id = frame.envelope().id();
        ByteBuf answer = answer(ctx, id, member, value);
        boolean error = "error".equals(member);
        Envelope envelope = Envelope.ofObject("2.0", true, id, null, null, !error, error);
        answerOrReplace(ctx, frame, answer, envelope, answered, replaced);
    }

    /**
     * {@code {"jsonrpc":"2.0","id":<id>,"<member>":...}}, the member's value written by
     * {@code value}: an answer to the request with that id, owned by the caller.
     *
     * @param member {@code "result"} or {@code "error"}
     */
    static ByteBuf answer(FaultContext ctx, Object id, String member, Json.Writer value) {
        return Json.generate(ctx.alloc(), g -> {
            g.writeStartObject();
            g.writeStringField("jsonrpc", "2.0");
            g.writeFieldName("id");
            Json.writeId(g, id);
            g.writeFieldName(member);
            value.write(g);
            g.writeEndObject();
        });
    }

    /**
     * Puts {@code answer} (a response or error carrying the frame's id, owned by the new frame)
     * in the place of {@code frame}: a request is answered at once, back to its sender, and never
     * forwarded; a response (or an error response) is replaced by it. The detail is said first.
     *
     * @param answered the event's detail when a request is answered
     * @param replaced the event's detail when a response is replaced
     */
    private static void answerOrReplace(FaultContext ctx, Frame frame, ByteBuf answer, Envelope envelope,
                                        String answered, String replaced) {
        if (frame.envelope().isRequest()) {
            Frame reply = frame.reply(answer, envelope);
            reply.answers(frame.envelope());
            ctx.detail(answered);
            ctx.answer(reply);
            ctx.drop(frame);
        } else {
            ctx.detail(replaced);
            Frame replacement = frame.withContent(answer, envelope);
            frame.release();
            ctx.proceed(replacement);
        }
    }
}
