package dev.mcpchaos.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.server.McpChaosProxy;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code mcp-chaos demo}: the proxy in front of the built-in server, driven by a scripted client,
 * with every message shown. Needs nothing but Java.
 */
@Command(name = "demo",
        mixinStandardHelpOptions = true,
        description = {"Show the proxy at work with nothing but Java: start the built-in MCP server behind "
                + "mcp-chaos stdio, drive it with a scripted client (initialize, tools/list, four tool calls, "
                + "ping), and log every message that passes on stderr."})
final class DemoCommand implements Callable<Integer> {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Option(names = "--log-traffic", paramLabel = "CHARS", defaultValue = "160",
            description = "Characters of each message to show. Default: ${DEFAULT-VALUE}.")
    int trafficChars;

    private final PrintStream out = System.out;
    private int nextId = 1;

    @Override
    public Integer call() throws Exception {
        Pipe toProxy = Pipe.open();
        Pipe fromProxy = Pipe.open();
        McpChaosProxy.Running proxy = McpChaosProxy.stdio(demoServerCommand())
                .clientInput(Channels.newInputStream(toProxy.source()))
                .clientOutput(Channels.newOutputStream(fromProxy.sink()))
                .logTraffic(trafficChars)
                .start();
        int code;
        try (OutputStream requests = Channels.newOutputStream(toProxy.sink());
             BufferedReader responses = new BufferedReader(new InputStreamReader(
                     Channels.newInputStream(fromProxy.source()), StandardCharsets.UTF_8))) {
            out.println("demo: scripted client -> mcp-chaos stdio -> built-in demo server; every message is logged on stderr");
            ObjectNode init = JSON.createObjectNode();
            init.put("protocolVersion", "2025-11-25");
            init.putObject("capabilities");
            init.putObject("clientInfo").put("name", "mcp-chaos-demo-client").put("version", Main.version());
            JsonNode initialized = call(requests, responses, "initialize", init);
            out.println("demo: initialized: " + initialized.path("serverInfo").path("name").asText()
                    + ", protocol " + initialized.path("protocolVersion").asText());
            send(requests, message(null, "notifications/initialized", null));

            JsonNode tools = call(requests, responses, "tools/list", JSON.createObjectNode());
            List<String> names = new ArrayList<>();
            tools.path("tools").forEach(t -> names.add(t.path("name").asText()));
            out.println("demo: tools: " + String.join(", ", names));

            out.println("demo: echo -> " + text(callTool(requests, responses, "echo",
                    JSON.createObjectNode().put("text", "hello through mcp-chaos"), false)));
            out.println("demo: add 2 + 3 -> " + text(callTool(requests, responses, "add",
                    JSON.createObjectNode().put("a", 2).put("b", 3), false)));
            out.println("demo: slow 600 ms with progress -> " + text(callTool(requests, responses, "slow",
                    JSON.createObjectNode().put("ms", 600), true)));
            out.println("demo: large 100000 bytes -> " + text(callTool(requests, responses, "large",
                    JSON.createObjectNode().put("bytes", 100_000), false)).length() + " characters");
            call(requests, responses, "ping", JSON.createObjectNode());
            out.println("demo: ping -> ok");
        } finally {
            // Closing our side ends the proxy's stdin: it closes the server's, which then exits.
            code = proxy.exitCode().get(20, TimeUnit.SECONDS);
        }
        out.println("demo: the server exited with code " + code + "; next: mcp-chaos stdio --help");
        return code;
    }

    private JsonNode callTool(OutputStream requests, BufferedReader responses, String tool, JsonNode arguments,
                              boolean withProgress) throws IOException {
        ObjectNode params = JSON.createObjectNode();
        params.put("name", tool);
        params.set("arguments", arguments);
        if (withProgress) {
            params.putObject("_meta").put("progressToken", "demo-" + nextId);
        }
        return call(requests, responses, "tools/call", params);
    }

    private JsonNode call(OutputStream requests, BufferedReader responses, String method, JsonNode params)
            throws IOException {
        int id = nextId++;
        send(requests, message(id, method, params));
        while (true) {
            String line = responses.readLine();
            if (line == null) {
                throw new IOException("the proxy closed its output before answering " + method);
            }
            JsonNode message = JSON.readTree(line);
            if (message.path("id").asInt(-1) == id && !message.has("method")) {
                if (message.has("error")) {
                    throw new IOException(method + " failed: " + message.get("error"));
                }
                return message.path("result");
            }
            if ("notifications/progress".equals(message.path("method").asText())) {
                JsonNode p = message.path("params");
                out.println("demo:   progress " + p.path("progress").asText() + "/" + p.path("total").asText());
            }
        }
    }

    private static ObjectNode message(Integer id, String method, JsonNode params) {
        ObjectNode message = JSON.createObjectNode();
        message.put("jsonrpc", "2.0");
        if (id != null) {
            message.put("id", id);
        }
        message.put("method", method);
        if (params != null) {
            message.set("params", params);
        }
        return message;
    }

    private static void send(OutputStream requests, JsonNode message) throws IOException {
        requests.write(JSON.writeValueAsBytes(message));
        requests.write('\n');
        requests.flush();
    }

    private static String text(JsonNode result) {
        return result.path("content").path(0).path("text").asText();
    }

    /** The built-in server, started from this same jar with a JVM tuned for start-up. */
    static List<String> demoServerCommand() {
        String java = ProcessHandle.current().info().command().orElse("java");
        return List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto",
                "-cp", System.getProperty("java.class.path"), Main.class.getName(), "demo-server");
    }
}
