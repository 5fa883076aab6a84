package dev.mcpchaos.testcontainers;

import dev.mcpchaos.rules.journal.Journal;
import dev.mcpchaos.rules.journal.JournalJson;
import dev.mcpchaos.rules.journal.JournalSnapshot;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Objects;

/**
 * A proxy's journal read over its control API: {@code GET /journal} for each
 * {@link #snapshot()}, {@code DELETE /journal} for {@link #clear()}. Holds nothing itself, so
 * every read is fresh.
 */
final class ControlApiJournal implements Journal {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10))
            .version(HttpClient.Version.HTTP_1_1).build();

    private final URI control;
    private final String token;

    /**
     * @param control the control API's base URL, such as {@code http://127.0.0.1:9090}
     * @param token its bearer token, or null for none
     */
    ControlApiJournal(URI control, String token) {
        this.control = Objects.requireNonNull(control, "control");
        this.token = token;
    }

    @Override
    public JournalSnapshot snapshot() {
        HttpResponse<String> response = send("GET", 200);
        try {
            return JournalJson.read(response.body());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("GET " + control.resolve("/journal") + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void clear() {
        send("DELETE", 204);
    }

    private HttpResponse<String> send(String method, int expected) {
        URI uri = control.resolve("/journal");
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(TIMEOUT)
                .method(method, HttpRequest.BodyPublishers.noBody());
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> response;
        try {
            response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(method + " " + uri + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(method + " " + uri + ": interrupted", e);
        }
        if (response.statusCode() != expected) {
            throw new IllegalStateException(method + " " + uri + ": HTTP " + response.statusCode() + " "
                    + response.body() + " (expected: " + expected + ")");
        }
        return response;
    }

    @Override
    public String toString() {
        return "journal at " + control.resolve("/journal");
    }
}
