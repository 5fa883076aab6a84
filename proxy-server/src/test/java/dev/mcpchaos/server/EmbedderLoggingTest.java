package dev.mcpchaos.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application that embeds the proxy keeps its own logging: its {@code logback.xml} decides
 * where the proxy's lines go and how they look. The library brings no logback configuration of
 * its own (the command line's stderr set-up is the application's, in mcp-chaos-cli), so nothing
 * outranks the embedder's file.
 *
 * <p>A child JVM, because logback configures itself once per JVM, and this one is configured by
 * the tests' {@code logback-test.xml}: its class path is this module's with logback-classic, less
 * every entry that holds a {@code logback-test.xml} (which logback would take before
 * {@code logback.xml}), plus a directory holding the embedder's {@code logback.xml}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EmbedderLoggingTest {

    /** Every line the embedder's configuration writes starts with this. */
    private static final String MARKER = "EMBEDDER-LOGBACK";

    @TempDir
    Path dir;

    @Test
    void theEmbeddersLogbackXmlDecidesWhereTheProxysLinesGo() throws Exception {
        Path config = Files.createDirectories(dir.resolve("config"));
        Path logFile = dir.resolve("embedder.log");
        Files.writeString(config.resolve("logback.xml"), """
                <configuration>
                  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
                    <file>${embedder.log}</file>
                    <encoder><pattern>%s|%%level|%%logger|%%msg%%n</pattern></encoder>
                  </appender>
                  <root level="INFO"><appender-ref ref="FILE"/></root>
                </configuration>
                """.formatted(MARKER));
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(ChildJvm.startupOptions());
        command.add("-Dembedder.log=" + logFile);
        command.addAll(List.of("-cp", config + File.pathSeparator + classPathWithoutTestLogging(),
                Embedder.class.getName()));
        Path stderr = dir.resolve("stderr");
        Process process = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(dir.resolve("stdout").toFile())
                .redirectError(stderr.toFile())
                .start();
        assertThat(process.waitFor(45, TimeUnit.SECONDS)).as("the embedder exited within 45 s").isTrue();
        String err = Files.readString(stderr);
        assertThat(process.exitValue()).as("the embedder's exit code; stderr:%n%s", err).isZero();

        assertThat(logFile).as("the embedder's log file; the child's stderr:%n%s", err).exists();
        assertThat(Files.readAllLines(logFile, StandardCharsets.UTF_8))
                .as("the proxy's start line, in the embedder's pattern")
                .anySatisfy(line -> assertThat(line)
                        .startsWith(MARKER + "|INFO|dev.mcpchaos.core.transport.http.HttpProxy|listening on http://127.0.0.1:"));
        assertThat(err).as("no line of the proxy's own stderr logging").doesNotContain("listening on");
    }

    /** The embedding application: starts an HTTP proxy through the public builder, stops it, exits. */
    static final class Embedder {
        public static void main(String[] args) {
            // Nothing listens on port 1: the proxy starts all the same, and logs that it listens.
            try (HttpProxyBuilder.RunningHttp proxy = McpChaosProxy.http(URI.create("http://127.0.0.1:1/mcp"))
                    .listen(new InetSocketAddress("127.0.0.1", 0))
                    .start()) {
                System.out.println(proxy.mcpUrl());
            }
            System.exit(0);
        }
    }

    private static String classPath() {
        String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }

    /** The class path less the entries holding the tests' logback-test.xml (proxy-core's test classes). */
    private static String classPathWithoutTestLogging() {
        List<String> kept = new ArrayList<>();
        for (String entry : classPath().split(File.pathSeparator)) {
            Path path = Path.of(entry);
            boolean testLogging = Files.isDirectory(path) ? Files.exists(path.resolve("logback-test.xml"))
                    : entry.endsWith("-tests.jar");
            if (!testLogging) {
                kept.add(entry);
            }
        }
        return String.join(File.pathSeparator, kept);
    }
}
