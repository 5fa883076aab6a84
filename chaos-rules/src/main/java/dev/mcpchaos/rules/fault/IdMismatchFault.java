package dev.mcpchaos.rules.fault;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.rules.internal.Json;
import dev.mcpchaos.rules.internal.Text;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * {@code id_mismatch}: a response carries another id than the request's: {@code id} when given
 * (a number or a string), otherwise one the client never used (the number plus 1000000, or the
 * string with {@code -mismatch} appended). The client then holds a response it cannot match and
 * a request that is never answered. Only the {@code id} value's bytes change. A response whose id
 * is {@code id} already passes unchanged, and that is not an injection
 * ({@link FaultContext#nothingToDo}).
 */
public final class IdMismatchFault extends DeclaredFault {

    /** {@code id_mismatch}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("id_mismatch", IdMismatchFault::create,
            FaultParameter.optional("id", "derived"));

    /** Added to a numeric id when no {@code id} is given. */
    static final long OFFSET = 1_000_000;

    /** @param idJson the id to use, as JSON text (a number or a string), or null to derive one */
    public record Config(String idJson) {
        public Config {
            if (idJson != null) {
                JsonNode node;
                try {
                    node = Json.MAPPER.readTree(idJson);
                } catch (IOException e) {
                    node = null;
                }
                InvalidParameterException.check(node != null && (node.isNumber() || node.isTextual()), "id",
                        idJson, "a number or a string");
            }
        }

        /** Reads {@code id} (optional). */
        static Config from(FaultParams params) {
            JsonNode id = params.json("id");
            if (id != null && !id.isNumber() && !id.isTextual()) {
                throw new InvalidParameterException("id", Text.given(id), "a number or a string");
            }
            return new Config(id == null ? null : id.toString());
        }
    }

    private final Config config;

    /** A fault with this configuration (validated by the record). */
    public IdMismatchFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
    }

    static IdMismatchFault create(FaultParams params) {
        return new IdMismatchFault(Config.from(params));
    }

    @Override
    public boolean canApply(Frame frame) {
        return frame.envelope().isResponse() && frame.envelope().hasId();
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        byte[] json = Edits.bytes(frame);
        Json.Span id = Json.locate(json, List.of("id"));
        if (id == null) {
            ctx.nothingToDo(frame, "no id found");
            return;
        }
        String wrong = config.idJson != null ? config.idJson : derived(frame.envelope().id());
        if (sameId(json, id, wrong)) {
            ctx.nothingToDo(frame, "the response's id is already " + wrong);
            return;
        }
        ctx.detail("id " + Text.id(frame.envelope().id()) + " -> " + wrong);
        byte[] changed = Json.splice(json, id.start(), id.end(), wrong.getBytes(StandardCharsets.UTF_8));
        ctx.proceed(Edits.replace(ctx, frame, changed));
    }

    /** Whether the id at {@code span} is {@code wrongJson} already (numbers by value: 5 is 5.0). */
    private static boolean sameId(byte[] json, Json.Span span, String wrongJson) {
        try {
            JsonNode present = Json.MAPPER.readTree(Arrays.copyOfRange(json, span.start(), span.end()));
            JsonNode wrong = Json.MAPPER.readTree(wrongJson);
            if (present.isNumber() && wrong.isNumber()) {
                return present.decimalValue().compareTo(wrong.decimalValue()) == 0;
            }
            return present.equals(wrong);
        } catch (IOException e) {
            return false;
        }
    }

    /** An id the client did not use, derived from the real one, as JSON text. */
    static String derived(Object id) {
        if (id instanceof Long) {
            long value = (Long) id;
            return Long.toString(value > Long.MAX_VALUE - OFFSET ? value - OFFSET : value + OFFSET);
        }
        if (id instanceof BigDecimal) {
            return ((BigDecimal) id).add(BigDecimal.valueOf(OFFSET)).toString();
        }
        if (id instanceof String) {
            return quote(id + "-mismatch");
        }
        return Long.toString(OFFSET); // a null id: any number is unknown
    }

    private static String quote(String text) {
        try {
            return Json.MAPPER.writeValueAsString(text);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return "id_mismatch" + (config.idJson != null ? "(" + config.idJson + ')' : "");
    }
}
