package dev.mcpchaos.server.it;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code ./mcp-chaos} launcher of a source checkout and its class-data archives (a lean one for
 * a plain stdio, replay or demo-server command line, a full one for the rest): each made on the
 * first run that needs it, used by the next, made again when the jar changes, skipped when asked,
 * and never a reason for a byte on stdout other than the protocol's, even when it no longer fits.
 * Runs a copy of the launcher in a directory laid out like a checkout with the packaged jar in it,
 * so it never builds (and never touches the real checkout's archive).
 */
class LauncherIT {

    private static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n";

    @TempDir
    Path root;

    private Path jar;
    /** The archive a plain stdio, replay or demo-server command line uses (issue #34: smaller maps sooner). */
    private Path archive;
    /** The archive every other command line uses. */
    private Path fullArchive;

    @BeforeEach
    void layOutACheckout() throws IOException {
        Path repository = TestPeers.testPeersDir().getParent();
        Files.copy(repository.resolve("mcp-chaos"), root.resolve("mcp-chaos"), StandardCopyOption.COPY_ATTRIBUTES);
        Files.createDirectories(root.resolve("examples"));
        Files.copy(repository.resolve("examples/slow-tool.yaml"), root.resolve("examples/slow-tool.yaml"));
        jar = Files.createDirectories(root.resolve("mcp-chaos-cli/target")).resolve("mcp-chaos.jar");
        Files.copy(TestPeers.mcpChaosJar(), jar);
        archive = root.resolve("mcp-chaos-cli/target/mcp-chaos-lean.jsa");
        fullArchive = root.resolve("mcp-chaos-cli/target/mcp-chaos.jsa");
    }

    @Test
    void theFirstRunMakesTheArchiveAndTheNextOneLoadsTheProxysClassesFromIt() throws Exception {
        Run first = launch(Map.of());
        assertThat(first.exitCode).isZero();
        assertThat(first.stdout).isEqualTo(INITIALIZE); // `cat` answers with what it got
        // SLF4J speaks up on stderr when the shaded jar lost its provider, or when it had to replay
        // stand-in loggers because logging was set up late (StartUp sets it up beside picocli).
        assertThat(first.stderr).doesNotContain("SLF4J");
        assertThat(archive).isRegularFile();
        assertThat(Files.size(archive)).isGreaterThan(1024 * 1024);
        assertThat(root.resolve("mcp-chaos-cli/target/mcp-chaos-lean.jsa.failed")).doesNotExist();
        assertThat(fullArchive).as("made only when a command line needs it").doesNotExist();

        Run second = launch(Map.of("MCP_CHAOS_JAVA_OPTS", "-Xlog:class+load=info:stderr"));
        assertThat(second.exitCode).isZero();
        assertThat(second.stdout).isEqualTo(INITIALIZE);
        assertThat(second.stderr).contains("dev.mcpchaos.server.cli.Main source: shared objects file",
                "dev.mcpchaos.server.cli.FastStart source: shared objects file");
        assertThat(second.stderr).as("a plain stdio command line is parsed without picocli (FastStart)")
                .doesNotContain("picocli.CommandLine ");
        // Every class from the archive, and the jar never opened (reading its index of 11,000
        // entries took 20-50 ms): not for FastStart's table (a class), nor for logging's search for
        // a logback-test.xml (the jar has none), nor for MCP_CHAOS_* variables (EnvironmentDefaults).
        assertThat(second.stderr).doesNotContain("source: file:", "java.util.zip.ZipFile$Source ");
        // Netty's default allocator is the pooled one the relay uses (StartUp): its adaptive one,
        // made by ByteBufUtil's class initialization, cost the client's first line 10 ms of CPU.
        assertThat(second.stderr).contains("io.netty.buffer.ByteBufUtil ")
                .doesNotContain("io.netty.buffer.AdaptiveByteBufAllocator ");
        try (JarFile opened = new JarFile(jar.toFile())) {
            assertThat(opened.getEntry("logback-test.xml")).isNull();
            assertThat(opened.getEntry("dev/mcpchaos/server/cli/FastStartData.class")).isNotNull();
        }
        // The other commands go through picocli, whose classes are Java 5 class files, which only a
        // static archive takes; the training's usage run puts them there.
        Run usage = launch(Map.of("MCP_CHAOS_JAVA_OPTS", "-Xlog:class+load=info:stderr"), "", "--help");
        assertThat(usage.exitCode).isZero();
        assertThat(usage.stdout).contains("Usage: mcp-chaos", "stdio", "replay");
        assertThat(usage.stderr).contains("picocli.CommandLine source: shared objects file");
        assertThat(fullArchive).isRegularFile();
        assertThat(Files.size(fullArchive)).isGreaterThan(Files.size(archive));
        assertThat(root.resolve("mcp-chaos-cli/target/mcp-chaos.jsa.failed")).doesNotExist();
        assertThat(root.resolve("mcp-chaos-cli/target")).isDirectoryNotContaining("glob:**.{tmp,classes}");
    }

    /** Issue #34: a fixture spawned per test is often the demo server or a replay, not stdio. */
    @Test
    void theArchiveHoldsTheClassesOfTheDemoServerAndOfAReplayToo() throws Exception {
        assertThat(launch(Map.of()).exitCode).isZero();
        Map<String, String> classLog = Map.of("MCP_CHAOS_JAVA_OPTS", "-Xlog:class+load=info:stderr");

        Run demo = launch(classLog, INITIALIZE, "demo-server");
        assertThat(demo.exitCode).isZero();
        assertThat(demo.stdout).contains("\"id\":1", "\"serverInfo\"");
        assertThat(demo.stderr).contains("dev.mcpchaos.server.demo.DemoServer source: shared objects file",
                "dev.mcpchaos.server.host.McpStdioHost source: shared objects file",
                "dev.mcpchaos.server.host.HostJson source: shared objects file")
                .as("no ObjectMapper on the way to the demo server's answers (HostJson)")
                .doesNotContain("com.fasterxml.jackson.databind.ObjectMapper ");

        Path cassette = root.resolve("fixture.ndjson");
        Files.writeString(cassette, String.join("\n",
                "{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":1,\"transport\":\"stdio\","
                        + "\"recordedAt\":\"2026-12-02T06:00:00Z\",\"recorder\":\"test\"}",
                "{\"type\":\"message\",\"seq\":0,\"t\":0,\"dir\":\"c2s\",\"session\":\"stdio\",\"message\":"
                        + "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}}",
                "{\"type\":\"message\",\"seq\":1,\"t\":1,\"dir\":\"s2c\",\"session\":\"stdio\",\"message\":"
                        + "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                        + "\"serverInfo\":{\"name\":\"recorded\",\"version\":\"0\"}}}}") + "\n");
        Run replay = launch(classLog, INITIALIZE, "replay", cassette.toString(), "--quiet");
        assertThat(replay.exitCode).isZero();
        assertThat(replay.stdout).contains("\"id\":1", "\"recorded\"");
        assertThat(replay.stderr).contains("dev.mcpchaos.server.replay.StdioReplay source: shared objects file",
                "dev.mcpchaos.server.record.Cassette source: shared objects file",
                "dev.mcpchaos.server.cli.FastStart source: shared objects file")
                .as("no ObjectMapper on the way to a replay's answers (JsonTrees), and no picocli (FastStart)")
                .doesNotContain("com.fasterxml.jackson.databind.ObjectMapper ", "picocli.CommandLine ");
    }

    @Test
    void aJarNewerThanTheArchiveGetsANewOne() throws Exception {
        assertThat(launch(Map.of()).exitCode).isZero();
        Files.setLastModifiedTime(archive, FileTime.from(Instant.now().minusSeconds(3600)));
        Files.setLastModifiedTime(jar, FileTime.from(Instant.now().minusSeconds(60)));

        Run run = launch(Map.of());
        assertThat(run.exitCode).isZero();
        assertThat(run.stdout).isEqualTo(INITIALIZE);
        assertThat(Files.getLastModifiedTime(archive)).isGreaterThan(Files.getLastModifiedTime(jar));
    }

    @Test
    void anArchiveThatDoesNotFitIsNotUsedAndNeverReachesStdout() throws Exception {
        // An archive of another build of the jar that looks fresh (a jar copied with its old time).
        assertThat(launch(Map.of()).exitCode).isZero();
        try (FileSystem zip = FileSystems.newFileSystem(jar)) {
            Files.writeString(zip.getPath("another-build.txt"), "x"); // another jar to the JVM: another size
        }
        Files.setLastModifiedTime(jar, FileTime.from(Instant.now().minusSeconds(3600)));
        Files.setLastModifiedTime(archive, FileTime.from(Instant.now()));
        Run otherBuild = launch(Map.of("MCP_CHAOS_JAVA_OPTS", "-Xlog:class+load=info:stderr"));
        assertThat(otherBuild.exitCode).isZero();
        assertThat(otherBuild.stdout).isEqualTo(INITIALIZE);
        // The JVM sees that the jar is not the one archived and loads the classes from the jar.
        assertThat(otherBuild.stderr).contains("dev.mcpchaos.server.cli.Main source: file:")
                .doesNotContain("dev.mcpchaos.server.cli.Main source: shared objects file");

        // Not an archive at all: the JVM ignores it.
        Files.write(archive, "not a class-data archive".repeat(100).getBytes(UTF_8));
        Files.setLastModifiedTime(archive, FileTime.from(Instant.now()));
        Run garbage = launch(Map.of());
        assertThat(garbage.exitCode).isZero();
        assertThat(garbage.stdout).isEqualTo(INITIALIZE);
    }

    /**
     * The launcher runs the jar by its class path and main class, not {@code -jar} (whose manifest
     * read opened the jar before main, 30-50 ms of every cold start): the class it names must be
     * the jar's Main-Class.
     */
    @Test
    void theLaunchersMainClassIsTheJars() throws Exception {
        String launcher = Files.readString(root.resolve("mcp-chaos"));
        Matcher named = Pattern.compile("(?m)^main=(\\S+)$").matcher(launcher);
        assertThat(named.find()).as("a main=CLASS line in the launcher").isTrue();
        try (JarFile opened = new JarFile(jar.toFile())) {
            assertThat(named.group(1)).isEqualTo(opened.getManifest().getMainAttributes().getValue("Main-Class"));
        }
        assertThat(launcher).doesNotContain("-jar \"$jar\"");
    }

    /**
     * Issue #34: the archive is mapped at the address it was made for, not moved to a random one
     * with every pointer in it patched (JDK 20's default, and Debian's JDK 17's), which cost each
     * start 25-35 ms of CPU; a user who wants the randomization back sets it in MCP_CHAOS_JAVA_OPTS.
     */
    @Test
    void theArchiveIsMappedWhereItWasMadeUnlessTheUserAsksOtherwise() throws Exception {
        assertThat(launch(Map.of()).exitCode).isZero();
        Run run = launch(Map.of("MCP_CHAOS_JAVA_OPTS", "-Xlog:cds=info:stderr"));
        assertThat(run.exitCode).isZero();
        assertThat(run.stdout).isEqualTo(INITIALIZE);
        assertThat(run.stderr).contains("Opened archive " + archive + ".", "Mapped static  region #0")
                .doesNotContain("always map archive(s) at an alternative address");
        Run moved = launch(Map.of("MCP_CHAOS_JAVA_OPTS", "-Xlog:cds=info:stderr -XX:ArchiveRelocationMode=1"));
        assertThat(moved.exitCode).isZero();
        assertThat(moved.stdout).isEqualTo(INITIALIZE);
        assertThat(moved.stderr).contains("always map archive(s) at an alternative address");
    }

    @Test
    void mcpChaosCdsOffRunsWithoutAnArchive() throws Exception {
        Run run = launch(Map.of("MCP_CHAOS_CDS", "off"));
        assertThat(run.exitCode).isZero();
        assertThat(run.stdout).isEqualTo(INITIALIZE);
        assertThat(archive).doesNotExist();
        Run usage = launch(Map.of("MCP_CHAOS_CDS", "off"), "", "--help");
        assertThat(usage.exitCode).isZero();
        assertThat(fullArchive).doesNotExist();
    }

    /**
     * Issue #34: the JVM maps an archive at a random address and relocates it, which costs by its
     * size, so a plain stdio, replay or demo-server command line (a fixture spawned per test)
     * gets the lean archive, trained on those alone; any other gets the full one. The launcher
     * tells them apart from the arguments alone; {@code -Xlog:cds} names the archive opened.
     */
    @Test
    void aPlainFixtureCommandLineUsesTheLeanArchiveAndEveryOtherTheFullOne() throws Exception {
        Path cassette = root.resolve("fixture.ndjson");
        Files.writeString(cassette, String.join("\n",
                "{\"type\":\"header\",\"format\":\"mcp-chaos-cassette\",\"version\":1,\"transport\":\"stdio\","
                        + "\"recordedAt\":\"2026-12-02T06:00:00Z\",\"recorder\":\"test\"}",
                "{\"type\":\"message\",\"seq\":0,\"t\":0,\"dir\":\"c2s\",\"session\":\"stdio\",\"message\":"
                        + "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}}",
                "{\"type\":\"message\",\"seq\":1,\"t\":1,\"dir\":\"s2c\",\"session\":\"stdio\",\"message\":"
                        + "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                        + "\"serverInfo\":{\"name\":\"recorded\",\"version\":\"0\"}}}}") + "\n");
        Path rules = root.resolve("examples/slow-tool.yaml");
        String c = cassette.toString();
        String r = rules.toString();
        List<List<String>> lean = List.of(
                List.of("stdio", "--quiet", "--", "cat"),
                // After stdio's "--" the arguments are the server's: not the launcher's to read.
                List.of("stdio", "--quiet", "--seed", "7", "-e", "A=b", "--", "sh", "-c", "cat", "sh", "--rules", r),
                List.of("replay", c, "--quiet"),
                List.of("demo-server"));
        List<List<String>> full = List.of(
                List.of("stdio", "--quiet", "--rules", r, "--", "cat"),
                List.of("stdio", "--quiet", "--rules=" + r, "--", "cat"),
                List.of("stdio", "--quiet", "--check", "--", "cat"),
                List.of("stdio", "--quiet", "--log-traffic", "--", "cat"),
                List.of("stdio", "--quiet", "--control", "127.0.0.1:0", "--", "cat"),
                List.of("replay", c, "--quiet", "--rules", r, "--no-watch"),
                List.of("replay", c, "--help"),
                List.of("demo-server", "--help"),
                List.of("validate", r),
                List.of("--help"));
        Map<String, String> cdsLog = Map.of("MCP_CHAOS_JAVA_OPTS", "-Xlog:cds=info:stderr");
        for (List<String> args : lean) {
            Run run = launch(cdsLog, INITIALIZE, args.toArray(String[]::new));
            assertThat(run.stderr).as("%s", args).contains("Opened archive " + archive + ".")
                    .doesNotContain(fullArchive.toString());
        }
        assertThat(fullArchive).as("no plain command line made the full archive").doesNotExist();
        for (List<String> args : full) {
            Run run = launch(cdsLog, INITIALIZE, args.toArray(String[]::new));
            assertThat(run.stderr).as("%s", args).contains("Opened archive " + fullArchive + ".")
                    .doesNotContain(archive.toString());
        }
    }

    /**
     * The JVM's unified logging writes to stdout unless an option names another output, and
     * {@code -verbose:gc} names none: in stdio mode its lines would go to the client as protocol.
     * The launcher points every such option at stderr.
     */
    @ParameterizedTest
    @ValueSource(strings = {"-verbose:gc", "-Xlog:gc", "-Xlog:gc:stdout", "-Xlog:gc::uptime,level,tags", "-XX:+PrintGC",
        "-Xlog:disable -Xlog:gc"})
    void jvmLoggingTurnedOnInMcpChaosJavaOptsGoesToStderrAndStdoutStaysTheProtocol(String options) throws Exception {
        Run run = launch(Map.of("MCP_CHAOS_JAVA_OPTS", options, "MCP_CHAOS_CDS", "off"));
        assertThat(run.exitCode).isZero();
        assertThat(run.stdout).isEqualTo(INITIALIZE); // byte for byte: nothing but what `cat` sent back
        assertThat(run.stderr).containsPattern("\\[info\\]\\[gc\\] Using [A-Za-z0-9 ]+"); // the GC the JVM chose
    }

    @Test
    void jvmLoggingToAFileOfItsOwnStaysThere() throws Exception {
        Path gcLog = root.resolve("gc.log");
        Run run = launch(Map.of("MCP_CHAOS_JAVA_OPTS", "-Xlog:gc:file=" + gcLog, "MCP_CHAOS_CDS", "off"));
        assertThat(run.exitCode).isZero();
        assertThat(run.stdout).isEqualTo(INITIALIZE);
        assertThat(run.stderr).doesNotContain("[gc]");
        assertThat(Files.readString(gcLog)).containsPattern("\\[info\\]\\[gc\\] Using ");
    }

    @Test
    void whatTheVmPrintsOutsideItsLoggingGoesToStderrToo() throws Exception {
        Run run = launch(Map.of("MCP_CHAOS_JAVA_OPTS", "-XX:+PrintFlagsFinal --show-version", "MCP_CHAOS_CDS", "off"));
        assertThat(run.exitCode).isZero();
        assertThat(run.stdout).isEqualTo(INITIALIZE);
        assertThat(run.stderr).contains("MaxHeapSize").contains("Runtime Environment");
    }

    private Run launch(Map<String, String> environment) throws Exception {
        return launch(environment, INITIALIZE, "stdio", "--quiet", "--", "cat");
    }

    private Run launch(Map<String, String> environment, String input, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(root.resolve("mcp-chaos").toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command);
        Path javaHome = TestPeers.java().getParent();
        builder.environment().put("PATH", javaHome + ":" + System.getenv("PATH"));
        builder.environment().remove("MCP_CHAOS_JAVA_OPTS");
        builder.environment().remove("MCP_CHAOS_CDS");
        builder.environment().putAll(environment);
        Process process = builder.start();
        CompletableFuture<String> stdout = drain(process.getInputStream());
        CompletableFuture<String> stderr = drain(process.getErrorStream());
        try (OutputStream in = process.getOutputStream()) {
            in.write(input.getBytes(UTF_8));
        }
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("the launcher did not exit within 60 s; stderr: " + stderr.getNow(""));
        }
        return new Run(process.exitValue(), stdout.get(10, TimeUnit.SECONDS), stderr.get(10, TimeUnit.SECONDS));
    }

    private static CompletableFuture<String> drain(InputStream stream) {
        return CompletableFuture.supplyAsync(() -> {
            try (stream) {
                return new String(stream.readAllBytes(), UTF_8);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private record Run(int exitCode, String stdout, String stderr) {
    }
}
