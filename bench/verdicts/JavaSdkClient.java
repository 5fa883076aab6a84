import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeoutException;

/**
 * The fixed workload of {@code bench/verdicts.sh} on the official MCP Java SDK's client
 * ({@code io.modelcontextprotocol.sdk:mcp}, the version proxy-server's tests use):
 *
 * <pre>
 * java -cp CLASSPATH JavaSdkClient stdio -- COMMAND ARG...   (the SDK starts COMMAND, talks on its pipes)
 * java -cp CLASSPATH JavaSdkClient http URL                   (Streamable HTTP, such as http://127.0.0.1:8080/mcp)
 * </pre>
 *
 * <p>initialize, tools/list, {@code CALLS} (default 40) sequential {@code tools/call} of
 * {@code echo}, each bounded by {@code CALL_TIMEOUT_MS} (default 5000), then {@code closeGracefully()}.
 * A failed call is recorded and the next one goes on.
 *
 * <p>The async client, blocked on each step: the SDK's one {@code requestTimeout} also bounds an
 * explicit {@code initialize}, which over stdio waits for the proxy's JVM and the server to start,
 * so it is set to {@code INIT_TIMEOUT_MS} and each call gets {@code Mono.timeout(CALL_TIMEOUT_MS)},
 * the same operator the SDK applies for its own timeout (the request is cancelled on the client,
 * no {@code notifications/cancelled} is sent either way).
 *
 * <p>stdout: one JSON line per step, then {@code {"summary": {...}}} as the last line; the SDK's
 * and the child's logs go to stderr. Not part of the build: the script compiles it against
 * proxy-server's test classpath.
 */
public final class JavaSdkClient {

    public static void main(String[] args) throws Exception {
        int calls = Integer.parseInt(env("CALLS", "40"));
        Duration callTimeout = Duration.ofMillis(Long.parseLong(env("CALL_TIMEOUT_MS", "5000")));
        // The first answer waits for the proxy's JVM and the server to start: more room than a call.
        Duration initTimeout = Duration.ofMillis(Long.parseLong(env("INIT_TIMEOUT_MS", "30000")));

        McpClientTransport transport;
        if (args.length > 2 && args[0].equals("stdio") && args[1].equals("--")) {
            // The SDK's child inherits this JVM's environment (MCP_CHAOS_CDS and the rest).
            StdioClientTransport stdio = new StdioClientTransport(ServerParameters.builder(args[2])
                    .args(Arrays.asList(args).subList(3, args.length)).build(), McpJsonDefaults.getMapper());
            stdio.setStdErrorHandler(System.err::println);
            transport = stdio;
        } else if (args.length == 2 && args[0].equals("http")) {
            URI url = URI.create(args[1]);
            transport = HttpClientStreamableHttpTransport.builder(url.getScheme() + "://" + url.getAuthority())
                    .endpoint(url.getPath())
                    .connectTimeout(Duration.ofSeconds(5))
                    .build();
        } else {
            System.err.println("usage: JavaSdkClient stdio -- COMMAND ARG... | JavaSdkClient http URL");
            System.exit(2);
            return;
        }

        Map<String, Object> summary = new TreeMap<>();
        Map<String, Integer> failures = new TreeMap<>();
        summary.put("client", "java-sdk");
        int ok = 0;
        int isError = 0;
        int wrong = 0;
        int failed = 0;
        McpAsyncClient client = McpClient.async(transport)
                .clientInfo(McpSchema.Implementation.builder("mcp-chaos-verdicts", "0").build())
                .requestTimeout(initTimeout)
                .initializationTimeout(initTimeout)
                .build();
        long started = System.nanoTime();
        try {
            McpSchema.InitializeResult init = client.initialize().block();
            summary.put("initialize", "ok");
            print("{\"step\":\"initialize\",\"ms\":" + ms(started) + ",\"protocolVersion\":" + quote(init.protocolVersion()) + "}");
        } catch (RuntimeException e) {
            summary.put("initialize", kind(e));
            print("{\"step\":\"initialize\",\"ms\":" + ms(started) + ",\"error\":" + quote(kind(e))
                    + ",\"message\":" + quote(String.valueOf(e.getMessage())) + "}");
            finish(client, summary, failures, 0, 0, 0, 0);
            return; // the script sees initialize != ok and calls the run broken
        }

        started = System.nanoTime();
        try {
            List<McpSchema.Tool> tools = client.listTools().timeout(callTimeout).block().tools();
            summary.put("tools", tools.size());
            print("{\"step\":\"tools/list\",\"ms\":" + ms(started) + ",\"tools\":" + tools.size() + "}");
        } catch (RuntimeException e) {
            summary.put("tools", kind(e));
            print("{\"step\":\"tools/list\",\"ms\":" + ms(started) + ",\"error\":" + quote(kind(e)) + "}");
        }

        for (int i = 1; i <= calls; i++) {
            String message = "verdicts-" + i;
            started = System.nanoTime();
            try {
                McpSchema.CallToolResult result = client.callTool(McpSchema.CallToolRequest.builder("echo")
                        .arguments(Map.of("message", message)).build()).timeout(callTimeout).block();
                String text = result.content() != null && !result.content().isEmpty()
                        && result.content().get(0) instanceof McpSchema.TextContent t ? t.text() : null;
                // A tool error (isError) is an answer, not a failure of the call; an answer with
                // another call's text would mean answers were crossed.
                if (Boolean.TRUE.equals(result.isError())) {
                    isError++;
                } else if (("Echo: " + message).equals(text)) {
                    ok++;
                } else {
                    wrong++;
                }
                print("{\"step\":\"echo " + i + "\",\"ms\":" + ms(started) + ",\"isError\":"
                        + Boolean.TRUE.equals(result.isError()) + ",\"text\":" + quote(text) + "}");
            } catch (RuntimeException e) {
                failed++;
                failures.merge(kind(e), 1, Integer::sum);
                print("{\"step\":\"echo " + i + "\",\"ms\":" + ms(started) + ",\"error\":" + quote(kind(e))
                        + ",\"message\":" + quote(String.valueOf(e.getMessage())) + "}");
            }
        }
        finish(client, summary, failures, ok, isError, wrong, failed);
    }

    /** Closes the client (stdio: SIGTERM to the proxy, then waits for it to exit) and prints the summary. */
    private static void finish(McpAsyncClient client, Map<String, Object> summary, Map<String, Integer> failures,
                               int ok, int isError, int wrong, int failed) {
        long started = System.nanoTime();
        String close;
        try {
            client.closeGracefully().block(Duration.ofSeconds(20));
            close = "ok";
        } catch (RuntimeException e) {
            close = kind(e);
        }
        print("{\"step\":\"close\",\"ms\":" + ms(started) + "}");
        StringBuilder f = new StringBuilder("{");
        failures.forEach((k, v) -> f.append(f.length() > 1 ? "," : "").append(quote(k)).append(':').append(v));
        f.append('}');
        print("{\"summary\":{\"client\":\"java-sdk\",\"initialize\":" + quote((String) summary.get("initialize"))
                + ",\"tools\":" + (summary.get("tools") instanceof Integer n ? n.toString() : quote(String.valueOf(summary.get("tools"))))
                + ",\"ok\":" + ok + ",\"isError\":" + isError + ",\"wrong\":" + wrong + ",\"failed\":" + failed
                + ",\"failures\":" + f + ",\"close\":" + quote(close) + "}}");
        // The SDK's schedulers are not all daemon threads: leave without waiting for them.
        System.exit(0);
    }

    /** A JSON-RPC error by its code, a timeout as such, anything else by its root cause's class. */
    private static String kind(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof McpError m && m.getJsonRpcError() != null && m.getJsonRpcError().code() != null) {
                return "error " + m.getJsonRpcError().code();
            }
            if (t instanceof TimeoutException) {
                return "timeout";
            }
        }
        Throwable root = McpError.findRootCause(e);
        return root.getClass().getSimpleName();
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    private static long ms(long startedNanos) {
        return (System.nanoTime() - startedNanos) / 1_000_000;
    }

    private static void print(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static String quote(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }
}
