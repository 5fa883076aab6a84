package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.transport.TransportKind;

import java.util.Objects;

/**
 * {@code invalid_content_type} (HTTP only): the response that carries the message claims
 * {@code content_type} (default {@code text/html}), which its body is not. Needs
 * {@link HttpFaultActions} from the HTTP transport. On a request, or on a JSON response, the
 * response's head is still to come; on an event of an SSE stream it has already left, so the
 * fault has nothing to do there ({@link FaultContext#nothingToDo}): the event passes and the
 * rule does not count it as injected.
 */
public final class InvalidContentTypeFault extends DeclaredFault {

    /** {@code invalid_content_type}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("invalid_content_type", InvalidContentTypeFault::create,
            FaultParameter.optional("content_type", "text/html"))
            .only(TransportKind.HTTP);

    /** @param contentType the claimed media type, not empty */
    public record Config(String contentType) {
        public Config {
            Objects.requireNonNull(contentType, "contentType");
            InvalidParameterException.check(!contentType.isBlank(), "content_type", "''",
                    "a media type, such as text/html");
        }

        /** Reads {@code content_type} (default {@code text/html}). */
        static Config from(FaultParams params) {
            return new Config(params.string("content_type", "text/html", "a media type, such as text/html"));
        }
    }

    private final Config config;

    /** A fault with this configuration (validated by the record). */
    public InvalidContentTypeFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
    }

    static InvalidContentTypeFault create(FaultParams params) {
        return new InvalidContentTypeFault(Config.from(params));
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        if (HttpFaults.perform(ctx, frame, type(), "content type claimed: " + config.contentType,
                (http, interceptor, f) -> http.overrideContentType(interceptor, f, config.contentType),
                "the response's head has already left (as on an SSE stream): its content type"
                        + " can no longer change")) {
            ctx.proceed(frame);
        }
    }

    @Override
    public String toString() {
        return "invalid_content_type(" + config.contentType + ')';
    }
}
