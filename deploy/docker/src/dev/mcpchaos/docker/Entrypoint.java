package dev.mcpchaos.docker;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The image's entry point: runs the CLI in this JVM (java stays PID 1 and gets SIGTERM itself,
 * on which {@code mcp-chaos http} drains and exits 0), with {@code http} when no arguments are
 * given. Options come from the arguments, else from their {@code MCP_CHAOS_*} variables, which the
 * CLI reads itself (docs/cli.md); the image sets the defaults in its {@code ENV}. {@code health}
 * is the image's HEALTHCHECK: a GET of {@code /health} on the operations listener
 * ({@code --metrics-listen}, {@code 0.0.0.0:9464} in the image), or on the control API when that
 * listener is off, with nothing but java.base.
 *
 * <p>Compiled by {@code deploy/docker/build-image.sh} against the proxy's jar; not part of the
 * Maven build.
 */
public final class Entrypoint {

    /** Where the address the health check asks is written at start (the container's /tmp). */
    static final Path CONTROL_FILE = Path.of(System.getProperty("java.io.tmpdir"), "mcp-chaos-control");

    static final String DEFAULT_CONTROL = "127.0.0.1:9090";

    private Entrypoint() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("health")) {
            System.exit(health(args.length > 1 ? args[1] : null));
        }
        String[] command = args.length == 0 ? new String[] {"http"} : args;
        if (command[0].equals("http")) {
            try {
                Files.writeString(CONTROL_FILE, healthAddress(command, System.getenv()), StandardCharsets.UTF_8);
            } catch (IOException e) {
                System.err.println("mcp-chaos: cannot write " + CONTROL_FILE + " for the health check: " + e);
            }
        }
        dev.mcpchaos.server.cli.Main.main(command);
    }

    /**
     * Where {@code /health} is to be asked: the operations listener's address when it is on (the
     * argument, else {@code MCP_CHAOS_METRICS_LISTEN}), else the control API's ({@code --control},
     * else {@code MCP_CHAOS_CONTROL}, else {@value #DEFAULT_CONTROL}); {@code off} when both are off.
     */
    static String healthAddress(String[] args, Map<String, String> env) {
        String operations = orEnv(valueOf(args, "--metrics-listen"), env.get("MCP_CHAOS_METRICS_LISTEN"));
        if (operations != null && !operations.equalsIgnoreCase("off")) {
            return operations;
        }
        String control = orEnv(valueOf(args, "--control"), env.get("MCP_CHAOS_CONTROL"));
        return control == null ? DEFAULT_CONTROL : control;
    }

    private static String orEnv(String given, String variable) {
        return given != null ? given : variable == null || variable.isEmpty() ? null : variable;
    }

    /** The value of {@code option} in {@code args} ({@code --opt V} or {@code --opt=V}), or null. */
    static String valueOf(String[] args, String option) {
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--")) {
                break;
            }
            if (args[i].equals(option) && i + 1 < args.length) {
                return args[i + 1];
            }
            if (args[i].startsWith(option + "=")) {
                return args[i].substring(option.length() + 1);
            }
        }
        return null;
    }

    /**
     * 0 when {@code GET /health} answers 200, else 1 with the reason on stderr (docker inspect
     * shows it). The address: the argument, else the one the entry point wrote at start, else
     * {@code MCP_CHAOS_CONTROL}, else {@value #DEFAULT_CONTROL}.
     */
    static int health(String address) {
        try {
            if (address == null) {
                address = Files.exists(CONTROL_FILE)
                        ? Files.readString(CONTROL_FILE, StandardCharsets.UTF_8).trim()
                        : System.getenv().getOrDefault("MCP_CHAOS_CONTROL", DEFAULT_CONTROL);
            }
            if (address.equalsIgnoreCase("off")) {
                System.err.println("unhealthy: the operations listener and the control API are off (--metrics-listen"
                        + " off, --control off), so there is no /health to ask; run the container with --no-healthcheck");
                return 1;
            }
            int colon = address.lastIndexOf(':');
            String host = address.substring(0, colon);
            // The health check runs inside the container: an address on all interfaces is reached on loopback.
            if (host.isEmpty() || host.equals("0.0.0.0") || host.equals("[::]")) {
                host = "127.0.0.1";
            }
            URI uri = URI.create("http://" + host + ":" + address.substring(colon + 1) + "/health");
            HttpURLConnection connection = (HttpURLConnection) uri.toURL().openConnection();
            connection.setConnectTimeout(2000);
            connection.setReadTimeout(2000);
            int status = connection.getResponseCode();
            if (status == 200) {
                return 0;
            }
            System.err.println("unhealthy: GET " + uri + " answered " + status);
            return 1;
        } catch (IOException | RuntimeException e) {
            System.err.println("unhealthy: GET /health of " + address + " failed: " + e);
            return 1;
        }
    }
}
