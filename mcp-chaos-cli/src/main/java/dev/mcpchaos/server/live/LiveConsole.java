package dev.mcpchaos.server.live;

import dev.mcpchaos.rules.FaultListener;
import dev.mcpchaos.rules.RuleEngine;
import dev.mcpchaos.server.ChaosBuilder;
import dev.mcpchaos.server.metrics.ProxyMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * The live view of a local chaos session, as the {@code stdio} and {@code http} commands show it
 * when stderr is a terminal: a compact block at the bottom of stderr, redrawn every
 * {@value #PERIOD_MILLIS} ms, with uptime, seed, the panic switch, messages per direction (count,
 * rate, bytes), sessions, the busiest rules' matched/injected counts and the last faults. It
 * never writes to stdout.
 *
 * <p>While it is open, {@link System#err} is replaced by a stream that prints above the block,
 * so every log line (logback's console appender writes to whatever {@code System.err} is at the
 * time), every {@code System.err.println} and whatever else the command sends through
 * {@link #stderr()} (the server's stderr, {@code --events -}) appear whole above it instead of
 * tearing it. {@link #close()} puts {@code System.err} back.
 *
 * <pre>{@code
 * LiveConsole live = LiveConsole.openIfStderrIsTerminal(controlOn); // null: not a terminal
 * live.applyTo(builder);                  // meters and the fault listener the view reads
 * builder.serverErrorOutput(live.stderr());
 * try (var proxy = builder.start()) {
 *     live.start(proxy.rules());
 *     ...
 * } finally {
 *     live.close();                        // the last block stays; the cursor on a fresh line
 * }
 * }</pre>
 *
 * <p>Not for embedded proxies: it takes over the process's {@code System.err}.
 */
public final class LiveConsole implements AutoCloseable {

    static final long PERIOD_MILLIS = 250;
    /** How many of the last faults are shown. */
    static final int RECENT_FAULTS = 5;
    /** The terminal's width when {@code COLUMNS} does not say (Java cannot ask the terminal). */
    static final int DEFAULT_WIDTH = 80;

    private final LiveView view;
    private final MeterRegistry registry;
    private final AutoCloseable binders;
    private final RecentFaults recent = new RecentFaults(RECENT_FAULTS);
    private final PrintStream stderr;
    private final PrintStream originalErr;
    private boolean closed;

    private LiveConsole(OutputStream terminal, int width, boolean prometheus, LongSupplier nanoTime) {
        this.view = new LiveView(terminal, width, nanoTime);
        if (prometheus) {
            // The control endpoint serves this registry's /metrics: the same meters it would have made itself.
            PrometheusMeterRegistry p = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            this.registry = p;
            this.binders = ProxyMetrics.bindJvmAndNetty(p);
        } else {
            this.registry = new SimpleMeterRegistry();
            this.binders = null;
        }
        this.stderr = new PrintStream(view.logs(), true, StandardCharsets.UTF_8);
        this.originalErr = System.err;
        System.setErr(stderr);
    }

    /**
     * Opens a live view on this process's stderr when it is a terminal (see {@link TerminalDetector}),
     * and points {@link System#err} at it; else returns null and changes nothing.
     *
     * @param prometheus whether the proxy serves the control endpoint, which needs a Prometheus registry
     */
    public static LiveConsole openIfStderrIsTerminal(boolean prometheus) {
        if (!TerminalDetector.system().stderrIsTerminal()) {
            return null;
        }
        return open(new FileOutputStream(FileDescriptor.err), width(System.getenv("COLUMNS")), prometheus,
                System::nanoTime);
    }

    /** Opens a live view on {@code terminal}, whatever it is, and points {@link System#err} at it. */
    static LiveConsole open(OutputStream terminal, int width, boolean prometheus, LongSupplier nanoTime) {
        return new LiveConsole(Objects.requireNonNull(terminal, "terminal"), width, prometheus, nanoTime);
    }

    /** The width {@code COLUMNS} gives, or {@value #DEFAULT_WIDTH}. */
    static int width(String columns) {
        try {
            int n = columns == null ? DEFAULT_WIDTH : Integer.parseInt(columns.trim());
            return n >= 20 ? n : DEFAULT_WIDTH;
        } catch (NumberFormatException e) {
            return DEFAULT_WIDTH;
        }
    }

    /** Gives the proxy the meter registry and the fault listener the view reads from. */
    public void applyTo(ChaosBuilder<?> builder) {
        builder.metrics(registry).faultListener(recent);
    }

    /** The registry the proxy must publish its meters to: a Prometheus one when asked for. */
    public MeterRegistry registry() {
        return registry;
    }

    /** The listener that keeps the last faults (it only stores them in a fixed ring: fine on an event loop). */
    public FaultListener faultListener() {
        return recent;
    }

    /** A stream for the terminal that prints above the view: for the server's stderr, the event log on stderr. */
    public PrintStream stderr() {
        return stderr;
    }

    /** Starts drawing, with the numbers of this running proxy's rules and of the {@link #registry()}. */
    public void start(RuleEngine engine) {
        Objects.requireNonNull(engine, "engine");
        view.start(() -> LiveSnapshot.read(engine, registry, recent), Duration.ofMillis(PERIOD_MILLIS));
    }

    /**
     * Draws the final numbers, which stay on screen, leaves the cursor on a fresh line, and puts
     * {@link System#err} (and {@link System#out}, if it had been pointed here) back as they were.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        view.close();
        if (System.err == stderr) {
            System.setErr(originalErr);
        }
        if (System.out == stderr) {
            System.setOut(originalErr);
        }
        if (binders != null) {
            try {
                binders.close();
            } catch (Exception ignored) {
                // only the GC notification listeners: nothing to do about it
            }
        }
    }
}
