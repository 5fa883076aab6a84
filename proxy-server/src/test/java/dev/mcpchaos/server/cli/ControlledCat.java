package dev.mcpchaos.server.cli;

import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.McpChaosProxy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A running stdio proxy whose server is {@code cat}, with its control API on a free loopback
 * port: every message the rules let reach the server comes back to the client. (The control
 * tests' CatProxy, trimmed to what the command line's tests need.)
 */
final class ControlledCat implements AutoCloseable {

    final McpChaosProxy.Running proxy;
    final List<String> received = new CopyOnWriteArrayList<>();
    private final OutputStream client;

    /** A proxy with these rules (YAML; null for none) and control token (null for none), seed 7. */
    ControlledCat(String rules, String token) throws Exception {
        Pipe in = Pipe.open();
        Pipe out = Pipe.open();
        client = Channels.newOutputStream(in.sink());
        McpChaosProxy.StdioBuilder builder = McpChaosProxy.stdio(List.of("cat"))
                .clientInput(Channels.newInputStream(in.source()))
                .clientOutput(Channels.newOutputStream(out.sink()))
                .control(new InetSocketAddress("127.0.0.1", 0))
                .seed(7);
        if (rules != null) {
            builder.rules(RuleSet.parse(rules, "start.yaml"));
        }
        if (token != null) {
            builder.controlToken(token);
        }
        proxy = builder.start();
        InputStream fromProxy = Channels.newInputStream(out.source());
        Thread reader = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(fromProxy, StandardCharsets.UTF_8))) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                    received.add(line);
                }
            } catch (IOException ignored) {
                // the proxy closed its output
            }
        }, "controlled-cat-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /** A {@code tools/call} of {@code tool} with id {@code id}. */
    static String call(long id, String tool) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":{}}}";
    }

    void send(String line) {
        try {
            client.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            client.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The control API's URL, as {@code --control} takes it. */
    String url() {
        return "http://127.0.0.1:" + proxy.controlAddress().getPort();
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
