package dev.mcpchaos.docker;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The image's entry point, so that an image without a shell still takes its settings from
 * environment variables: it turns {@code MCP_CHAOS_*} variables into the options of
 * {@code mcp-chaos http} that the arguments do not give, then runs the CLI in this JVM (java stays
 * PID 1 and gets SIGTERM itself). {@code health} is the image's HEALTHCHECK: a GET of the control
 * API's {@code /health}, with nothing but java.base.
 *
 * <p>Compiled by {@code deploy/docker/build-image.sh} against the proxy's jar; not part of the
 * Maven build.
 */
public final class Entrypoint {

    /** Where the control address in force is written for the health check (the container's /tmp). */
    static final Path CONTROL_FILE = Path.of(System.getProperty("java.io.tmpdir"), "mcp-chaos-control");

    static final String DEFAULT_LISTEN = "0.0.0.0:8080";
    static final String DEFAULT_CONTROL = "127.0.0.1:9090";

    private Entrypoint() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("health")) {
            System.exit(health(args.length > 1 ? args[1] : null));
        }
        String[] command = command(args, System.getenv());
        if (command.length > 0 && command[0].equals("http")) {
            String control = valueOf(command, "--control");
            try {
                Files.writeString(CONTROL_FILE, control == null ? DEFAULT_CONTROL : control, StandardCharsets.UTF_8);
            } catch (IOException e) {
                System.err.println("mcp-chaos: cannot write " + CONTROL_FILE + " for the health check: " + e);
            }
        }
        dev.mcpchaos.server.cli.Main.main(command);
    }

    /**
     * The CLI's arguments: {@code args} (no arguments: {@code http}), and for {@code http} the
     * options they lack, from the environment: {@code --listen} from {@code MCP_CHAOS_LISTEN}
     * (default {@value #DEFAULT_LISTEN}), {@code --upstream} from {@code MCP_CHAOS_UPSTREAM},
     * {@code --control} from {@code MCP_CHAOS_CONTROL} (default {@value #DEFAULT_CONTROL}),
     * {@code --rules} from {@code MCP_CHAOS_RULES}, {@code --seed} from {@code MCP_CHAOS_SEED},
     * and always {@code --quiet} (no terminal for a live view). Other commands pass unchanged.
     */
    static String[] command(String[] args, Map<String, String> env) {
        List<String> out = new ArrayList<>(List.of(args.length == 0 ? new String[] {"http"} : args));
        if (!out.get(0).equals("http") || out.contains("-h") || out.contains("--help")
                || out.contains("-V") || out.contains("--version")) {
            return out.toArray(String[]::new);
        }
        addUnlessGiven(out, "--listen", env.getOrDefault("MCP_CHAOS_LISTEN", DEFAULT_LISTEN));
        addUnlessGiven(out, "--upstream", env.get("MCP_CHAOS_UPSTREAM"));
        addUnlessGiven(out, "--control", env.getOrDefault("MCP_CHAOS_CONTROL", DEFAULT_CONTROL));
        addUnlessGiven(out, "--rules", env.get("MCP_CHAOS_RULES"));
        addUnlessGiven(out, "--seed", env.get("MCP_CHAOS_SEED"));
        if (!out.contains("--quiet")) {
            out.add("--quiet");
        }
        return out.toArray(String[]::new);
    }

    private static void addUnlessGiven(List<String> out, String option, String value) {
        if (value == null || value.isEmpty() || valueOf(out.toArray(String[]::new), option) != null) {
            return;
        }
        // Options go before a "--", if there is one.
        int end = out.indexOf("--");
        out.addAll(end < 0 ? out.size() : end, List.of(option, value));
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
     * 0 when the control API answers {@code GET /health} with 200, else 1 with the reason on
     * stderr (docker inspect shows it). The address: the argument, else the one the entry point
     * wrote at start, else {@code MCP_CHAOS_CONTROL}, else {@value #DEFAULT_CONTROL}.
     */
    static int health(String address) {
        try {
            if (address == null) {
                address = Files.exists(CONTROL_FILE)
                        ? Files.readString(CONTROL_FILE, StandardCharsets.UTF_8).trim()
                        : System.getenv().getOrDefault("MCP_CHAOS_CONTROL", DEFAULT_CONTROL);
            }
            if (address.equalsIgnoreCase("off")) {
                System.err.println("unhealthy: the control API is off (--control off), so there is no /health to ask;"
                        + " run the container with --no-healthcheck");
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
