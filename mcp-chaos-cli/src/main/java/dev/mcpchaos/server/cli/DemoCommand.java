package dev.mcpchaos.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.ChildJvm;
import dev.mcpchaos.server.McpChaosProxy;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@code mcp-chaos demo}: the proxy in front of the built-in server with a built-in chaos
 * profile, driven by a scripted client that says, for every call, what was injected and what it
 * experienced. Needs nothing but Java.
 */
@Command(name = "demo",
        mixinStandardHelpOptions = true,
        description = {"Show the proxy at work with nothing but Java: start the built-in MCP server behind "
                + "mcp-chaos stdio with a chaos profile (an error, a delay past the client's timeout, a tool error, "
                + "a garbled answer, a lost request), drive it with a scripted client, and print what was injected "
                + "beside what the client experienced. Every message is logged on stderr."})
final class DemoCommand implements Callable<Integer> {

    private static final String PROFILE = "/dev/mcpchaos/server/demo-rules.yaml";
    /** How long the scripted client waits for an answer, as a real client's request timeout. */
    private static final long TIMEOUT_MILLIS = 2000;
    /** For initialize and tools/list, which wait for the server JVM to start. */
    private static final long START_TIMEOUT_MILLIS = 20_000;

    @Option(names = "--log-traffic", paramLabel = "CHARS", defaultValue = "160",
            description = "Characters of each message to show on stderr. Default: ${DEFAULT-VALUE}.")
    int trafficChars;

    @Option(names = "--seed", paramLabel = "N",
            description = "Seed of the chaos profile. Default: the profile's, else a new one; printed either way.")
    Long seed;

    @Option(names = "--no-chaos", description = "Relay without the chaos profile.")
    boolean noChaos;

    private final PrintStream out = System.out;
    private final BlockingQueue<JsonNode> inbox = new LinkedBlockingQueue<>();
    private final BlockingQueue<FaultEvent> injected = new LinkedBlockingQueue<>();
    private int nextId = 1;

    @Override
    public Integer call() throws Exception {
        Pipe toProxy = Pipe.open();
        Pipe fromProxy = Pipe.open();
        McpChaosProxy.StdioBuilder builder = McpChaosProxy.stdio(demoServerCommand())
                .clientInput(Channels.newInputStream(toProxy.source()))
                .clientOutput(Channels.newOutputStream(fromProxy.sink()))
                .logTraffic(trafficChars);
        RuleSet profile = noChaos ? null : profile();
        if (profile != null) {
            builder.rules(profile).faultListener(injected::add);
            if (seed != null) {
                builder.seed(seed); // only then: the engine logs a seed it was given as "given"
            }
        }
        McpChaosProxy.Running proxy = builder.start();
        long runSeed = proxy.rules().seed(); // the one the engine draws from, wherever it came from
        Thread reader = startReader(Channels.newInputStream(fromProxy.source()));
        int code;
        try (OutputStream requests = Channels.newOutputStream(toProxy.sink())) {
            out.println("demo: scripted client -> mcp-chaos stdio -> built-in demo server; every message is logged "
                    + "on stderr");
            out.println(noChaos ? "demo: no chaos profile" : "demo: chaos profile " + PROFILE.substring(1)
                    + " with seed " + runSeed + " (" + seedOrigin(seed, profile) + ")");
            ObjectNode init = Json.MAPPER.createObjectNode();
            init.put("protocolVersion", "2025-11-25");
            init.putObject("capabilities");
            init.putObject("clientInfo").put("name", "mcp-chaos-demo-client").put("version", Main.version());
            JsonNode initialized = required(call(requests, "initialize", init, START_TIMEOUT_MILLIS), "initialize");
            out.println("demo: initialized: " + initialized.path("serverInfo").path("name").asText()
                    + ", protocol " + initialized.path("protocolVersion").asText());
            send(requests, message(null, "notifications/initialized", null));

            List<String> names = new ArrayList<>();
            required(call(requests, "tools/list", Json.MAPPER.createObjectNode(), START_TIMEOUT_MILLIS), "tools/list")
                    .path("tools")
                    .forEach(t -> names.add(t.path("name").asText()));
            out.println("demo: tools: " + String.join(", ", names));

            ObjectNode hello = Json.MAPPER.createObjectNode().put("text", "hello through mcp-chaos");
            report("echo", callTool(requests, "echo", hello, false));
            report("echo again", callTool(requests, "echo", hello, false));
            ObjectNode sum = Json.MAPPER.createObjectNode().put("a", 2).put("b", 3);
            report("add 2 + 3", callTool(requests, "add", sum, false));
            report("add 2 + 3 again", callTool(requests, "add", sum, false));
            report("slow 600 ms with progress", callTool(requests, "slow", Json.MAPPER.createObjectNode().put("ms", 600), true));
            ObjectNode large = Json.MAPPER.createObjectNode().put("bytes", 100_000);
            report("large 100000 bytes", callTool(requests, "large", large, false));
            report("large again", callTool(requests, "large", large, false));
            report("ping", call(requests, "ping", Json.MAPPER.createObjectNode(), TIMEOUT_MILLIS));
            report("ping again", call(requests, "ping", Json.MAPPER.createObjectNode(), TIMEOUT_MILLIS));
        } finally {
            // Closing our side ends the proxy's stdin: it closes the server's, which then exits.
            code = proxy.exitCode().get(20, TimeUnit.SECONDS);
            reader.join(TimeUnit.SECONDS.toMillis(5));
        }
        out.println("demo: the server exited with code " + code);
        if (!noChaos) {
            out.println("demo: repeat this run: mcp-chaos demo --seed " + runSeed
                    + "   (put the proxy in front of your server: mcp-chaos stdio --help)");
        }
        return code;
    }

    /** Where the seed came from, as the rule engine decides it: the option, the profile, or neither. */
    static String seedOrigin(Long given, RuleSet profile) {
        if (given != null) {
            return "given";
        }
        return profile.seed().isPresent() ? "from the profile" : "generated";
    }

    /** What the client got for one call. */
    private static final class Outcome {
        JsonNode result;
        JsonNode error;
        boolean timedOut;
        long waitedMillis;
        final List<String> notes = new ArrayList<>();
    }

    /** The result of a call the walkthrough cannot go on without. */
    private static JsonNode required(Outcome outcome, String method) throws IOException {
        if (outcome.timedOut || outcome.error != null) {
            throw new IOException("the demo server did not answer " + method
                    + (outcome.error != null ? ": " + outcome.error : " in time"));
        }
        return outcome.result;
    }

    private void report(String what, Outcome outcome) {
        for (FaultEvent event = injected.poll(); event != null; event = injected.poll()) {
            out.println("demo:   injected " + event.fault() + " (rule " + event.rule() + ")"
                    + (event.detail().isEmpty() ? "" : ": " + event.detail()));
        }
        outcome.notes.forEach(note -> out.println("demo:   " + note));
        String experienced;
        if (outcome.timedOut) {
            experienced = "no answer within " + outcome.waitedMillis + " ms (timed out)";
        } else if (outcome.error != null) {
            experienced = "JSON-RPC error " + outcome.error.path("code").asInt() + ": "
                    + outcome.error.path("message").asText();
        } else if (outcome.result.path("isError").asBoolean(false)) {
            experienced = "tool error result: " + text(outcome.result);
        } else if ("large".equals(what.split(" ")[0])) {
            experienced = text(outcome.result).length() + " characters";
        } else if (outcome.result.has("content")) {
            experienced = text(outcome.result);
        } else {
            experienced = "ok";
        }
        out.println("demo: " + what + " -> " + experienced);
    }

    private Outcome callTool(OutputStream requests, String tool, JsonNode arguments, boolean withProgress)
            throws IOException, InterruptedException {
        ObjectNode params = Json.MAPPER.createObjectNode();
        params.put("name", tool);
        params.set("arguments", arguments);
        if (withProgress) {
            params.putObject("_meta").put("progressToken", "demo-" + nextId);
        }
        // slow takes 600 ms of its own: give it that on top of the usual wait.
        return call(requests, "tools/call", params, TIMEOUT_MILLIS + (withProgress ? 2000 : 0));
    }

    private Outcome call(OutputStream requests, String method, JsonNode params, long timeoutMillis)
            throws IOException, InterruptedException {
        int id = nextId++;
        send(requests, message(id, method, params));
        Outcome outcome = new Outcome();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            JsonNode message = inbox.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (message == null) {
                outcome.timedOut = true;
                outcome.waitedMillis = timeoutMillis;
                return outcome;
            }
            if (message.has("unparsable")) {
                outcome.notes.add("the client could not parse a line: " + message.get("unparsable").asText());
                continue;
            }
            if ("notifications/progress".equals(message.path("method").asText())) {
                JsonNode p = message.path("params");
                outcome.notes.add("progress " + p.path("progress").asText() + "/" + p.path("total").asText());
                continue;
            }
            if (message.has("id") && !message.has("method") && message.path("id").asInt(-1) != id) {
                outcome.notes.add("a late answer to request " + message.path("id").asText() + " arrived (ignored)");
                continue;
            }
            if (message.path("id").asInt(-1) == id && !message.has("method")) {
                outcome.result = message.path("result");
                outcome.error = message.has("error") ? message.get("error") : null;
                return outcome;
            }
        }
    }

    /** Reads the proxy's output: every line, parsed; lines it cannot parse are reported as such. */
    private Thread startReader(InputStream in) {
        Thread reader = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                    try {
                        inbox.add(Json.MAPPER.readTree(line));
                    } catch (IOException e) {
                        String start = line.length() > 60 ? line.substring(0, 60) + "…" : line;
                        inbox.add(Json.MAPPER.createObjectNode().put("unparsable", start));
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, "demo-client-reader");
        reader.setDaemon(true);
        reader.start();
        return reader;
    }

    private static ObjectNode message(Integer id, String method, JsonNode params) {
        ObjectNode message = Json.MAPPER.createObjectNode();
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
        requests.write(Json.MAPPER.writeValueAsBytes(message));
        requests.write('\n');
        requests.flush();
    }

    private static String text(JsonNode result) {
        return result.path("content").path(0).path("text").asText();
    }

    private static RuleSet profile() throws IOException {
        try (InputStream in = DemoCommand.class.getResourceAsStream(PROFILE)) {
            if (in == null) {
                throw new IOException("the demo's chaos profile " + PROFILE + " is missing from the jar");
            }
            return RuleSet.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), PROFILE.substring(1));
        }
    }

    /** The built-in server, started from this same jar with a JVM tuned for start-up. */
    static List<String> demoServerCommand() {
        String java = ProcessHandle.current().info().command().orElse("java");
        return ChildJvm.command(java, Main.class.getName(), "demo-server");
    }

    /**
     * Made on first use, not when picocli instantiates the command (it instantiates every
     * subcommand at start): jackson-databind's classes cost every other command's start-up.
     */
    private static final class Json {
        static final ObjectMapper MAPPER = new ObjectMapper();
    }
}
