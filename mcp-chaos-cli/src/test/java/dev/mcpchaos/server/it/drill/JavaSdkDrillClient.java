package dev.mcpchaos.server.it.drill;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Predicate;

/**
 * A typical application on the MCP Java SDK's classic client ({@code io.modelcontextprotocol.sdk:mcp},
 * the version the build pins), drilled by {@code DrillRealClientsIT}. Invoked the way the
 * conformance suite's client mode invokes a client: {@code java -cp ... JavaSdkDrillClient URL},
 * with {@code MCP_CONFORMANCE_SCENARIO} set (it does the same in every scenario).
 *
 * <p>It does what an application does with the SDK, with no resilience of its own on top: a sync
 * client over the Streamable HTTP transport, initialize, list the tools, call {@code slow} with a
 * progress token (so the answer comes as an SSE stream), call {@code echo}, close. The request
 * timeout is 2.5 s ({@code requestTimeout}; the SDK's default is 20 s), the handshake's 10 s (no
 * scenario faults it). A step that fails is printed and the application goes on with the next one;
 * nothing is retried here: what is retried, the SDK retried. Prints one line per step; exits 0 when
 * it got through its steps, 1 when initialize failed.
 */
public final class JavaSdkDrillClient {

    private JavaSdkDrillClient() {
    }

    /** {@code args}: the server's MCP URL, last. */
    public static void main(String[] args) {
        if (args.length == 0 || !args[args.length - 1].startsWith("http")) {
            System.err.println("usage: JavaSdkDrillClient URL");
            System.exit(2);
        }
        URI url = URI.create(args[args.length - 1]);
        String base = url.getScheme() + "://" + url.getRawAuthority();
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport.builder(base)
                .endpoint(url.getRawPath()).build();
        McpSyncClient client = McpClient.sync(transport)
                .clientInfo(new McpSchema.Implementation("mcp-chaos-drill-java-sdk", "1.0.0"))
                .requestTimeout(Duration.ofMillis(2500))
                .initializationTimeout(Duration.ofSeconds(10))
                .progressConsumer(progress -> { })
                .build();
        if (!step("connect", client::initialize)) {
            System.exit(1);
        }
        step("list", client::listTools);
        step("call-slow", () -> client.callTool(McpSchema.CallToolRequest.builder().name("slow")
                .arguments(Map.of("ms", 50)).progressToken("drill-progress").build()));
        step("call-echo", () -> client.callTool(McpSchema.CallToolRequest.builder().name("echo")
                .arguments(Map.of("text", "hello")).build()));
        step("close", () -> {
            client.closeGracefully();
            return null;
        });
        System.exit(0);
    }

    private static boolean step(String name, Callable<?> call) {
        return step(name, call, result -> result instanceof McpSchema.CallToolResult r
                && Boolean.TRUE.equals(r.isError()));
    }

    /** Runs one step and prints it as a JSON line; {@code isError} tells a tool's own failure in its result. */
    static boolean step(String name, Callable<?> call, Predicate<Object> isError) {
        long started = System.nanoTime();
        try {
            Object result = call.call();
            System.out.printf("{\"step\":\"%s\",\"ok\":true,\"isError\":%s,\"ms\":%d}%n", name, isError.test(result),
                    (System.nanoTime() - started) / 1_000_000);
            return true;
        } catch (Exception e) {
            System.out.printf("{\"step\":\"%s\",\"error\":\"%s\",\"ms\":%d}%n", name,
                    (e.getClass().getSimpleName() + ": " + e.getMessage()).replace("\\", "\\\\").replace("\"", "'"),
                    (System.nanoTime() - started) / 1_000_000);
            return false;
        }
    }
}
