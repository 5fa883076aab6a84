package dev.mcpchaos.testcontainers;

import dev.mcpchaos.testcontainers.HostPeers.ServerEverything;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * server-everything on the host for the whole test class, and mcp-chaos containers in front of it
 * on host networking (the containers reach it on 127.0.0.1, as the tests reach them). Registered
 * as a static {@code @RegisterExtension} field, after {@link DockerEngine}, so it starts only when
 * the class runs.
 */
final class EverythingOnHost implements BeforeAllCallback, AfterAllCallback {

    private Path dir;
    private ServerEverything server;

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
        dir = Files.createTempDirectory("server-everything-");
        server = ServerEverything.start(dir);
    }

    @Override
    public void afterAll(ExtensionContext context) throws IOException {
        if (server != null) {
            server.close();
        }
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }

    /** The running server-everything. */
    ServerEverything server() {
        return server;
    }

    /** A directory of the class's own, for files a test writes (rules, logs). */
    Path dir() {
        return dir;
    }

    /** An mcp-chaos container of the image under test in front of the server, on free host ports; not started. */
    McpChaosContainer container() {
        return new McpChaosContainer(DockerEngine.image())
                .withUpstream(server.endpoint().toString())
                .withNetworkMode("host")
                .withListenPort(HostPeers.freePort())
                .withControlPort(HostPeers.freePort());
    }
}
