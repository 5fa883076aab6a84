package dev.mcpchaos.server.record;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What to record and what to take out first: the settings of a proxy's recorder (see
 * {@code docs/record-replay.md}). Give it to a builder's {@code record(Recording)}.
 *
 * <pre>{@code
 * McpChaosProxy.stdio(command)
 *         .record(Recording.to(Path.of("cassettes/everything.ndjson"))
 *                 .redactHeader("X-Api-Key")
 *                 .redactPath("params.arguments.password")
 *                 .redactEnv("GITHUB_TOKEN"))
 *         .start();
 * }</pre>
 */
public final class Recording {

    private static final Pattern VARIABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private final Path target;
    private final boolean directory;
    private boolean afterFaults;
    private final Set<String> headers = new LinkedHashSet<>();
    private final List<RedactPath> paths = new ArrayList<>();
    private final Set<String> variables = new LinkedHashSet<>();
    private Map<String, String> environment = System.getenv();

    private Recording(Path target, boolean directory) {
        this.target = Objects.requireNonNull(target, "target");
        this.directory = directory;
    }

    /**
     * Records into {@code target}: a directory (one cassette per session) when it is one already
     * or its name ends with {@code /}, else a file (every session in one cassette, told apart by
     * their {@code session}), replaced if it exists.
     */
    public static Recording to(Path target) {
        Objects.requireNonNull(target, "target");
        return new Recording(target, Files.isDirectory(target) || target.toString().endsWith("/"));
    }

    /** Records every session into one file, replaced if it exists. */
    public static Recording toFile(Path file) {
        return new Recording(file, false);
    }

    /** Records each session into a file of its own in {@code dir} (made if missing), named after the session. */
    public static Recording toDirectory(Path dir) {
        return new Recording(dir, true);
    }

    /**
     * Records what the peers really got, after the faults, instead of what they sent (the default).
     * A frame a fault emits itself (an injected error, a duplicate) skips the interceptors after
     * the fault's and is not recorded then.
     */
    public Recording afterFaults(boolean afterFaults) {
        this.afterFaults = afterFaults;
        return this;
    }

    /** One more header whose value is a secret (any case); Authorization, Cookie and Set-Cookie always are. */
    public Recording redactHeader(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isBlank() || !name.chars().allMatch(c -> c > ' ' && c < 127 && c != ':')) {
            throw new IllegalArgumentException("redact header: '" + name + "' (expected: a header name such as X-Api-Key)");
        }
        headers.add(name);
        return this;
    }

    /**
     * A place in every message whose value is always redacted: a JSON pointer
     * ({@code /params/arguments/password}) or a dotted glob ({@code result.**.token}); see
     * {@link RedactPath}.
     *
     * @throws IllegalArgumentException naming the path, when it is neither
     */
    public Recording redactPath(String path) {
        paths.add(RedactPath.parse(path));
        return this;
    }

    /**
     * An environment variable whose value is a secret wherever it appears (a server that prints
     * its environment, a token echoed back). Looked up when recording starts, in the variables a
     * stdio proxy gives its server (its builder's {@code environment(...)}, the command line's
     * {@code -e NAME=VALUE}: what the server sees) and in {@link #environment} (this process's
     * environment, which the server inherits); a variable set in both with two values has both
     * redacted. One set in neither has nothing to redact and is logged.
     */
    public Recording redactEnv(String name) {
        Objects.requireNonNull(name, "name");
        if (!VARIABLE.matcher(name).matches()) {
            throw new IllegalArgumentException("redact env: '" + name
                    + "' (expected: an environment variable's name, such as GITHUB_TOKEN)");
        }
        variables.add(name);
        return this;
    }

    /**
     * Where {@link #redactEnv} looks the variables up besides the stdio server's own variables;
     * default: this process's environment. For tests, and for an HTTP server started elsewhere
     * with variables this process does not have.
     */
    public Recording environment(Map<String, String> environment) {
        this.environment = Map.copyOf(Objects.requireNonNull(environment, "environment"));
        return this;
    }

    Path target() {
        return target;
    }

    boolean directory() {
        return directory;
    }

    /** Whether the recorder sits after the rules (what the peers got) rather than before them. */
    public boolean isAfterFaults() {
        return afterFaults;
    }

    Set<String> headers() {
        return headers;
    }

    List<RedactPath> paths() {
        return paths;
    }

    /** The values of the {@link #redactEnv} variables that are set (non-empty), in the order named. */
    List<String> secretValues() {
        return secretValues(Map.of());
    }

    /**
     * The values of the {@link #redactEnv} variables, in the order named: each one's value in
     * {@code serverVariables} (those a stdio server is given on top of what it inherits) and in
     * {@link #environment}, the empty ones left out.
     */
    List<String> secretValues(Map<String, String> serverVariables) {
        Set<String> values = new LinkedHashSet<>();
        for (String name : variables) {
            for (String value : new String[] {serverVariables.get(name), environment.get(name)}) {
                if (value != null && !value.isEmpty()) {
                    values.add(value);
                }
            }
        }
        return List.copyOf(values);
    }

    /** The {@link #redactEnv} variables that are not set: nothing to redact for them. */
    public List<String> unsetVariables() {
        return unsetVariables(Map.of());
    }

    /**
     * The {@link #redactEnv} variables set (non-empty) neither in {@code serverVariables} nor in
     * {@link #environment}: nothing to redact for them.
     */
    List<String> unsetVariables(Map<String, String> serverVariables) {
        return variables.stream().filter(name -> isEmpty(serverVariables.get(name)) && isEmpty(environment.get(name)))
                .toList();
    }

    private static boolean isEmpty(String value) {
        return value == null || value.isEmpty();
    }

    @Override
    public String toString() {
        return "Recording(" + target + (directory ? "/" : "") + (afterFaults ? ", after faults" : "") + ')';
    }
}
