package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.rules.internal.Json;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * {@code corrupt}: the message becomes malformed in one chosen way, and stays one line (one frame)
 * so the peer's parser, not its framer, has to cope.
 *
 * <ul>
 *   <li>{@code truncated_json}: cut at a random point in its second half;</li>
 *   <li>{@code invalid_escape}: {@code \q} inserted at the start of the first string value;</li>
 *   <li>{@code unclosed_bracket}: the final <code>}</code> or <code>]</code> removed;</li>
 *   <li>{@code nan_literal}: the first number replaced by {@code NaN} (or a {@code "nan":NaN}
 *       member added when there is none);</li>
 *   <li>{@code garbage}: the whole message replaced by as many random printable non-JSON characters;</li>
 *   <li>{@code invalid_utf8}: the bytes {@code C3 28} (a lead byte without its continuation)
 *       inserted at the start of the first string value.</li>
 * </ul>
 */
public final class CorruptFault extends DeclaredFault {

    /** {@code corrupt}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("corrupt", CorruptFault::create,
            FaultParameter.optional("mode", "truncated_json"));

    /** How the message is broken. */
    public enum Mode { TRUNCATED_JSON, INVALID_ESCAPE, UNCLOSED_BRACKET, NAN_LITERAL, GARBAGE, INVALID_UTF8 }

    /** Characters garbage is made of: printable, no quotes, brackets or digits, so never JSON. */
    private static final byte[] GARBAGE_ALPHABET =
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ#$%&*+-<=>?@^_|~!;:".getBytes(StandardCharsets.US_ASCII);

    /** @param mode how the message is broken */
    public record Config(Mode mode) {
        public Config {
            Objects.requireNonNull(mode, "mode");
        }

        /** Reads {@code mode} (default {@code truncated_json}). */
        static Config from(FaultParams params) {
            return new Config(params.choice("mode", Mode.class, Mode.TRUNCATED_JSON));
        }
    }

    private final Config config;

    /** A fault with this configuration (validated by the record). */
    public CorruptFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
    }

    static CorruptFault create(FaultParams params) {
        return new CorruptFault(Config.from(params));
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        byte[] json = Edits.bytes(frame);
        byte[] broken = corrupt(json, config.mode, ctx.random());
        ctx.detail(config.mode.name().toLowerCase(Locale.ROOT) + " (" + json.length + " B -> " + broken.length + " B)");
        ctx.proceed(Edits.replace(ctx, frame, broken));
    }

    /** The message broken in the given way; {@code json} is not changed. */
    static byte[] corrupt(byte[] json, Mode mode, SplittableRandom random) {
        switch (mode) {
            case TRUNCATED_JSON: {
                if (json.length < 2) {
                    return "{".getBytes(StandardCharsets.US_ASCII);
                }
                int half = json.length / 2;
                int cut = half + random.nextInt(json.length - half); // [len/2, len-1]
                return Arrays.copyOf(json, Math.max(1, cut));
            }
            case INVALID_ESCAPE:
                return insertInFirstString(json, "\\q".getBytes(StandardCharsets.US_ASCII));
            case INVALID_UTF8:
                return insertInFirstString(json, new byte[] {(byte) 0xC3, (byte) 0x28});
            case UNCLOSED_BRACKET: {
                int last = json.length - 1;
                while (last >= 0 && isWhitespace(json[last])) {
                    last--;
                }
                if (last >= 0 && (json[last] == '}' || json[last] == ']')) {
                    return Json.splice(json, last, last + 1, new byte[0]);
                }
                return Json.splice(json, json.length, json.length, new byte[] {'{'});
            }
            case NAN_LITERAL: {
                List<Json.Span> numbers = Json.scalars(json, false);
                byte[] nan = "NaN".getBytes(StandardCharsets.US_ASCII);
                if (!numbers.isEmpty()) {
                    Json.Span first = numbers.get(0);
                    return Json.splice(json, first.start(), first.end(), nan);
                }
                int brace = indexOf(json, (byte) '{');
                if (brace >= 0) {
                    String member = Json.isEmptyObject(json, brace) ? "\"nan\":NaN" : "\"nan\":NaN,";
                    return Json.splice(json, brace + 1, brace + 1, member.getBytes(StandardCharsets.US_ASCII));
                }
                return nan;
            }
            case GARBAGE: {
                byte[] garbage = new byte[Math.max(1, json.length)];
                garbage[0] = '#';
                for (int i = 1; i < garbage.length; i++) {
                    garbage[i] = GARBAGE_ALPHABET[random.nextInt(GARBAGE_ALPHABET.length)];
                }
                return garbage;
            }
            default:
                throw new IllegalStateException("mode: " + mode);
        }
    }

    /** Inserts {@code bytes} just inside the first string value (or the first quote, or in front). */
    private static byte[] insertInFirstString(byte[] json, byte[] bytes) {
        List<Json.Span> strings = Json.scalars(json, true);
        int at;
        if (!strings.isEmpty()) {
            at = strings.get(0).start() + 1;
        } else {
            int quote = indexOf(json, (byte) '"');
            if (quote < 0) {
                byte[] prefix = new byte[bytes.length + 1];
                prefix[0] = '"';
                System.arraycopy(bytes, 0, prefix, 1, bytes.length);
                return Json.splice(json, 0, 0, prefix);
            }
            at = quote + 1;
        }
        return Json.splice(json, at, at, bytes);
    }

    private static int indexOf(byte[] json, byte b) {
        for (int i = 0; i < json.length; i++) {
            if (json[i] == b) {
                return i;
            }
        }
        return -1;
    }

    private static boolean isWhitespace(byte b) {
        return b == ' ' || b == '\t' || b == '\r' || b == '\n';
    }

    @Override
    public String toString() {
        return "corrupt(" + config.mode.name().toLowerCase(Locale.ROOT) + ')';
    }
}
