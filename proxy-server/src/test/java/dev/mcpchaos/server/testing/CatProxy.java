package dev.mcpchaos.server.testing;

import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.McpChaosProxy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

/**
 * A stdio proxy whose server is {@code cat}: every message that reaches the server comes back to
 * the client, so what the client receives shows what the rules let through (rules in these tests
 * match client-to-server messages only). With a client for the control API. Shared by the control
 * API's and the {@code rules} command's tests.
 */
public final class CatProxy implements AutoCloseable {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    public final McpChaosProxy.Running proxy;
    public final List<String> received = new CopyOnWriteArrayList<>();
    /** How many faults the rules injected, whatever the rules were at the time. */
    public final AtomicLong faults = new AtomicLong();
    /** The same, by fault type. */
    public final Map<String, AtomicLong> faultsByType = new ConcurrentHashMap<>();
    private final OutputStream client;
    private final Thread reader;

    /**
     * A proxy with its control endpoint on a free loopback port, seed 7, these rules (YAML; null
     * for none) and this control token (null for none).
     */
    public static CatProxy withControl(String rules, String token) throws Exception {
        return new CatProxy(b -> {
            b.control(new InetSocketAddress("127.0.0.1", 0)).seed(7);
            if (rules != null) {
                b.rules(RuleSet.parse(rules, "start.yaml"));
            }
            if (token != null) {
                b.controlToken(token);
            }
            return b;
        });
    }

    public CatProxy(UnaryOperator<McpChaosProxy.StdioBuilder> configure) throws Exception {
        Pipe in = Pipe.open();
        Pipe out = Pipe.open();
        client = Channels.newOutputStream(in.sink());
        proxy = configure.apply(McpChaosProxy.stdio(List.of("cat"))
                        .clientInput(Channels.newInputStream(in.source()))
                        .clientOutput(Channels.newOutputStream(out.sink()))
                        .faultListener(event -> {
                            faults.incrementAndGet();
                            faultsByType.computeIfAbsent(event.fault(), f -> new AtomicLong()).incrementAndGet();
                        }))
                .start();
        InputStream fromProxy = Channels.newInputStream(out.source());
        reader = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(fromProxy, StandardCharsets.UTF_8))) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                    received.add(line);
                }
            } catch (IOException ignored) {
                // the proxy closed its output
            }
        }, "cat-proxy-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /** A {@code tools/call} of {@code tool} with id {@code id}. */
    public static String call(long id, String tool) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":{}}}";
    }

    public void send(String line) {
        try {
            client.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            client.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Ends the client's input and waits for everything to come back. */
    public void finish() throws Exception {
        client.close();
        proxy.exitCode().get(30, TimeUnit.SECONDS);
        reader.join(10_000);
    }

    public InetSocketAddress control() {
        return proxy.controlAddress();
    }

    /** The control API's URL, as {@code mcp-chaos rules --control} takes it. */
    public String url() {
        return "http://127.0.0.1:" + control().getPort();
    }

    public HttpResponse<String> request(String method, String path, String body, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + control().getPort() + path))
                .timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        if (headers.length > 0) {
            request.headers(headers);
        }
        try {
            return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A request whose body is these bytes as they are (not necessarily UTF-8). */
    public HttpResponse<String> requestBytes(String method, String path, byte[] body) {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + control().getPort() + path))
                .timeout(Duration.ofSeconds(10))
                .method(method, HttpRequest.BodyPublishers.ofByteArray(body))
                .build();
        try {
            return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public HttpResponse<String> get(String path) {
        return request("GET", path, null);
    }

    @Override
    public void close() {
        try {
            client.close();
        } catch (IOException ignored) {
            // already closed
        }
        proxy.close();
    }
}
