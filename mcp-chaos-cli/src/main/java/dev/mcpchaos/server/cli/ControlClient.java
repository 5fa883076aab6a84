package dev.mcpchaos.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * A client of a running proxy's control API, for {@code mcp-chaos rules}. Every answer of 400 or
 * more, and every failure to get an answer, becomes a {@link ControlException} whose message is
 * the one line to show the user: the proxy's own {@code error} where it gave one.
 */
final class ControlClient {

    /** Where the http proxy serves its control API unless told otherwise. */
    static final URI DEFAULT_URL = URI.create("http://127.0.0.1:9090");

    static final ObjectMapper JSON = JsonMapper.builder().build();

    /** Connecting to a proxy on the same machine or the same network takes far less. */
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    /** No control request blocks on the proxy's side, so a slow answer means something is wrong. */
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    private final HttpClient http;
    private final URI base;
    private final String token;

    /**
     * A client of the control API at {@code base} (as made by {@link #parseUrl}), sending
     * {@code token} as a bearer token when it is not null.
     */
    ControlClient(URI base, String token) {
        this.base = Objects.requireNonNull(base, "base");
        this.token = token;
        // HTTP/1.1 only: the control API speaks nothing else, and an h2c upgrade offer is noise to it.
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(CONNECT_TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    }

    /** A request the proxy refused, or one that got no answer: the message is for the user. */
    static final class ControlException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ControlException(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * The control API's base URL from {@code --control}: a URL such as
     * {@code http://127.0.0.1:9090} (a path is kept, for a proxy behind a prefix) or
     * {@code HOST:PORT}, which means plain http.
     *
     * @throws IllegalArgumentException quoting the value and saying what was expected (picocli puts
     *         the option's name in front)
     */
    static URI parseUrl(String text) {
        Objects.requireNonNull(text, "text");
        String expected = " (expected: a URL such as http://127.0.0.1:9090, or HOST:PORT)";
        String trimmed = text.trim();
        URI uri;
        try {
            uri = new URI(trimmed.contains("://") ? trimmed : "http://" + trimmed);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("'" + text + "'" + expected);
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw new IllegalArgumentException("'" + text + "': scheme " + uri.getScheme()
                    + " (expected: http or https)");
        }
        if (uri.getHost() == null || uri.getRawQuery() != null || uri.getRawFragment() != null
                || uri.getRawUserInfo() != null) {
            throw new IllegalArgumentException("'" + text + "'" + expected);
        }
        if (!trimmed.contains("://") && uri.getPort() < 0) {
            throw new IllegalArgumentException("'" + text + "': no port" + expected);
        }
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        return URI.create(scheme + "://" + uri.getRawAuthority() + path);
    }

    /** The base URL, as the user should see it in messages. */
    URI base() {
        return base;
    }

    /** {@code GET path}'s body. */
    String get(String path) {
        return send("GET", path, null, null);
    }

    /** {@code GET path}'s body as JSON. */
    JsonNode getJson(String path) {
        return json("GET", path, get(path));
    }

    /**
     * Sends a request and returns the body of a 2xx answer.
     *
     * @param body the body, or null for none
     * @param contentType the body's type, or null for none
     * @throws ControlException with the proxy's message for an answer of 400 or more, or saying
     *         why there was no answer
     */
    String send(String method, String path, String body, String contentType) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(REQUEST_TIMEOUT)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        if (token != null) {
            try {
                request.header("Authorization", "Bearer " + token);
            } catch (IllegalArgumentException e) {
                // Never echo the token: it is a secret even when it is malformed.
                throw new ControlException("--token: not usable in an HTTP header (expected: printable "
                        + "characters, no line breaks)");
            }
        }
        HttpResponse<String> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (HttpTimeoutException e) {
            throw unreachable("no answer in time (" + reason(e) + ")");
        } catch (IOException e) {
            throw unreachable(reason(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ControlException(method + " " + path + ": interrupted");
        }
        int status = response.statusCode();
        if (status >= 200 && status < 300) {
            return response.body();
        }
        throw new ControlException(refusal(method, path, status, response.body()));
    }

    /** {@code body}, an answer to {@code method path}, as JSON. */
    JsonNode json(String method, String path, String body) {
        try {
            JsonNode node = JSON.readTree(body);
            if (node != null && !node.isMissingNode()) {
                return node;
            }
        } catch (IOException e) {
            // answered below
        }
        throw new ControlException(method + " " + base + path + ": the answer is not JSON (expected: the "
                + "control API of mcp-chaos; is --control pointing at it?)");
    }

    private ControlException unreachable(String why) {
        return new ControlException("cannot reach the control API at " + base + ": " + why
                + " (is the proxy running, with its control API on this address?)");
    }

    /**
     * Why a request got no answer, in words: the JDK's client often wraps the useful exception,
     * and its ConnectException for a refused connection may carry no message at all.
     */
    private String reason(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof UnresolvedAddressException) {
                return "unknown host " + base.getHost();
            }
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) {
                return t.getMessage();
            }
        }
        return e instanceof ConnectException ? "connection refused" : e.getClass().getSimpleName();
    }

    private String refusal(String method, String path, int status, String body) {
        String message = null;
        try {
            JsonNode error = JSON.readTree(body).path("error");
            if (error.isTextual()) {
                message = error.asText();
            }
        } catch (IOException | RuntimeException e) {
            // not the control API's JSON: say what came back instead
        }
        if (message == null) {
            String text = body == null ? "" : body.strip();
            message = method + " " + base + path + ": HTTP " + status
                    + (text.isEmpty() ? "" : ": " + (text.length() > 200 ? text.substring(0, 200) + "..." : text));
        }
        if (status == 401) {
            message += "; give the proxy's control token with --token or the " + ChaosOptions.TOKEN_VARIABLE
                    + " environment variable";
        }
        return message;
    }

    /** {@code name} as one path segment: every byte but the unreserved characters percent-encoded. */
    static String segment(String name) {
        StringBuilder out = new StringBuilder();
        for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '.' || c == '_' || c == '~') {
                out.append(c);
            } else {
                out.append('%').append(String.format(Locale.ROOT, "%02X", b & 0xff));
            }
        }
        return out.toString();
    }
}
