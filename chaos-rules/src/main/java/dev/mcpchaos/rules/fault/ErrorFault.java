package dev.mcpchaos.rules.fault;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.rules.internal.Json;

import java.util.Objects;

/**
 * {@code error}: a JSON-RPC error takes the place of an answer. A request is answered at once,
 * back to its sender, with an error carrying its id, and is never forwarded; a response (or an
 * error response) is replaced by the error, with the same id.
 */
public final class ErrorFault extends DeclaredFault {

    static final int DEFAULT_CODE = -32603;
    static final String DEFAULT_MESSAGE = "Internal error (injected by mcp-chaos)";

    /** {@code error}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("error", ErrorFault::create,
            FaultParameter.optional("code", String.valueOf(DEFAULT_CODE)),
            FaultParameter.optional("message", DEFAULT_MESSAGE),
            FaultParameter.optional("data", "none"));

    /**
     * @param code the JSON-RPC error code
     * @param message the error message
     * @param dataJson the {@code data} member as JSON text, or null for none
     */
    public record Config(int code, String message, String dataJson) {
        public Config {
            Objects.requireNonNull(message, "message");
            if (dataJson != null) {
                try {
                    Json.MAPPER.readTree(dataJson);
                } catch (JsonProcessingException e) {
                    throw new InvalidParameterException("data", dataJson, "a JSON value");
                }
            }
        }

        /** Reads {@code code} (default -32603), {@code message}, {@code data} (any value, optional). */
        static Config from(FaultParams params) {
            int code = params.integer("code", (long) DEFAULT_CODE, Integer.MIN_VALUE, Integer.MAX_VALUE).intValue();
            String message = params.string("message", DEFAULT_MESSAGE, "a string");
            JsonNode data = params.json("data");
            return new Config(code, message, data == null ? null : data.toString());
        }
    }

    private final Config config;

    /** A fault with this configuration (validated by the record). */
    public ErrorFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
    }

    static ErrorFault create(FaultParams params) {
        return new ErrorFault(Config.from(params));
    }

    @Override
    public boolean canApply(Frame frame) {
        return Edits.isRequestOrAnswer(frame);
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        Edits.answerOrReplace(ctx, frame, "error", g -> {
            g.writeStartObject();
            g.writeNumberField("code", config.code);
            g.writeStringField("message", config.message);
            if (config.dataJson != null) {
                g.writeFieldName("data");
                g.writeRawValue(config.dataJson);
            }
            g.writeEndObject();
        }, "answered with error " + config.code + "; not forwarded", "response replaced by error " + config.code);
    }

    @Override
    public String toString() {
        return "error(" + config.code + ", " + config.message + ')';
    }
}
