package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.internal.Json;
import io.netty.buffer.ByteBuf;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;

/**
 * {@code oversize}: the message is grown to {@code size} bytes and stays valid JSON-RPC, to find
 * the peer's size limits. The padding is a string of {@code x} in {@code _meta} (MCP's place for
 * extra data) as {@code "dev.mcpchaos/padding"}: in {@code params._meta} of a request or
 * notification, in {@code result._meta} of a response (added when absent); for an error
 * response, in a top-level {@code _meta}. A message already that large passes unchanged, and
 * that is not an injection ({@link FaultContext#nothingToDo}).
 */
public final class OversizeFault extends DeclaredFault {

    /** {@code oversize}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("oversize", OversizeFault::create,
            FaultParameter.required("size"));

    static final long MAX_SIZE = 1L << 30;
    private static final String PADDING_KEY = "\"dev.mcpchaos/padding\":\"";
    private static final String EXPECTED = "a size from 1B to 1GiB, such as 10MiB";
    /** Written in blocks: a byte at a time would be slow, and far slower under leak detection. */
    private static final byte[] PADDING = "x".repeat(8192).getBytes(StandardCharsets.US_ASCII);

    /** @param size the message's size afterwards, in bytes, 1 B to 1 GiB */
    public record Config(long size) {
        public Config {
            InvalidParameterException.check(size >= 1 && size <= MAX_SIZE, "size", size, EXPECTED);
        }

        /** Reads {@code size} (required). */
        static Config from(FaultParams params) {
            return new Config(params.size("size", null, EXPECTED));
        }
    }

    private final Config config;

    /** A fault with this configuration (validated by the record). */
    public OversizeFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
    }

    static OversizeFault create(FaultParams params) {
        return new OversizeFault(Config.from(params));
    }

    @Override
    public boolean canApply(Frame frame) {
        return Edits.isMessageObject(frame);
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        if (frame.contentLength() >= config.size) {
            ctx.nothingToDo(frame, "message of " + frame.contentLength() + " B is already >= " + config.size + " B");
            return;
        }
        byte[] json = Edits.bytes(frame);
        Insertion insertion = insertionPoint(json, frame.envelope().kind());
        if (insertion == null) {
            ctx.nothingToDo(frame, "not a JSON object");
            return;
        }
        byte[] open = insertion.open.getBytes(StandardCharsets.UTF_8);
        byte[] close = (insertion.close + (insertion.needsComma ? "," : "")).getBytes(StandardCharsets.UTF_8);
        long padding = Math.max(0, config.size - json.length - open.length - close.length);
        int total = (int) (json.length + open.length + padding + close.length);
        ByteBuf grown = ctx.alloc().buffer(total);
        grown.writeBytes(json, 0, insertion.at).writeBytes(open);
        for (long left = padding; left > 0; left -= PADDING.length) {
            grown.writeBytes(PADDING, 0, (int) Math.min(left, PADDING.length));
        }
        grown.writeBytes(close).writeBytes(json, insertion.at, json.length - insertion.at);
        ctx.detail("grown from " + json.length + " B to " + total + " B");
        ctx.proceed(Edits.replace(frame, grown));
    }

    /** What to insert just after the '{' at {@code at}, around the padding. */
    private record Insertion(int at, String open, String close, boolean needsComma) {
    }

    private static Insertion insertionPoint(byte[] json, MessageKind kind) {
        Json.Span root = Json.locate(json, List.of());
        if (root == null || json[root.start()] != '{') {
            return null;
        }
        String container = kind == MessageKind.RESPONSE ? "result"
                : kind == MessageKind.ERROR ? null : "params";
        if (container != null) {
            Json.Span meta = Json.locate(json, List.of(container, "_meta"));
            if (meta != null && json[meta.start()] == '{') {
                return new Insertion(meta.start() + 1, PADDING_KEY, "\"", !Json.isEmptyObject(json, meta.start()));
            }
            Json.Span object = Json.locate(json, List.of(container));
            if (object != null && json[object.start()] == '{') {
                return new Insertion(object.start() + 1, "\"_meta\":{" + PADDING_KEY, "\"}",
                        !Json.isEmptyObject(json, object.start()));
            }
            if (object == null && kind != MessageKind.RESPONSE) {
                return new Insertion(root.start() + 1, "\"params\":{\"_meta\":{" + PADDING_KEY, "\"}}",
                        !Json.isEmptyObject(json, root.start()));
            }
        }
        Json.Span meta = Json.locate(json, List.of("_meta"));
        if (meta != null && json[meta.start()] == '{') {
            return new Insertion(meta.start() + 1, PADDING_KEY, "\"", !Json.isEmptyObject(json, meta.start()));
        }
        return new Insertion(root.start() + 1, "\"_meta\":{" + PADDING_KEY, "\"}", !Json.isEmptyObject(json, root.start()));
    }

    @Override
    public String toString() {
        return "oversize(" + config.size + " B)";
    }
}
