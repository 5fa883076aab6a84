package dev.mcpchaos.server.logging;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * The command line's SLF4J provider: logback, configured by {@link StderrLogging} directly.
 *
 * <p>Why not logback's own provider: it finds its configuration through {@code ServiceLoader}
 * and sorts the configurators it finds by their rank annotations, which loads logback's XML
 * configurator and makes the JVM generate annotation proxies; on a cold start that was about
 * 100 ms in front of a stdio proxy's first relayed message (a fixture spawned per test pays it
 * on every spawn). {@code Main} names this class in SLF4J's {@code slf4j.provider} property,
 * unless a configuration of the user's own is asked for ({@code -Dlogback.configurationFile},
 * or {@code slf4j.provider} already set), which then goes through logback's usual path.
 */
public final class StderrLoggingProvider implements SLF4JServiceProvider {

    /** SLF4J's system property that names the provider to use without looking for one. */
    public static final String PROVIDER_PROPERTY = "slf4j.provider";
    /** SLF4J's system property for the level of its own messages on stderr. */
    static final String VERBOSITY_PROPERTY = "slf4j.internal.verbosity";

    private final LoggerContext context = new LoggerContext();
    private final IMarkerFactory markers = new BasicMarkerFactory();
    private final LogbackMDCAdapter mdc = new LogbackMDCAdapter();

    /** For SLF4J, which makes it from {@link #PROVIDER_PROPERTY}. */
    public StderrLoggingProvider() {
    }

    /**
     * Names this provider in {@link #PROVIDER_PROPERTY}, unless the user chose a provider or a
     * logback configuration file of their own. Call before the first logger is asked for.
     */
    public static void install() {
        if (System.getProperty(PROVIDER_PROPERTY) == null && System.getProperty("logback.configurationFile") == null) {
            System.setProperty(PROVIDER_PROPERTY, StderrLoggingProvider.class.getName());
            if (System.getProperty(VERBOSITY_PROPERTY) == null) {
                // SLF4J says at INFO on stderr that it loads the provider named: not worth a line on every run.
                System.setProperty(VERBOSITY_PROPERTY, "WARN");
            }
        }
    }

    @Override
    public ILoggerFactory getLoggerFactory() {
        return context;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
        return markers;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
        return mdc;
    }

    @Override
    public String getRequestedApiVersion() {
        return "2.0.99";
    }

    @Override
    public void initialize() {
        context.setName("default");
        context.setMDCAdapter(mdc);
        StderrLogging configurator = new StderrLogging();
        configurator.setContext(context);
        if (configurator.configure(context) != ch.qos.logback.classic.spi.Configurator.ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY) {
            // It stood aside for a configuration of the user's own (a logback-test.xml): logback's usual search.
            try {
                new ch.qos.logback.classic.util.ContextInitializer(context).autoConfig();
            } catch (ch.qos.logback.core.joran.spi.JoranException e) {
                org.slf4j.helpers.Reporter.error("mcp-chaos: the logback configuration cannot be read", e);
            }
        }
        context.start();
    }
}
