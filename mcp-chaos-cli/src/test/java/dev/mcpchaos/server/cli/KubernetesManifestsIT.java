package dev.mcpchaos.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.mcpchaos.core.config.Units;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.it.DeployTools;
import dev.mcpchaos.server.logging.StderrLogging;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/**
 * Every kustomization of {@code deploy/kubernetes}, as {@code kubectl kustomize} renders it, against
 * the real command line: the sidecar's arguments and {@code MCP_CHAOS_*} variables parse with the
 * picocli model of {@code mcp-chaos http} (so the manifests cannot drift from the flags), the
 * probes ask paths the operations listener serves on its port, the Service reaches the proxy's
 * port and nothing else, the control API stays on loopback, the rules the ConfigMap holds are
 * valid, and the pod passes the restricted Pod Security Standard's checks.
 */
class KubernetesManifestsIT {

    /** What the operations listener ({@code --metrics-listen}) serves, without a token. */
    private static final Set<String> OPERATIONS_PATHS = Set.of("/health", "/ready", "/metrics");
    /** Variables the process reads that are not an option's {@code MCP_CHAOS_<OPTION>}. */
    private static final Set<String> OTHER_VARIABLES = Set.of(StderrLogging.LEVEL_VARIABLE, ChaosOptions.TOKEN_VARIABLE);

    private static final YAMLMapper YAML = new YAMLMapper();

    @TempDir
    Path tempDir;

    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/chaos-off", "overlays/pre-1.29", "overlays/prometheus-operator"})
    void theRenderedSidecarParsesWithTheRealCommandLineAndIsWiredToWhatItServes(String kustomization) throws Exception {
        List<JsonNode> objects = render(kustomization);
        JsonNode deployment = only(objects, "Deployment");
        JsonNode podSpec = deployment.at("/spec/template/spec");
        boolean native_ = !kustomization.equals("overlays/pre-1.29");
        JsonNode sidecar = container(podSpec, native_ ? "initContainers" : "containers", "mcp-chaos");
        JsonNode server = container(podSpec, "containers", "mcp-server");
        if (native_) {
            assertThat(sidecar.path("restartPolicy").asText()).as("a native sidecar").isEqualTo("Always");
            assertThat(sidecar.has("startupProbe")).as("the server waits for the sidecar's startupProbe").isTrue();
        } else {
            assertThat(podSpec.has("initContainers")).as("no init containers before 1.29").isFalse();
            assertThat(sidecar.has("restartPolicy")).as("a plain container has no restartPolicy").isFalse();
        }

        // Arguments and variables, through picocli's model of `mcp-chaos http`.
        List<String> argv = strings(sidecar.path("args"));
        assertThat(argv).first().isEqualTo("http");
        CommandLine.Model.CommandSpec http = Main.commandLine("http").getSubcommands().get("http").getCommandSpec();
        List<String> fromEnv = new ArrayList<>();
        String seedVariable = null;
        for (JsonNode env : sidecar.path("env")) {
            String name = env.path("name").asText();
            if (!name.startsWith("MCP_CHAOS_") || OTHER_VARIABLES.contains(name)) {
                continue;
            }
            String option = "--" + name.substring("MCP_CHAOS_".length()).toLowerCase(Locale.ROOT).replace('_', '-');
            assertThat(http.findOption(option)).as("%s names an option of mcp-chaos http (%s)", name, option).isNotNull();
            assertThat(env.has("value")).as("%s has a value", name).isTrue();
            fromEnv.add(option);
            fromEnv.add(env.path("value").asText());
        }
        List<String> all = new ArrayList<>(argv);
        all.addAll(fromEnv);
        CommandLine.ParseResult parsed = Main.commandLine(all.toArray(String[]::new)).parseArgs(all.toArray(String[]::new));
        CommandLine.ParseResult command = parsed.subcommand();
        assertThat(command.commandSpec().name()).isEqualTo("http");
        assertThat(command.unmatched()).isEmpty();

        InetSocketAddress listen = HttpCommand.parseListen(command.matchedOptionValue("--listen", ""));
        InetSocketAddress metrics = HttpCommand.parseAddress("--metrics-listen",
                command.matchedOptionValue("--metrics-listen", ""));
        String control = command.matchedOptionValue("--control", HttpCommand.DEFAULT_CONTROL);
        if (!control.equals("off")) {
            InetSocketAddress controlAddress = HttpCommand.parseAddress("--control", control);
            assertThat(controlAddress.getAddress().isLoopbackAddress()).as("the control API on loopback: %s", control)
                    .isTrue();
            assertThat(ports(sidecar)).as("the control port is no container port").doesNotContain(controlAddress.getPort());
            assertThat(servicePorts(objects, sidecar)).doesNotContain(controlAddress.getPort());
        }
        assertThat(port(sidecar, "mcp")).isEqualTo(listen.getPort());
        assertThat(port(sidecar, "metrics")).isEqualTo(metrics.getPort());
        assertThat(servicePorts(objects, sidecar)).as("the Service reaches the proxy's port only")
                .containsExactly(listen.getPort());

        Duration drain = Units.parseDuration(command.matchedOptionValue("--drain-timeout", "20s"));
        assertThat(Duration.ofSeconds(podSpec.path("terminationGracePeriodSeconds").asLong(30)))
                .as("the grace period outlasts the drain").isGreaterThan(drain);

        String seedFrom = command.matchedOptionValue("--seed-from-env", null);
        assertThat(seedFrom).as("a seed per pod").isNotNull();
        JsonNode seedEnv = env(sidecar, seedFrom);
        assertThat(seedEnv.at("/valueFrom/fieldRef/fieldPath").asText()).isEqualTo("metadata.name");

        // The upstream is the server container, on the pod's loopback.
        URI upstream = HttpCommand.parseUpstream(command.matchedOptionValue("--upstream", ""));
        assertThat(upstream.getHost()).isEqualTo("127.0.0.1");
        List<String> serverArgs = strings(server.path("args"));
        assertThat(serverArgs).containsSubsequence("--http", "127.0.0.1:" + upstream.getPort());

        // Probes: paths of the operations listener, on its port.
        for (String probe : List.of("startupProbe", "livenessProbe", "readinessProbe")) {
            JsonNode get = sidecar.path(probe).path("httpGet");
            if (probe.equals("startupProbe") && !native_) {
                continue;
            }
            assertThat(OPERATIONS_PATHS).as("%s path", probe).contains(get.path("path").asText());
            assertThat(resolvePort(sidecar, get.path("port"))).as("%s port", probe).isEqualTo(metrics.getPort());
        }
        assertThat(sidecar.at("/livenessProbe/httpGet/path").asText()).isEqualTo("/health");
        assertThat(sidecar.at("/readinessProbe/httpGet/path").asText()).isEqualTo("/ready");
        assertThat(command.matchedOptionValue("--ready-requires-upstream", false))
                .as("the pod is ready only once its server takes connections").isTrue();
        JsonNode annotations = deployment.at("/spec/template/metadata/annotations");
        assertThat(annotations.path("prometheus.io/scrape").asText()).isEqualTo("true");
        assertThat(annotations.path("prometheus.io/port").asInt()).isEqualTo(metrics.getPort());
        assertThat(annotations.path("prometheus.io/path").asText()).isEqualTo("/metrics");

        // The rules: the ConfigMap mounted where --rules points, holding a file the proxy accepts.
        Path rules = Path.of(command.matchedOptionValue("--rules", Path.of("")).toString());
        JsonNode mount = StreamSupport.stream(sidecar.path("volumeMounts").spliterator(), false)
                .filter(m -> rules.startsWith(m.path("mountPath").asText())).findFirst()
                .orElseThrow(() -> new AssertionError("no volume mounted at " + rules.getParent()));
        assertThat(mount.path("readOnly").asBoolean()).isTrue();
        JsonNode volume = volume(podSpec, mount.path("name").asText());
        String configMapName = volume.at("/configMap/name").asText();
        JsonNode configMap = objects.stream().filter(o -> o.path("kind").asText().equals("ConfigMap")
                && o.at("/metadata/name").asText().equals(configMapName)).findFirst()
                .orElseThrow(() -> new AssertionError("no ConfigMap " + configMapName));
        String key = Path.of(mount.path("mountPath").asText()).relativize(rules).toString();
        assertThat(configMap.path("data").has(key)).as("the ConfigMap has %s", key).isTrue();
        Path file = tempDir.resolve(key);
        Files.writeString(file, configMap.path("data").path(key).asText(), StandardCharsets.UTF_8);
        // The real checks of `mcp-chaos validate --transport http` (it prints to stdout: only its code counts here).
        assertThat(Main.run("validate", file.toString(), "--transport", "http")).as("mcp-chaos validate of %s", key)
                .isZero();
        int ruleCount = RuleSet.parse(configMap.path("data").path(key).asText(), key).rules().size();
        if (kustomization.endsWith("chaos-off")) {
            assertThat(ruleCount).as("no rules with chaos off").isZero();
        } else {
            assertThat(ruleCount).as("rules with chaos on").isPositive();
        }

        // Restricted Pod Security Standard, and resources.
        assertThat(podSpec.at("/securityContext/runAsNonRoot").asBoolean()).isTrue();
        assertThat(podSpec.at("/securityContext/seccompProfile/type").asText()).isEqualTo("RuntimeDefault");
        assertThat(podSpec.path("automountServiceAccountToken").asBoolean(true)).isFalse();
        for (JsonNode container : List.of(sidecar, server)) {
            String name = container.path("name").asText();
            JsonNode security = container.path("securityContext");
            assertThat(security.path("allowPrivilegeEscalation").asBoolean(true)).as(name).isFalse();
            assertThat(strings(security.at("/capabilities/drop"))).as(name).contains("ALL");
            assertThat(security.at("/capabilities/add").isMissingNode()).as(name).isTrue();
            assertThat(security.path("readOnlyRootFilesystem").asBoolean()).as(name).isTrue();
            assertThat(security.path("privileged").asBoolean(false)).as(name).isFalse();
            JsonNode tmp = StreamSupport.stream(container.path("volumeMounts").spliterator(), false)
                    .filter(m -> m.path("mountPath").asText().equals("/tmp")).findFirst()
                    .orElseThrow(() -> new AssertionError(name + ": no writable /tmp"));
            assertThat(volume(podSpec, tmp.path("name").asText()).has("emptyDir")).as(name).isTrue();
            assertThat(container.at("/resources/requests/cpu").asText()).as(name).isNotEmpty();
            assertThat(container.at("/resources/requests/memory").asText()).as(name).isNotEmpty();
            assertThat(container.at("/resources/limits/memory").asText()).as(name).isNotEmpty();
            assertThat(container.path("image").asText()).as(name).startsWith("mcp-chaos:");
        }
        for (JsonNode each : podSpec.path("volumes")) {
            assertThat(each.has("hostPath")).as("no hostPath volume").isFalse();
        }
    }

    @Test
    void chaosOffDiffersFromTheBaseOnlyInItsRules() throws Exception {
        List<JsonNode> base = render("base");
        List<JsonNode> off = render("overlays/chaos-off");
        assertThat(only(off, "Deployment")).isEqualTo(only(base, "Deployment"));
        assertThat(only(off, "Service")).isEqualTo(only(base, "Service"));
        assertThat(only(off, "ConfigMap").at("/metadata/name")).isEqualTo(only(base, "ConfigMap").at("/metadata/name"));
        assertThat(only(off, "ConfigMap").at("/data/rules.yaml").asText()).contains("rules: []");
    }

    @Test
    void thePodMonitorScrapesTheSidecarsMetricsPortOfThesePods() throws Exception {
        List<JsonNode> objects = render("overlays/prometheus-operator");
        JsonNode monitor = only(objects, "PodMonitor");
        JsonNode deployment = only(objects, "Deployment");
        JsonNode podLabels = deployment.at("/spec/template/metadata/labels");
        monitor.at("/spec/selector/matchLabels").fields().forEachRemaining(label ->
                assertThat(podLabels.path(label.getKey()).asText()).as(label.getKey()).isEqualTo(label.getValue().asText()));
        JsonNode endpoint = monitor.at("/spec/podMetricsEndpoints/0");
        JsonNode sidecar = container(deployment.at("/spec/template/spec"), "initContainers", "mcp-chaos");
        assertThat(endpoint.path("path").asText()).isEqualTo("/metrics");
        assertThat(port(sidecar, endpoint.path("port").asText())).isEqualTo(9464);
    }

    private static List<JsonNode> render(String kustomization) throws Exception {
        String yaml = DeployTools.kustomize(kustomization);
        List<JsonNode> objects = YAML.readerFor(JsonNode.class).<JsonNode>readValues(yaml).readAll();
        assertThat(objects).as("objects of %s", kustomization).isNotEmpty();
        return objects;
    }

    private static JsonNode only(List<JsonNode> objects, String kind) {
        List<JsonNode> found = objects.stream().filter(o -> o.path("kind").asText().equals(kind)).toList();
        assertThat(found).as("objects of kind %s", kind).hasSize(1);
        return found.get(0);
    }

    private static JsonNode container(JsonNode podSpec, String list, String name) {
        return StreamSupport.stream(podSpec.path(list).spliterator(), false)
                .filter(c -> c.path("name").asText().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no container " + name + " in " + list + ": " + podSpec));
    }

    private static JsonNode volume(JsonNode podSpec, String name) {
        return StreamSupport.stream(podSpec.path("volumes").spliterator(), false)
                .filter(v -> v.path("name").asText().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no volume " + name));
    }

    private static JsonNode env(JsonNode container, String name) {
        return StreamSupport.stream(container.path("env").spliterator(), false)
                .filter(e -> e.path("name").asText().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no variable " + name + " in " + container.path("name")));
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(node -> out.add(node.asText()));
        return out;
    }

    private static List<Integer> ports(JsonNode container) {
        List<Integer> out = new ArrayList<>();
        container.path("ports").forEach(p -> out.add(p.path("containerPort").asInt()));
        return out;
    }

    private static int port(JsonNode container, String name) {
        return StreamSupport.stream(container.path("ports").spliterator(), false)
                .filter(p -> p.path("name").asText().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no port " + name + " on " + container.path("name")))
                .path("containerPort").asInt();
    }

    private static int resolvePort(JsonNode container, JsonNode port) {
        return port.isInt() ? port.asInt() : port(container, port.asText());
    }

    /** The container ports the Services' target ports reach on the sidecar. */
    private static List<Integer> servicePorts(List<JsonNode> objects, JsonNode sidecar) {
        List<Integer> out = new ArrayList<>();
        objects.stream().filter(o -> o.path("kind").asText().equals("Service"))
                .forEach(service -> service.at("/spec/ports").forEach(p -> out.add(resolvePort(sidecar, p.path("targetPort")))));
        return out;
    }
}
