package dev.mcpchaos.server;

import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.core.transport.stdio.ServerStartException;
import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.rules.RuleStats;
import dev.mcpchaos.rules.Rules;
import dev.mcpchaos.server.testing.CatProxy;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link RunningProxy}: one handle for both transports, and {@link ProxyStartException} for every start failure. */
class RunningProxyTest {

    private static final URI UPSTREAM = URI.create("http://127.0.0.1:1/mcp");

    @Test
    void anHttpProxyGivesItsUrlsSeedAndChaos() {
        try (RunningProxy proxy = McpChaosProxy.http(UPSTREAM).seed(42)
                .control(new InetSocketAddress("127.0.0.1", 0)).start()) {
            int port = ((HttpProxyBuilder.RunningHttp) proxy).address().getPort();
            assertThat(proxy.transport()).isEqualTo(TransportKind.HTTP);
            assertThat(proxy.mcpUrl()).isEqualTo(URI.create("http://127.0.0.1:" + port + "/mcp"));
            assertThat(proxy.uri("/other?x=1")).isEqualTo(URI.create("http://127.0.0.1:" + port + "/other?x=1"));
            assertThat(proxy.controlUrl())
                    .isEqualTo(URI.create("http://127.0.0.1:" + proxy.controlAddress().getPort() + "/"));
            assertThat(proxy.seed()).isEqualTo(42);
            proxy.chaos().add(Rules.httpStatus("busy", 503).header("Retry-After", "1"));
            assertThat(proxy.rules().ruleSet().rules()).extracting(r -> r.name()).containsExactly("busy");
            assertThatThrownBy(() -> proxy.uri("mcp")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("path: 'mcp' (expected: a path starting with /, such as /mcp)");
        }
    }

    @Test
    void withoutAControlEndpointControlUrlSaysHowToGetOne() {
        try (RunningProxy proxy = McpChaosProxy.http(UPSTREAM).start()) {
            assertThat(proxy.controlAddress()).isNull();
            assertThatThrownBy(proxy::controlUrl).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("this proxy has no control endpoint").hasMessageContaining(".control(");
        }
    }

    @Test
    void aStdioProxyHasNoUrlAndSaysSo() throws Exception {
        try (CatProxy cat = CatProxy.withControl(null, null)) {
            RunningProxy proxy = cat.proxy;
            assertThat(proxy.transport()).isEqualTo(TransportKind.STDIO);
            assertThat(proxy.seed()).isEqualTo(7);
            assertThat(proxy.controlUrl().getPort()).isEqualTo(cat.control().getPort());
            assertThatThrownBy(proxy::mcpUrl).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("a stdio proxy has no URL");
            assertThatThrownBy(() -> proxy.uri("/mcp")).isInstanceOf(UnsupportedOperationException.class);
            proxy.chaos().add(Rules.drop("lose").onTool("x"));
            assertThat(proxy.chaos().rules()).extracting(RuleStats::name).containsExactly("lose");
        }
    }

    @Test
    void aMissingCommandIsAStartFailureNamingIt() {
        assertThatThrownBy(() -> McpChaosProxy.stdio(List.of("/no/such/mcp-server")).start())
                .isInstanceOfSatisfying(ProxyStartException.class, e -> {
                    assertThat(e.reason()).isEqualTo(ProxyStartException.Reason.SERVER_COMMAND);
                    assertThat(e.getCause()).isInstanceOf(ServerStartException.class);
                })
                .hasMessageContaining("/no/such/mcp-server");
    }

    @Test
    void anAddressInUseIsAStartFailureAndNothingIsLeftListening() throws IOException {
        int control = freePort();
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            InetSocketAddress busy = new InetSocketAddress("127.0.0.1", taken.getLocalPort());
            assertThatThrownBy(() -> McpChaosProxy.http(UPSTREAM).listen(busy)
                    .control(new InetSocketAddress("127.0.0.1", control)).start())
                    .isInstanceOfSatisfying(ProxyStartException.class, e -> {
                        assertThat(e.reason()).isEqualTo(ProxyStartException.Reason.ADDRESS);
                        assertThat(e.getCause()).isInstanceOf(IOException.class);
                    })
                    .hasMessageContaining("cannot listen on").hasMessageContaining(":" + taken.getLocalPort());
            // The control endpoint, bound before the proxy failed, was closed again.
            try (ServerSocket again = new ServerSocket(control, 1, InetAddress.getLoopbackAddress())) {
                assertThat(again.getLocalPort()).isEqualTo(control);
            }
            assertThatThrownBy(() -> McpChaosProxy.http(UPSTREAM).control(busy).start())
                    .isInstanceOfSatisfying(ProxyStartException.class,
                            e -> assertThat(e.reason()).isEqualTo(ProxyStartException.Reason.ADDRESS))
                    .hasMessageContaining("cannot listen for control requests on 127.0.0.1:" + taken.getLocalPort());
        }
    }

    @Test
    void aRuleForTheOtherTransportIsAStartFailureKeepingTheParsersMessage() {
        RuleSet busy = RuleSet.parse("rules: [{name: busy, fault: {type: http_status, status: 503}}]", "r.yaml");
        assertThatThrownBy(() -> McpChaosProxy.stdio(List.of("cat")).rules(busy).start())
                .isInstanceOfSatisfying(ProxyStartException.class, e -> {
                    assertThat(e.reason()).isEqualTo(ProxyStartException.Reason.RULES);
                    assertThat(e.getCause()).isInstanceOf(RuleFileException.class);
                })
                .hasMessage("r.yaml: rule 'busy': http_status: only applies to the http transport (this proxy runs "
                        + "the stdio transport)");
        RuleSet crash = RuleSet.parse("rules: [{name: boom, fault: {type: crash}}]", "r.yaml");
        assertThatThrownBy(() -> McpChaosProxy.http(UPSTREAM).rules(crash).start())
                .isInstanceOfSatisfying(ProxyStartException.class,
                        e -> assertThat(e.reason()).isEqualTo(ProxyStartException.Reason.RULES))
                .hasMessageContaining("crash: only applies to the stdio transport");
    }

    @Test
    void aControlEndpointBeyondLoopbackWithoutATokenIsAStartFailure() {
        assertThatThrownBy(() -> McpChaosProxy.http(UPSTREAM).control(new InetSocketAddress("0.0.0.0", 0)).start())
                .isInstanceOfSatisfying(ProxyStartException.class,
                        e -> assertThat(e.reason()).isEqualTo(ProxyStartException.Reason.CONFIGURATION))
                .hasMessageContaining("token");
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
