package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.transport.TransportKind;

import java.util.Map;
import java.util.Objects;

/**
 * {@code http_status} (HTTP only): the POST that carries the message is answered with
 * {@code status} (and {@code headers}, such as {@code Retry-After}, and {@code body}) instead of
 * being forwarded. Needs {@link HttpFaultActions} from the HTTP transport.
 */
public final class HttpStatusFault implements Fault {

    /**
     * @param status the HTTP status, 100 to 599
     * @param headers extra response headers
     * @param body the response body, possibly empty
     */
    public record Config(int status, Map<String, String> headers, String body) {
        public Config {
            headers = Map.copyOf(Objects.requireNonNull(headers, "headers"));
            Objects.requireNonNull(body, "body");
            InvalidParameterException.check(status >= 100 && status <= 599, "status", status,
                    "an HTTP status from 100 to 599, such as 503");
        }

        /** Reads {@code status} (required), {@code headers}, {@code body}. */
        static Config from(FaultParams params) {
            int status = params.integer("status", null, 100, 599).intValue();
            Map<String, String> headers = params.stringMap("headers", "a mapping of header names to values");
            String body = params.string("body", "", "a string");
            return new Config(status, headers, body);
        }
    }

    private final Config config;

    /** A fault with this configuration (validated by the record). */
    public HttpStatusFault(Config config) {
        this.config = Objects.requireNonNull(config, "config");
    }

    static HttpStatusFault create(FaultParams params) {
        return new HttpStatusFault(Config.from(params));
    }

    @Override
    public String type() {
        return "http_status";
    }

    @Override
    public boolean supports(TransportKind transport) {
        return transport == TransportKind.HTTP;
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        HttpFaultActions http = HttpFaults.require(ctx, type());
        ctx.detail("answered HTTP " + config.status);
        http.respond(ctx.interceptor(), frame, config.status, config.headers, config.body);
        ctx.drop(frame);
    }

    @Override
    public String toString() {
        return "http_status(" + config.status + ')';
    }
}
