package dev.mcpchaos.junit;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** The MCP Java SDK's clients, as a user of the extension makes them. */
final class Clients {

    static final Duration TIMEOUT = Duration.ofSeconds(20);

    private Clients() {
    }

    /** An initialized Streamable HTTP client on {@code mcpUrl}. */
    static McpSyncClient http(URI mcpUrl) {
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport
                .builder("http://" + mcpUrl.getHost() + ":" + mcpUrl.getPort())
                .endpoint(mcpUrl.getPath())
                .build();
        return initialized(McpClient.sync(transport));
    }

    /** An initialized stdio client that runs {@code command} (the proxy's {@code stdioClientCommand()}). */
    static McpSyncClient stdio(List<String> command) {
        ServerParameters params = ServerParameters.builder(command.get(0)).args(command.subList(1, command.size()))
                .build();
        return initialized(McpClient.sync(new StdioClientTransport(params, McpJsonDefaults.getMapper())));
    }

    private static McpSyncClient initialized(McpClient.SyncSpec spec) {
        McpSyncClient client = spec.requestTimeout(TIMEOUT).initializationTimeout(TIMEOUT)
                .clientInfo(McpSchema.Implementation.builder("mcp-chaos-junit-test", "1.0").build())
                .build();
        client.initialize();
        return client;
    }

    static McpSchema.CallToolResult echo(McpSyncClient client, String text) {
        return client.callTool(McpSchema.CallToolRequest.builder("echo").arguments(Map.of("text", text)).build());
    }

    /** server-everything's echo, whose argument is {@code message}; it answers {@code Echo: <message>}. */
    static McpSchema.CallToolResult everythingEcho(McpSyncClient client, String message) {
        return client.callTool(McpSchema.CallToolRequest.builder("echo").arguments(Map.of("message", message)).build());
    }

    static String text(McpSchema.CallToolResult result) {
        return ((McpSchema.TextContent) result.content().get(0)).text();
    }
}
