package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.rules.internal.Json;
import io.netty.buffer.ByteBuf;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * {@code noise}: a stray line that is not JSON-RPC (a log line a server printed on stdout by
 * mistake) is written just before the message, which then goes on unchanged. On stdio the line
 * is written as is, followed by a newline.
 */
public final class NoiseFault extends DeclaredFault {

    static final String DEFAULT_TEXT = "[mcp-chaos] a log line that should have gone to stderr";

    /** {@code noise}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("noise", NoiseFault::create,
            FaultParameter.optional("text", DEFAULT_TEXT));

    /** @param text the stray line, one line (no line breaks), not empty */
    public record Config(String text) {
        public Config {
            Objects.requireNonNull(text, "text");
            InvalidParameterException.check(!text.isEmpty() && text.indexOf('\n') < 0 && text.indexOf('\r') < 0,
                    "text", "'" + text.replace("\n", "\\n").replace("\r", "\\r") + "'",
                    "one line of text, not empty and without line breaks");
        }

        /** Reads {@code text} (optional). */
        static Config from(FaultParams params) {
            return new Config(params.string("text", DEFAULT_TEXT, "a string"));
        }
    }

    private final Config config;
    private final byte[] line;

    /** A fault with this configuration (validated by the record). */
    public NoiseFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
        this.line = config.text.getBytes(StandardCharsets.UTF_8);
    }

    static NoiseFault create(FaultParams params) {
        return new NoiseFault(Config.from(params));
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        ByteBuf stray = ctx.alloc().buffer(line.length).writeBytes(line);
        Frame noise = Frame.synthesized(stray, Json.sniff(stray), frame.direction(), frame.sequence());
        noise.route(frame.route()); // on HTTP: the same exchange as the message
        ctx.detail("wrote a stray line of " + line.length + " B before the message");
        ctx.output(noise);
        ctx.proceed(frame);
    }

    @Override
    public String toString() {
        return "noise";
    }
}
