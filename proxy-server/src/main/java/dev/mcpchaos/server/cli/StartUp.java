package dev.mcpchaos.server.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.slf4j.LoggerFactory;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;

import java.io.IOException;
import java.io.StringReader;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What the command line does before picocli runs, so that a proxy relays its first message
 * sooner: in stdio mode the proxy's start-up is added in full to the time before an MCP client
 * can do anything.
 */
final class StartUp {

    /** The commands that run a proxy (and so log, and relay through Netty's buffers). */
    private static final Set<String> PROXY_COMMANDS = Set.of("stdio", "http", "demo", "replay");

    /**
     * The commands that parse JSON into trees with jackson-databind's ObjectMapper before their
     * first answer: replay its cassettes and every message. (The demo server reads and writes its
     * trees without one: DemoJson.)
     */
    private static final Set<String> TREE_COMMANDS = Set.of("replay");

    /** The warm-up may take this long on a busy machine before the command goes ahead anyway. */
    private static final long WARM_UP_WAIT_SECONDS = 10;

    /** Netty's system property for its leak detection, and the older name it still reads. */
    static final String LEAK_DETECTION_LEVEL = "io.netty.leakDetection.level";
    private static final String LEAK_DETECTION_LEVEL_OLD = "io.netty.leakDetectionLevel";

    /** Counted down by each warm-up thread once what the command needs first is ready. */
    private final CountDownLatch commandMayRun;

    private StartUp(int warmUps) {
        commandMayRun = new CountDownLatch(warmUps);
    }

    /**
     * Begins start-up for the command line {@code args}. Turns Netty's JFR allocator events off
     * unless {@code -Dio.netty.jfr.enabled} says otherwise (registering them loaded JFR's metadata
     * on the first buffer, about 0.15 s, in front of the first relayed message), and starts, while
     * the main thread builds the command line (picocli's reflection, 0.1 s and more), what the
     * command will need first, on up to two threads: logging for a proxy command, then the
     * child-process machinery for stdio, Netty's buffer pool and jackson's non-blocking parser;
     * and, beside it, jackson-databind's tree model for replay (its first mapper alone costs
     * 40-80 ms cold, for the date formats and locale data it sets up) and the rule file's YAML
     * parser when rules are given. Netty's leak detection is off too unless
     * {@code -Dio.netty.leakDetection.level} (or its old name) says otherwise: its sampling and
     * the pipeline's {@code touch} of every message were 7-8 % of the HTTP relay's Java samples,
     * and the test suite runs the proxy with paranoid detection that fails on any leak.
     */
    static StartUp begin(String[] args) {
        if (System.getProperty("io.netty.jfr.enabled") == null) {
            System.setProperty("io.netty.jfr.enabled", "false");
        }
        if (System.getProperty(LEAK_DETECTION_LEVEL) == null && System.getProperty(LEAK_DETECTION_LEVEL_OLD) == null) {
            System.setProperty(LEAK_DETECTION_LEVEL, "disabled");
        }
        String command = args.length > 0 ? args[0] : "";
        boolean proxy = PROXY_COMMANDS.contains(command);
        boolean rules = proxy && givesRules(args);
        boolean trees = TREE_COMMANDS.contains(command) || rules;
        StartUp startUp = new StartUp((proxy ? 1 : 0) + (trees ? 1 : 0));
        if (proxy) {
            boolean child = command.equals("stdio") || command.equals("demo");
            startUp.start("mcp-chaos-warm-up", () -> startUp.warmUpProxy(child));
        }
        if (trees) {
            startUp.start("mcp-chaos-warm-up-json", () -> startUp.warmUpTrees(rules));
        }
        return startUp;
    }

    private void start(String name, Runnable warmUp) {
        Thread thread = new Thread(warmUp, name);
        thread.setDaemon(true); // never keeps the JVM up, whatever the command does
        thread.start();
    }

    /** Whether the command line (or MCP_CHAOS_RULES, read by stdio and http) gives a rule file. */
    static boolean givesRules(String[] args) {
        for (String arg : args) {
            if (arg.equals("--")) {
                break; // what follows is the server's command line
            }
            if (arg.equals("--rules") || arg.startsWith("--rules=")) {
                return true;
            }
        }
        String fromEnvironment = System.getenv(EnvironmentDefaults.PREFIX + "RULES");
        return fromEnvironment != null && !fromEnvironment.isEmpty();
    }

    /**
     * Waits until what the command needs first was set up by the warm-up, before the command
     * runs: SLF4J hands out stand-in loggers to a thread that asks while another sets it up, and
     * prints a warning on stderr when it replays what they logged; and jackson's classes are then
     * initialized by one thread, never by two at once.
     */
    void awaitWarmUp() {
        try {
            commandMayRun.await(WARM_UP_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /*
     * The warm-ups initialize what the command needs and the main thread would otherwise wait for.
     * Class initialization is once per JVM and thread-safe, so whichever thread gets there first
     * does it and the other waits for it; nothing here has an effect beyond that. A failure is
     * only a lost optimization: the command meets the same problem on its own path and says so.
     */

    /** Logging, then (not waited for) the child-process machinery, Netty's buffers, the sniffer's parser. */
    private void warmUpProxy(boolean child) {
        try {
            LoggerFactory.getILoggerFactory();
        } catch (RuntimeException | LinkageError e) {
            // Only an optimization (see above).
        } finally {
            commandMayRun.countDown();
        }
        try {
            if (child) {
                // What the first ProcessBuilder.start() initializes (the environment's copy, the
                // launcher, the reaper), 10-30 ms cold, while the main thread reads the options.
                new ProcessBuilder().environment();
                Class.forName("java.lang.ProcessImpl", true, null);
                Class.forName("java.lang.ProcessHandleImpl", true, null);
            }
            ByteBuf probe = PooledByteBufAllocator.DEFAULT.heapBuffer(64);
            probe.writeByte('{');
            probe.release();
            new JsonFactory().createNonBlockingByteArrayParser().close();
        } catch (IOException | ReflectiveOperationException | RuntimeException | LinkageError e) {
            // Only an optimization (see above).
        }
    }

    /** jackson-databind's trees as the cassettes and the replay use them; the YAML parser. */
    private void warmUpTrees(boolean rules) {
        try {
            // As Cassette and StdioReplay use it: a tree read, written and printed.
            ObjectMapper json = JsonMapper.builder().build();
            JsonNode tree = json.readTree(SAMPLE_MESSAGE);
            json.writeValueAsBytes(tree);
            tree.toString();
            if (rules) {
                // As RuleFileParser reads a rule file: SnakeYAML's events, then jackson's YAML tree.
                new Yaml(new LoaderOptions()).parse(new StringReader(SAMPLE_RULES)).forEach(event -> { });
                YAMLMapper.builder().build().readTree(SAMPLE_RULES);
            }
        } catch (IOException | RuntimeException | LinkageError e) {
            // Only an optimization (see above).
        } finally {
            commandMayRun.countDown();
        }
    }

    private static final String SAMPLE_MESSAGE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
            + "{\"name\":\"n\",\"arguments\":{\"s\":\"x\",\"i\":1,\"d\":2.5,\"b\":true,\"z\":null,\"a\":[]}}}";
    private static final String SAMPLE_RULES = "rules:\n  - name: n\n    match: {kind: request, method: tools/call}\n"
            + "    fault: {type: latency, latency: 1s}\n";
}
