package dev.mcpchaos.server.it;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * The files of {@code deploy/} and the outside tools the tests of them run ({@code kubectl},
 * {@code prometheus}, {@code promtool}). A missing tool skips the test with the reason, except on
 * CI ({@code CI=true}), where it fails it: a CI machine without the tool cannot pass by skipping.
 */
public final class DeployTools {

    private DeployTools() {
    }

    /** The repository's root: the parent of {@code test-peers}, which failsafe names. */
    public static Path repoRoot() {
        String peers = System.getProperty("mcpchaos.testPeers");
        if (peers == null || peers.isBlank()) {
            throw new IllegalStateException("system property mcpchaos.testPeers is unset (expected: run through "
                    + "failsafe, `mvn -B verify`, which sets it to <repo>/test-peers)");
        }
        return Path.of(peers).toAbsolutePath().normalize().getParent();
    }

    /** {@code <repo>/deploy/<relative>}. */
    public static Path deploy(String relative) {
        return repoRoot().resolve("deploy").resolve(relative);
    }

    /**
     * The executable {@code name} on PATH (or in /usr/bin, /usr/local/bin), or the test is skipped
     * (failed with CI=true) with {@code hint}.
     */
    public static Path requireTool(String name, String hint) {
        List<Path> dirs = new ArrayList<>();
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty()) {
                dirs.add(Path.of(dir));
            }
        }
        dirs.add(Path.of("/usr/bin"));
        dirs.add(Path.of("/usr/local/bin"));
        return requireTool(name, hint, dirs, "true".equalsIgnoreCase(System.getenv("CI")));
    }

    /** {@link #requireTool(String, String)} looking in {@code dirs}, on CI or not: the rule, testable. */
    static Path requireTool(String name, String hint, List<Path> dirs, boolean onCi) {
        for (Path dir : dirs) {
            Path candidate = dir.resolve(name);
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        String reason = name + " not found on PATH (" + hint + ")";
        if (onCi) {
            throw new IllegalStateException("CI=true and " + reason);
        }
        Assumptions.abort("Skipped, " + reason + "; with CI=true this fails instead");
        return null; // not reached
    }

    /** The result of a finished command. */
    public record Result(int exitCode, String stdout, String stderr) {
        @Override
        public String toString() {
            return "exit " + exitCode + "\nstdout:\n" + stdout + "\nstderr:\n" + stderr;
        }
    }

    /** Runs {@code command} in {@code dir} to its end (at most 60 s) and returns what it printed. */
    public static Result run(Path dir, List<String> command) throws IOException, InterruptedException {
        Path out = Files.createTempFile("deploy-tool", ".out");
        Path err = Files.createTempFile("deploy-tool", ".err");
        try {
            Process process = new ProcessBuilder(command).directory(dir.toFile())
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new IllegalStateException(command + " did not end within 60 s");
            }
            return new Result(process.exitValue(), Files.readString(out, UTF_8), Files.readString(err, UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    /** {@code kubectl kustomize deploy/kubernetes/<dir>}: the rendered YAML, or a failure with kubectl's words. */
    public static String kustomize(String dir) throws IOException, InterruptedException {
        Path kubectl = requireTool("kubectl", "kubectl 1.21 or later, whose kustomize reads deploy/kubernetes; "
                + "see .ci/run");
        Result result = run(deploy("kubernetes"), List.of(kubectl.toString(), "kustomize", dir));
        if (result.exitCode() != 0) {
            throw new AssertionError("kubectl kustomize " + dir + " failed: " + result);
        }
        return result.stdout();
    }
}
