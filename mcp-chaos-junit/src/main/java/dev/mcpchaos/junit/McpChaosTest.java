package dev.mcpchaos.junit;

import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the tests of a class with an mcp-chaos proxy in this JVM, in front of one upstream: give
 * exactly one of {@link #stdio()}, {@link #http()}, {@link #demo()} or {@link #replay()}. A test method (or
 * constructor, or lifecycle method) gets it as a parameter of type {@link ChaosProxy} (or
 * {@link dev.mcpchaos.server.RunningProxy}, or {@link dev.mcpchaos.rules.Chaos}).
 *
 * <pre>{@code
 * @McpChaosTest(demo = McpChaosTest.Demo.HTTP)
 * class SlowAnswersTest {
 *     @Test
 *     void aSlowAnswerStillArrives(ChaosProxy proxy) {
 *         proxy.chaos().add(Rules.latency("slow", Duration.ofMillis(300)).onTool("echo").onResponses());
 *         // an MCP client on proxy.mcpUrl() ...
 *     }
 * }
 * }</pre>
 *
 * <p>Before each test the rules go back to those the proxy started with, faults on, counters at
 * 0, and the test gets a seed of its own (see {@link #seed()}); when it fails, the seed is printed
 * with how to repeat it. The same, built in code: {@link McpChaosExtension}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(McpChaosExtension.class)
public @interface McpChaosTest {

    /** No seed given: each test's is derived from its unique id. */
    long NO_SEED = Long.MIN_VALUE;

    /** The built-in demo server (tools {@code echo}, {@code add}, {@code slow}, {@code large}), on one transport. */
    enum Demo {
        /** No demo server: {@link #stdio()} or {@link #http()} names the upstream. */
        NONE,
        /** The demo server as a child process, the proxy on stdio. */
        STDIO,
        /** The demo server in this JVM on a free loopback port, the proxy on HTTP. */
        HTTP
    }

    /** The upstream MCP server as a command (program and arguments) the proxy starts, over stdio. */
    String[] stdio() default {};

    /** The upstream Streamable HTTP MCP server's URL, such as {@code http://127.0.0.1:3001/mcp}. */
    String http() default "";

    /** The built-in demo server as the upstream. */
    Demo demo() default Demo.NONE;

    /**
     * The server recorded in these cassettes (classpath resources, such as
     * {@code /cassettes/everything.ndjson}), replayed in this JVM over {@link #replayOver()}: no
     * real server. See {@link McpChaosExtension#replayStdio(String...)}.
     */
    String[] replay() default {};

    /** The transport a {@link #replay()} is served over: HTTP (default) or STDIO. */
    dev.mcpchaos.core.transport.TransportKind replayOver() default dev.mcpchaos.core.transport.TransportKind.HTTP;

    /**
     * What a {@link #replay()} answers once a request's recordings are used up: the last one again
     * (default) or a JSON-RPC error, as {@code mcp-chaos replay --on-exhausted}.
     */
    dev.mcpchaos.server.replay.OnExhausted replayOnExhausted() default dev.mcpchaos.server.replay.OnExhausted.LAST;

    /**
     * When a {@link #replay()} answers: {@code none} (at once, default), {@code recorded} (as late as
     * the server did) or {@code scaled:F}, as {@code mcp-chaos replay --timing}.
     */
    String replayTiming() default "none";

    /**
     * How a {@link #replay()} matches a request to a recording: {@code default} (method and params,
     * {@code _meta}, ids and progress tokens aside), {@code sequential} or {@code strict}, as
     * {@code mcp-chaos replay --match}.
     */
    dev.mcpchaos.server.replay.MatchMode replayMatch() default dev.mcpchaos.server.replay.MatchMode.DEFAULT;

    /** A rule file on the classpath (YAML, or JSON for {@code .json}), such as {@code /chaos/rules.yaml}; default none. */
    String rules() default "";

    /**
     * The seed of every test of the class; default: each test's own, derived from its unique id
     * (the same on every run and machine). {@code -Dmcpchaos.seed=N} (a system property or a
     * JUnit configuration parameter) overrides both, to repeat a failed run.
     */
    long seed() default NO_SEED;

    /** One proxy for the whole class (reset before each test), or a new one for each test. */
    Lifecycle lifecycle() default Lifecycle.PER_CLASS;

    /**
     * Whether the rules are reset and the test's seed given before each test (default true); with
     * {@code false} and one proxy per class, each test goes on from where the one before left.
     */
    boolean resetBeforeEach() default true;

    /** Serves the control API on a free loopback port ({@link ChaosProxy#controlUrl()}); default off. */
    boolean control() default false;
}
