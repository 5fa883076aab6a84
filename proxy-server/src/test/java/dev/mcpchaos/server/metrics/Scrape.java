package dev.mcpchaos.server.metrics;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Reads the control endpoint's {@code /metrics} and looks samples up in it. */
final class Scrape {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    final int status;
    final String contentType;
    final String body;

    private Scrape(HttpResponse<String> response) {
        status = response.statusCode();
        contentType = response.headers().firstValue("Content-Type").orElse("");
        body = response.body();
    }

    static HttpResponse<String> get(InetSocketAddress control, String path) {
        try {
            HttpRequest request = HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + control.getPort() + path))
                    .timeout(Duration.ofSeconds(10)).GET().build();
            return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new AssertionError("GET " + path + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    static Scrape metrics(InetSocketAddress control) {
        return new Scrape(get(control, "/metrics"));
    }

    /**
     * The value of the sample {@code series} (name and labels exactly as exposed, such as
     * {@code mcp_chaos_bytes_total{direction="client_to_server",transport="stdio"}}), or null
     * when there is no such sample.
     */
    Double value(String series) {
        for (String line : body.split("\n")) {
            if (line.startsWith(series + " ")) {
                String rest = line.substring(series.length() + 1).trim();
                int space = rest.indexOf(' '); // a timestamp may follow
                return Double.parseDouble(space < 0 ? rest : rest.substring(0, space));
            }
        }
        return null;
    }

    /** The samples of a metric family, for messages. */
    String family(String name) {
        StringBuilder sb = new StringBuilder();
        for (String line : body.split("\n")) {
            if (line.startsWith(name)) {
                sb.append(line).append('\n');
            }
        }
        return sb.toString();
    }
}
