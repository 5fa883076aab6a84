package dev.mcpchaos.server.diff;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;

import java.util.ArrayList;
import java.util.List;

/**
 * A small MCP server (the official Java SDK over stdio) for the contract diff's tests. Its one
 * argument names a variant that differs from {@code base} in exactly one way:
 * {@code tool-removed}, {@code required-added}, {@code optional-added}, {@code description},
 * {@code enum-narrowed}, {@code minimum-raised}, {@code error-class}.
 */
public final class DiffPeerServer {

    private DiffPeerServer() {
    }

    public static void main(String[] args) throws InterruptedException {
        String variant = args.length > 0 ? args[0] : "base";
        McpJsonMapper mapper = McpJsonDefaults.getMapper();
        String searchDescription = variant.equals("description")
                ? "Searches the index; prefer this over browsing" : "Searches the index";
        String extra = switch (variant) {
            case "required-added" -> ",\"region\":{\"type\":\"string\"}";
            case "optional-added" -> ",\"highlight\":{\"type\":\"boolean\"}";
            default -> "";
        };
        String required = variant.equals("required-added") ? "[\"query\",\"region\"]" : "[\"query\"]";
        String sortEnum = variant.equals("enum-narrowed") ? "[\"relevance\",\"date\"]" : "[\"relevance\",\"date\",\"title\"]";
        int minimum = variant.equals("minimum-raised") ? 5 : 1;
        String searchSchema = "{\"type\":\"object\",\"properties\":{"
                + "\"query\":{\"type\":\"string\",\"minLength\":1},"
                + "\"limit\":{\"type\":\"integer\",\"minimum\":" + minimum + ",\"maximum\":100},"
                + "\"sort\":{\"type\":\"string\",\"enum\":" + sortEnum + "}" + extra
                + "},\"required\":" + required + "}";
        List<McpServerFeatures.SyncToolSpecification> tools = new ArrayList<>();
        tools.add(McpServerFeatures.SyncToolSpecification.builder()
                .tool(McpSchema.Tool.builder().name("search").description(searchDescription)
                        .inputSchema(mapper, searchSchema).build())
                .callHandler((exchange, request) -> McpSchema.CallToolResult.builder()
                        .addTextContent("found " + request.arguments().get("query")).build())
                .build());
        if (!variant.equals("tool-removed")) {
            tools.add(McpServerFeatures.SyncToolSpecification.builder()
                    .tool(McpSchema.Tool.builder().name("delete_item").description("Deletes one item")
                            .inputSchema(mapper, "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"}},"
                                    + "\"required\":[\"id\"]}").build())
                    .callHandler((exchange, request) -> McpSchema.CallToolResult.builder()
                            .addTextContent("deleted").build())
                    .build());
        }
        boolean protocolError = variant.equals("error-class");
        tools.add(McpServerFeatures.SyncToolSpecification.builder()
                .tool(McpSchema.Tool.builder().name("fetch_page").description("Fetches a page by URL")
                        .inputSchema(mapper, "{\"type\":\"object\",\"properties\":{\"url\":{\"type\":\"string\"}},"
                                + "\"required\":[\"url\"]}").build())
                .callHandler((exchange, request) -> {
                    // Both variants fail the same call; they differ only in how they say it.
                    if (protocolError) {
                        throw McpError.builder(-32602).message("unreachable: " + request.arguments().get("url")).build();
                    }
                    return McpSchema.CallToolResult.builder().isError(true)
                            .addTextContent("unreachable: " + request.arguments().get("url")).build();
                })
                .build());
        McpSyncServer server = McpServer.sync(new StdioServerTransportProvider(mapper))
                .serverInfo("diff-peer-" + variant, "1.0.0")
                .capabilities(McpSchema.ServerCapabilities.builder().tools(true).build())
                .tools(tools)
                .build();
        // The transport reads stdin on its own threads; stay up until the parent closes us.
        Thread.currentThread().join();
        server.close();
    }
}
