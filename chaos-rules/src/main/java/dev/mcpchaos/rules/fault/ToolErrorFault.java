package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;

import java.util.Objects;

/**
 * {@code tool_error}: a {@code tools/call} fails the MCP way, as a successful JSON-RPC response
 * whose result is {@code {"content":[{"type":"text","text":...}],"isError":true}}. A response to
 * {@code tools/call} (or an error answering it) is replaced; a {@code tools/call} request is
 * answered at once, back to its sender, and never reaches the server.
 */
public final class ToolErrorFault extends DeclaredFault {

    static final String DEFAULT_TEXT = "Tool failed (injected by mcp-chaos)";

    /** {@code tool_error}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("tool_error", ToolErrorFault::create,
            FaultParameter.optional("text", DEFAULT_TEXT));

    /** @param text the text of the error result */
    public record Config(String text) {
        public Config {
            Objects.requireNonNull(text, "text");
        }

        /** Reads {@code text} (optional). */
        static Config from(FaultParams params) {
            return new Config(params.string("text", DEFAULT_TEXT, "a string"));
        }
    }

    private final Config config;

    /** A fault with this configuration (validated by the record). */
    public ToolErrorFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
    }

    static ToolErrorFault create(FaultParams params) {
        return new ToolErrorFault(Config.from(params));
    }

    @Override
    public boolean canApply(Frame frame) {
        return Edits.isRequestOrAnswer(frame) && "tools/call".equals(frame.method());
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        Edits.answerOrReplace(ctx, frame, "result", g -> {
            g.writeStartObject();
            g.writeArrayFieldStart("content");
            g.writeStartObject();
            g.writeStringField("type", "text");
            g.writeStringField("text", config.text);
            g.writeEndObject();
            g.writeEndArray();
            g.writeBooleanField("isError", true);
            g.writeEndObject();
        }, "answered with an error result; not forwarded", "result replaced by an error result");
    }

    @Override
    public String toString() {
        return "tool_error";
    }
}
