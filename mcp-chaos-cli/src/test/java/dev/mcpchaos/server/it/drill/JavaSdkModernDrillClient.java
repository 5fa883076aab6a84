package dev.mcpchaos.server.it.drill;

import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.client.McpClient;
import io.modelcontextprotocol.modern.client.McpSyncClient;
import io.modelcontextprotocol.modern.client.transport.HttpClientMcpTransport;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * A typical application on the MCP Java SDK's {@code modern} client (2.2.0: the 2026-07-28
 * revision, stateless: no initialize, each request carries its protocol version), drilled by
 * {@code DrillRealClientsIT} as {@link JavaSdkDrillClient} drills the classic one: the same steps
 * (list the tools, call {@code slow} with progress, call {@code echo}), the same 2.5 s per request
 * ({@code callTimeout}), no retry of its own; one line per step; exit 0 when it got through them.
 * The modern client speaks only 2026-07-28, so against the drill's 2025-era demo server its first
 * request fails: what its scorecard shows until the drill drives the 2026 era.
 */
public final class JavaSdkModernDrillClient {

    private JavaSdkModernDrillClient() {
    }

    /** {@code args}: the server's MCP URL, last. */
    public static void main(String[] args) {
        if (args.length == 0 || !args[args.length - 1].startsWith("http")) {
            System.err.println("usage: JavaSdkModernDrillClient URL");
            System.exit(2);
        }
        URI url = URI.create(args[args.length - 1]);
        McpSyncClient client = McpClient.sync(HttpClientMcpTransport.builder(url).build())
                .clientInfo(McpSchema.Implementation.builder("mcp-chaos-drill-java-sdk-modern", "1.0.0").build())
                .callTimeout(Duration.ofMillis(2500))
                .build();
        boolean listed = step("list", () -> client.listTools().list());
        step("call-slow", () -> client.tool("slow").arguments(Map.of("ms", 50)).progress(progress -> { }).call());
        step("call-echo", () -> client.tool("echo").arguments(Map.of("text", "hello")).call());
        System.exit(listed ? 0 : 1);
    }

    private static boolean step(String name, Callable<?> call) {
        return JavaSdkDrillClient.step(name, call, result -> result instanceof McpSchema.CallToolResult r
                && Boolean.TRUE.equals(r.isError()));
    }
}
