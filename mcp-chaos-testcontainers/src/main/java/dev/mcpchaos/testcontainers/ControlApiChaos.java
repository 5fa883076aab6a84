package dev.mcpchaos.testcontainers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.rules.Chaos;
import dev.mcpchaos.rules.RuleDraft;
import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.rules.RuleHandle;
import dev.mcpchaos.rules.RuleStats;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * {@link Chaos} over a proxy's control API ({@code docs/control-api.md}) with
 * {@code java.net.http}: what {@link McpChaosContainer#chaos()} returns, and it works for any
 * proxy with a control endpoint. It behaves as the in-process one: a rule refused by the proxy
 * (not valid, not for its transport, a name taken) is a {@link RuleFileException} with the
 * proxy's message, an unknown name a {@link NoSuchElementException}; any other failure of the
 * control API an {@link IllegalStateException} with its status and error.
 *
 * <p>{@link #reset()} puts back the rules the proxy was started with, as two changes (none, then
 * those), so that every counter starts again: between them, for a moment, no rule applies.
 */
public final class ControlApiChaos implements Chaos {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10))
            .version(HttpClient.Version.HTTP_1_1).build();

    private final URI base;
    private final String token;
    private final String startingRules;

    /**
     * @param controlUrl the control API's base URL, such as {@code http://127.0.0.1:9090}
     * @param token its bearer token, or null for none
     * @param startingRules the rule file the proxy started with (YAML or JSON text), what
     *                      {@link #reset()} goes back to; null for none
     */
    public ControlApiChaos(URI controlUrl, String token, String startingRules) {
        String url = Objects.requireNonNull(controlUrl, "controlUrl").toString();
        this.base = URI.create(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
        this.token = token;
        this.startingRules = startingRules != null ? startingRules : "rules: []";
    }

    @Override
    public RuleHandle add(RuleDraft rule) {
        Objects.requireNonNull(rule, "rule");
        rule.toRule(); // refused here with the same message as in-process, before anything is sent
        return added(send("POST", "/rules", rule.toJson(), "application/json"));
    }

    @Override
    public RuleHandle add(String ruleText) {
        Objects.requireNonNull(ruleText, "ruleText");
        return added(send("POST", "/rules", ruleText, "application/yaml"));
    }

    private RuleHandle added(JsonNode rule) {
        return new RuleHandle(this, rule.path("name").asText());
    }

    @Override
    public void load(String ruleFileText) {
        Objects.requireNonNull(ruleFileText, "ruleFileText");
        send("PUT", "/rules", ruleFileText, "application/yaml");
    }

    @Override
    public void load(Path ruleFile) {
        Objects.requireNonNull(ruleFile, "ruleFile");
        String text;
        try {
            text = Files.readString(ruleFile, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new RuleFileException(ruleFile.toString(), null, "cannot read the file (" + e + ")");
        }
        send("PUT", "/rules", text, ruleFile.toString().endsWith(".json") ? "application/json" : "application/yaml");
    }

    @Override
    public RuleHandle rule(String name) {
        send("GET", rulePath(name), null, null);
        return new RuleHandle(this, name);
    }

    @Override
    public List<RuleStats> rules() {
        List<RuleStats> stats = new ArrayList<>();
        for (JsonNode rule : send("GET", "/status", null, null).path("rules")) {
            stats.add(new RuleStats(rule.path("name").asText(), rule.path("enabled").asBoolean(),
                    rule.path("fault").asText(), rule.path("matched").asLong(), rule.path("injected").asLong()));
        }
        return stats;
    }

    @Override
    public void remove(String name) {
        send("DELETE", rulePath(name), null, null);
    }

    @Override
    public void enabled(String name, boolean enabled) {
        send("PATCH", rulePath(name), "{\"enabled\": " + enabled + "}", "application/json");
    }

    @Override
    public void faultsOff() {
        send("POST", "/faults/disable", null, null);
    }

    @Override
    public void faultsOn() {
        send("POST", "/faults/enable", null, null);
    }

    @Override
    public boolean faultsEnabled() {
        return send("GET", "/status", null, null).path("faults_enabled").asBoolean();
    }

    @Override
    public void reset() {
        send("PUT", "/rules", "rules: []", "application/yaml"); // so that no counter is kept
        send("PUT", "/rules", startingRules, "application/yaml");
        faultsOn();
    }

    private static String rulePath(String name) {
        Objects.requireNonNull(name, "name");
        return "/rules/" + URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** Sends a request; the answer's JSON (an empty object for 204), or the exception its error means. */
    private JsonNode send(String method, String path, String body, String contentType) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).timeout(TIMEOUT)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> response;
        try {
            response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("control API " + base + ": " + method + " " + path + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + method + " " + base + path, e);
        }
        int status = response.statusCode();
        JsonNode answer;
        try {
            answer = response.body().isEmpty() ? JSON.createObjectNode() : JSON.readTree(response.body());
        } catch (IOException e) {
            answer = JSON.createObjectNode().put("error", response.body());
        }
        if (status >= 200 && status < 300) {
            return answer;
        }
        String error = answer.path("error").asText(response.body());
        switch (status) {
            case 400:
            case 409:
                // The proxy's message names the request first ("POST /rules: rule 'x': ..."): kept whole.
                String prefix = method + " " + path + ": ";
                throw new RuleFileException(method + " " + path, null,
                        error.startsWith(prefix) ? error.substring(prefix.length()) : error);
            case 404:
                throw new NoSuchElementException(error);
            default:
                throw new IllegalStateException("control API " + base + ": " + method + " " + path + ": " + status
                        + " " + error);
        }
    }

    @Override
    public String toString() {
        return "ControlApiChaos(" + base + ')';
    }
}
