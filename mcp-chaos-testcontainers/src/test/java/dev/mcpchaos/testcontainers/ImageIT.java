package dev.mcpchaos.testcontainers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.TopContainerResponse;
import com.github.dockerjava.api.command.WaitContainerResultCallback;
import io.modelcontextprotocol.client.McpSyncClient;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.startupcheck.OneShotStartupCheckStrategy;
import org.testcontainers.containers.wait.strategy.Wait;

/** The image of deploy/docker itself: its user, its health check, SIGTERM, the usage. */
@ExtendWith(DockerEngine.class)
class ImageIT {

    @RegisterExtension
    static final EverythingOnHost upstream = new EverythingOnHost();

    @Test
    void runsAsANonRootUserAndItsHealthCheckTurnsHealthy() throws Exception {
        try (McpChaosContainer chaos = upstream.container()) {
            chaos.start();
            assertThat(chaos.getContainerInfo().getConfig().getUser()).isEqualTo("10001:10001");
            DockerClient docker = DockerClientFactory.lazyClient();
            TopContainerResponse top = docker.topContainerCmd(chaos.getContainerId()).withPsArgs("-o pid,uid,args").exec();
            List<String> titles = Arrays.asList(top.getTitles());
            int uid = titles.indexOf("UID");
            assertThat(top.getProcesses()).isNotEmpty();
            assertThat(Arrays.stream(top.getProcesses()).map(p -> p[uid])).as("the container's processes' uids")
                    .containsOnly("10001");

            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(chaos::isHealthy);

            // The health check's command as Docker runs it, and its twin against a port where
            // nothing listens, which must fail: the check can tell.
            ExecResult healthy = chaos.execInContainer("java", "-cp", "/opt/mcp-chaos/entrypoint.jar",
                    "dev.mcpchaos.docker.Entrypoint", "health");
            assertThat(healthy.getExitCode()).as(healthy.getStderr()).isZero();
            ExecResult nothingThere = chaos.execInContainer("java", "-cp", "/opt/mcp-chaos/entrypoint.jar",
                    "dev.mcpchaos.docker.Entrypoint", "health", "127.0.0.1:1");
            assertThat(nothingThere.getExitCode()).isEqualTo(1);
            assertThat(nothingThere.getStderr()).contains("unhealthy", "127.0.0.1:1");
        }
    }

    /**
     * A collector picked in JAVA_TOOL_OPTIONS, which every java in the container reads: the proxy
     * and its health check still start (the check named Serial, and two collectors stop a JVM).
     */
    @Test
    void itsHealthCheckTurnsHealthyWhenJavaToolOptionsPickACollector() throws Exception {
        try (McpChaosContainer chaos = upstream.container().withEnv("JAVA_TOOL_OPTIONS", "-XX:+UseG1GC")) {
            chaos.start();
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(chaos::isHealthy);
            ExecResult healthy = chaos.execInContainer("java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-Xmx16m",
                    "-cp", "/opt/mcp-chaos/entrypoint.jar", "dev.mcpchaos.docker.Entrypoint", "health");
            assertThat(healthy.getExitCode()).as(healthy.getStderr()).isZero();
            assertThat(healthy.getStderr()).contains("Picked up JAVA_TOOL_OPTIONS: -XX:+UseG1GC");
        }
    }

    /**
     * With the operations listener on (the image's default; here on a free host port, with host
     * networking), the health check asks its /health, and /ready and /metrics answer without a token.
     */
    @Test
    void theHealthCheckAsksTheOperationsListenerWhenItIsOn() throws Exception {
        int operations = HostPeers.freePort();
        try (McpChaosContainer chaos = upstream.container().withEnv("MCP_CHAOS_METRICS_LISTEN", "127.0.0.1:" + operations)) {
            chaos.start();
            String asked = chaos.copyFileFromContainer("/tmp/mcp-chaos-control",
                    in -> new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
            assertThat(asked).isEqualTo("127.0.0.1:" + operations);
            ExecResult healthy = chaos.execInContainer("java", "-cp", "/opt/mcp-chaos/entrypoint.jar",
                    "dev.mcpchaos.docker.Entrypoint", "health");
            assertThat(healthy.getExitCode()).as(healthy.getStderr()).isZero();
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(chaos::isHealthy);
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            java.net.http.HttpResponse<String> ready = http.send(java.net.http.HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + operations + "/ready")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(ready.statusCode()).isEqualTo(200);
            java.net.http.HttpResponse<String> metrics = http.send(java.net.http.HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + operations + "/metrics")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(metrics.body()).contains("mcp_chaos_draining 0.0");
        }
    }

    @Test
    void sigtermStopsTheProxyWithExitCodeZero() {
        try (McpChaosContainer chaos = upstream.container()) {
            chaos.start();
            DockerClient docker = DockerClientFactory.lazyClient();
            docker.killContainerCmd(chaos.getContainerId()).withSignal("TERM").exec();
            Integer code = docker.waitContainerCmd(chaos.getContainerId()).exec(new WaitContainerResultCallback())
                    .awaitStatusCode(20, TimeUnit.SECONDS);
            assertThat(code).as("exit code after SIGTERM; log:\n%s", chaos.getLogs()).isZero();
        }
    }

    /**
     * The entry point fills in only what the arguments lack: here every variable points where
     * nothing listens, and the arguments where the server and free ports are. (The variables
     * alone are what every McpChaosContainer test runs on.)
     */
    @Test
    void argumentsWinOverTheVariables() {
        int listen = HostPeers.freePort();
        int control = HostPeers.freePort();
        try (GenericContainer<?> proxy = new GenericContainer<>(DockerEngine.image())
                .withNetworkMode("host")
                .withEnv("MCP_CHAOS_UPSTREAM", "http://127.0.0.1:1/mcp")
                .withEnv("MCP_CHAOS_LISTEN", "127.0.0.1:1")
                .withEnv("MCP_CHAOS_CONTROL", "127.0.0.1:1")
                .withEnv("MCP_CHAOS_METRICS_LISTEN", "off") // not the host's 9464, with host networking
                .withCommand("http", "--upstream", upstream.server().endpoint().toString(),
                        "--listen", "127.0.0.1:" + listen, "--control", "127.0.0.1:" + control)
                .waitingFor(Wait.forLogMessage(".*HttpCommand: clients: .*\\n", 1)
                        .withStartupTimeout(Duration.ofSeconds(60)))) {
            proxy.start();
            McpSyncClient client = HostPeers.sdkClient(URI.create("http://127.0.0.1:" + listen + "/mcp")).build();
            try {
                assertThat(client.initialize().serverInfo().name()).isEqualTo("mcp-servers/everything");
            } finally {
                client.closeGracefully();
            }
            assertThat(proxy.getLogs()).contains("control API on http://127.0.0.1:" + control + "/");
        }
    }

    @Test
    void httpHelpPrintsTheUsage() {
        try (GenericContainer<?> help = new GenericContainer<>(DockerEngine.image())
                .withCommand("http", "--help")
                .withStartupCheckStrategy(new OneShotStartupCheckStrategy().withTimeout(Duration.ofSeconds(30)))) {
            help.start(); // fails unless the command exits 0
            assertThat(help.getLogs()).contains("Usage: mcp-chaos http", "--upstream=URL", "--listen=HOST:PORT");
        }
    }
}
