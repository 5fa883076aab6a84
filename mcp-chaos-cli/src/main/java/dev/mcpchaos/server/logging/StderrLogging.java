package dev.mcpchaos.server.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import ch.qos.logback.core.spi.ContextAwareBase;
import ch.qos.logback.core.status.NopStatusListener;

import java.io.File;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;
import java.security.CodeSource;

/**
 * The proxy's logging, set up in code (found by logback through {@code ServiceLoader}): every line
 * to stderr, because in stdio mode stdout carries the protocol; INFO, or the level in the
 * {@code MCP_CHAOS_LOG_LEVEL} environment variable; Netty at WARN; lines as {@link StderrLayout}
 * writes them.
 *
 * <p>In code rather than a {@code logback.xml} because reading XML made start-up load about 600
 * classes (logback's Joran and the JDK's XML parser) on every run. A configuration of one's own
 * still wins: {@code -Dlogback.configurationFile=...}, or a {@code logback-test.xml} on the class
 * path (the tests'), make this step aside.
 *
 * <p>The appender's target is {@code System.err} looked up on every write, not the file
 * descriptor: the live view ({@code dev.mcpchaos.server.live}) points {@code System.err} at a
 * stream that prints above its block.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_HIGH_PRIORITY)
public final class StderrLogging extends ContextAwareBase implements Configurator {

    /** The environment variable that sets the level (TRACE, DEBUG, INFO, WARN, ERROR, OFF). */
    public static final String LEVEL_VARIABLE = "MCP_CHAOS_LOG_LEVEL";
    /** For {@code ServiceLoader}. */
    public StderrLogging() {
    }

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        if (System.getProperty("logback.configurationFile") != null || testConfigurationOnClassPath()) {
            return ExecutionStatus.INVOKE_NEXT_IF_ANY;
        }
        // Logback prints its own status on stdout when something goes wrong: never in stdio mode.
        NopStatusListener quiet = new NopStatusListener();
        context.getStatusManager().add(quiet);

        StderrLayout layout = new StderrLayout();
        layout.setContext(context);
        layout.start();
        LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
        encoder.setContext(context);
        encoder.setLayout(layout);
        encoder.start();

        ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
        stderr.setContext(context);
        stderr.setName("STDERR");
        stderr.setTarget("System.err");
        stderr.setEncoder(encoder);
        stderr.start();

        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.toLevel(System.getenv(LEVEL_VARIABLE), Level.INFO));
        root.addAppender(stderr);
        context.getLogger("io.netty").setLevel(Level.WARN);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }

    /**
     * Whether a {@code logback-test.xml} is on the class path. Not looked up when the class path is
     * the jar this class came from and nothing else, as the launcher runs it: the build makes that
     * jar without one (its shade filter), and the lookup read the index of the jar's 11,000
     * entries, 20-50 ms before a stdio proxy's logging was ready, the only read of the jar in a
     * run whose classes come from the class-data archive.
     */
    private static boolean testConfigurationOnClassPath() {
        CodeSource source = StderrLogging.class.getProtectionDomain().getCodeSource();
        if (isOnlyEntry(System.getProperty("java.class.path"), source == null ? null : source.getLocation())) {
            return false;
        }
        return StderrLogging.class.getClassLoader().getResource("logback-test.xml") != null;
    }

    /** Whether {@code classPath} is one jar, the file at {@code location}. */
    static boolean isOnlyEntry(String classPath, URL location) {
        if (classPath == null || !classPath.endsWith(".jar") || classPath.indexOf(File.pathSeparatorChar) >= 0
                || location == null || !"file".equals(location.getProtocol())) {
            return false;
        }
        try {
            return Path.of(location.toURI()).normalize().equals(Path.of(classPath).toAbsolutePath().normalize());
        } catch (URISyntaxException | IllegalArgumentException e) { // InvalidPathException among them
            return false;
        }
    }
}
