package dev.mcpchaos.rules.fault;

import com.fasterxml.jackson.core.JsonParser;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.internal.Json;

import java.io.IOException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * {@code http_status} (HTTP only): the POST that carries the message is answered with
 * {@code status} (and {@code headers}, such as {@code Retry-After}, and {@code body}) instead of
 * being forwarded. Needs {@link HttpFaultActions} from the HTTP transport. A {@code body} is sent
 * as {@code application/json} when it is JSON, else as {@code text/plain; charset=utf-8}, unless
 * {@code headers} give a {@code Content-Type}.
 */
public final class HttpStatusFault extends DeclaredFault {

    /** {@code http_status}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("http_status", HttpStatusFault::create,
            FaultParameter.required("status"),
            FaultParameter.optional("headers", "none"),
            FaultParameter.optional("body", "empty"))
            .only(TransportKind.HTTP);

    private static final String CONTENT_TYPE = "Content-Type";

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
    /** The configured headers, with the Content-Type of a body that has none. */
    private final Map<String, String> headers;

    /** A fault with this configuration (validated by the record). */
    public HttpStatusFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
        this.headers = withContentType(config.headers, config.body);
    }

    static HttpStatusFault create(FaultParams params) {
        return new HttpStatusFault(Config.from(params));
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        if (HttpFaults.perform(ctx, frame, type(), "answered HTTP " + config.status,
                (http, interceptor, f) -> http.respond(interceptor, f, config.status, headers, config.body),
                "the response has already begun (as on an SSE stream): it can no longer be"
                        + " answered with a status")) {
            ctx.drop(frame);
        }
    }

    /**
     * {@code headers} with a Content-Type for a non-empty body when they name none: a JSON body
     * is {@code application/json}, any other text {@code text/plain; charset=utf-8}. Given
     * explicitly so the transport's default (JSON) never labels plain text.
     */
    static Map<String, String> withContentType(Map<String, String> headers, String body) {
        if (body.isEmpty() || headers.keySet().stream().anyMatch(CONTENT_TYPE::equalsIgnoreCase)) {
            return headers;
        }
        Map<String, String> all = new LinkedHashMap<>(headers);
        all.put(CONTENT_TYPE, isJson(body) ? "application/json" : "text/plain; charset=utf-8");
        return Collections.unmodifiableMap(all);
    }

    /** Whether {@code text} is one JSON value and nothing else. */
    private static boolean isJson(String text) {
        try (JsonParser parser = Json.FACTORY.createParser(text)) {
            if (parser.nextToken() == null) {
                return false;
            }
            parser.skipChildren();
            return parser.nextToken() == null;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public String toString() {
        return "http_status(" + config.status + ')';
    }
}
