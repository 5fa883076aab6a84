package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.ByteBuf;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;

/**
 * {@code header_mismatch} (HTTP only; 2026-07-28, Streamable HTTP, "Server Validation"): the POST
 * that carries a request is refused as a server refuses one whose {@code header} (such as
 * {@code Mcp-Name} or {@code Mcp-Method}) does not match its body: {@code 400 Bad Request} with the
 * JSON-RPC error {@code -32020} ({@code HeaderMismatch}) carrying the request's id. The request is
 * not forwarded. What the client gets is exactly a validating server's refusal; the headers
 * themselves are left as they were (the proxy does not rewrite request headers), so this tests
 * what a client does with the refusal, not the server's validation.
 */
public final class HeaderMismatchFault extends DeclaredFault {

    /** The JSON-RPC error code of a header that does not match the body. */
    public static final int HEADER_MISMATCH = -32020;
    static final String DEFAULT_HEADER = "Mcp-Name";

    /** {@code header_mismatch}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("header_mismatch", HeaderMismatchFault::create,
            FaultParameter.optional("header", DEFAULT_HEADER))
            .only(TransportKind.HTTP);

    /** @param header the header the refusal names, an HTTP field name */
    public record Config(String header) {
        public Config {
            Objects.requireNonNull(header, "header");
            InvalidParameterException.check(header.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+"), "header",
                    "'" + header + "'", "an HTTP header name, such as Mcp-Name or Mcp-Method");
        }

        /** Reads {@code header} (optional). */
        static Config from(FaultParams params) {
            return new Config(params.string("header", DEFAULT_HEADER, "an HTTP header name"));
        }
    }

    private final Config config;

    /** A fault with this configuration (validated by the record). */
    public HeaderMismatchFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
    }

    static HeaderMismatchFault create(FaultParams params) {
        return new HeaderMismatchFault(Config.from(params));
    }

    @Override
    public boolean canApply(Frame frame) {
        return frame.envelope().isRequest();
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        ByteBuf json = Edits.answer(ctx, frame.envelope().id(), "error", g -> {
            g.writeStartObject();
            g.writeNumberField("code", HEADER_MISMATCH);
            g.writeStringField("message", "Header mismatch: the " + config.header
                    + " header does not match the request body (injected by mcp-chaos)");
            g.writeEndObject();
        });
        String body;
        try {
            body = json.toString(StandardCharsets.UTF_8);
        } finally {
            json.release();
        }
        if (HttpFaults.perform(ctx, frame, type(), "answered HTTP 400 with -32020 (" + config.header + ")",
                (http, interceptor, f) -> http.respond(interceptor, f, 400,
                        Map.of("Content-Type", "application/json"), body),
                "the response has already begun: it can no longer be answered with a status")) {
            ctx.drop(frame);
        }
    }

    @Override
    public String toString() {
        return "header_mismatch(" + config.header + ')';
    }
}
