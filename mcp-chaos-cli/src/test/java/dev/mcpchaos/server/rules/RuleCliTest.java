package dev.mcpchaos.server.rules;

import dev.mcpchaos.server.cli.Main;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * {@code mcp-chaos stdio --rules FILE [--seed N]} as a real process: a bad rule file is refused
 * with one line and exit code 2 before the server is started; the seed in use is logged.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RuleCliTest {

    @TempDir
    Path dir;

    /** One finished CLI run. */
    private record Run(int exitCode, List<String> stdout, List<String> stderr) {
    }

    private Run run(String rulesYaml, String... extra) throws IOException, InterruptedException {
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, rulesYaml);
        Path marker = dir.resolve("server-started");
        List<String> command = new ArrayList<>(List.of(javaBinary(), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-cp", classPathWithoutTestLogging(), Main.class.getName(), "stdio",
                "--rules", rules.toString()));
        command.addAll(List.of(extra));
        command.addAll(List.of("--", "sh", "-c", "touch '" + marker + "'; exit 3"));
        Path out = dir.resolve("stdout");
        Path err = dir.resolve("stderr");
        Process process = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        if (!process.waitFor(45, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            fail("mcp-chaos did not finish within 45 s; stderr:%n%s", Files.readString(err));
        }
        return new Run(process.exitValue(), Files.readAllLines(out), Files.readAllLines(err));
    }

    private boolean serverStarted() {
        return Files.exists(dir.resolve("server-started"));
    }

    @Test
    void anInvalidRuleFileIsRefusedWithOneLineAndExitCode2() throws Exception {
        Run run = run("rules:\n  - name: slow-search\n    fault: {type: latency, latency: -5ms}\n");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.stderr()).containsExactly("mcp-chaos: " + dir.resolve("rules.yaml")
                + ": rule 'slow-search': fault.latency: '-5ms' (expected: a duration >= 0, such as 250ms)");
        assertThat(run.stdout()).isEmpty();
        assertThat(serverStarted()).as("the server was started").isFalse();
    }

    @Test
    void anHttpOnlyFaultIsRefusedOnStdio() throws Exception {
        Run run = run("rules:\n  - name: busy\n    fault: {type: http_status, status: 503}\n");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.stderr()).containsExactly("mcp-chaos: " + dir.resolve("rules.yaml")
                + ": rule 'busy': http_status: only applies to the http transport (this proxy runs the stdio transport)");
        assertThat(serverStarted()).isFalse();
    }

    /**
     * Issue #34: with nothing to bind, open or watch, the chain is built while the server starts
     * (the server's start-up overlaps the proxy's), but a rule that cannot work on stdio is still
     * refused before the server is started, and the seed is still logged.
     */
    @Test
    void withNothingToWatchAnHttpOnlyFaultIsStillRefusedBeforeTheServerStartsAndTheSeedLogged() throws Exception {
        Run refused = run("rules:\n  - name: busy\n    fault: {type: http_status, status: 503}\n", "--no-watch");

        assertThat(refused.exitCode()).isEqualTo(2);
        assertThat(refused.stderr()).containsExactly("mcp-chaos: " + dir.resolve("rules.yaml")
                + ": rule 'busy': http_status: only applies to the http transport (this proxy runs the stdio transport)");
        assertThat(serverStarted()).isFalse();

        Run run = run("rules:\n  - name: d\n    match: {method: ping}\n    fault: {type: drop}\n", "--no-watch",
                "--seed", "99");
        assertThat(run.exitCode()).as("the server's exit code; stderr: %s", run.stderr()).isEqualTo(3);
        assertThat(serverStarted()).isTrue();
        assertThat(run.stderr()).anySatisfy(line -> assertThat(line)
                .contains("faults: chaos rules from " + dir.resolve("rules.yaml") + ": 1 of 1 enabled; seed 99 (given)"));
    }

    @Test
    void theSeedInUseIsLoggedAtStart() throws Exception {
        Run run = run("seed: 7\nrules:\n  - name: d\n    match: {method: ping}\n    fault: {type: drop}\n",
                "--seed", "99");

        assertThat(run.exitCode()).as("the server's exit code; stderr: %s", run.stderr()).isEqualTo(3);
        assertThat(serverStarted()).isTrue();
        assertThat(run.stderr()).anySatisfy(line -> assertThat(line)
                .contains("faults: chaos rules from " + dir.resolve("rules.yaml") + ": 1 of 1 enabled; seed 99 (given)"));
    }

    private static String javaBinary() {
        return ProcessHandle.current().info().command().orElse("java");
    }

    private static String classPath() {
        String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }

    /**
     * The class path without the entries that hold the tests' logback-test.xml (proxy-core's test
     * classes), so that the child logs as the proxy does (INFO to stderr), not as the tests (WARN).
     */
    private static String classPathWithoutTestLogging() {
        StringBuilder kept = new StringBuilder();
        for (String entry : classPath().split(java.io.File.pathSeparator)) {
            Path path = Path.of(entry);
            boolean testLogging = Files.isDirectory(path) ? Files.exists(path.resolve("logback-test.xml"))
                    : entry.endsWith("-tests.jar");
            if (!testLogging) {
                kept.append(kept.length() == 0 ? "" : java.io.File.pathSeparator).append(entry);
            }
        }
        return kept.toString();
    }
}
