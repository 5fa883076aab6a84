package dev.mcpchaos.server;

import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.FaultListener;
import dev.mcpchaos.rules.RuleEngine;
import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.control.ControlServer;
import dev.mcpchaos.server.events.EventLog;
import dev.mcpchaos.server.metrics.ProxyMetrics;
import dev.mcpchaos.server.traffic.TrafficLog;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What both proxy builders put in front of the transport: the metrics, the traffic log, the rule
 * engine and the user's own interceptors, in that order (the metrics and the log then show
 * messages as they arrived); and the transport observer and control endpoint that go with them.
 */
final class InterceptorSetup {

    private final List<FrameInterceptor> extra = new ArrayList<>();
    private final List<FaultListener> faultListeners = new ArrayList<>();
    private int trafficChars = -1;
    private RuleSet rules;
    private Long seed;
    private MeterRegistry registry;
    private InetSocketAddress control;
    private ProxyMetrics metrics;
    private EventLog events;
    private AutoCloseable ownedBinders;

    void logTraffic(int maxChars) {
        this.trafficChars = maxChars;
    }

    void interceptor(FrameInterceptor interceptor) {
        extra.add(Objects.requireNonNull(interceptor, "interceptor"));
    }

    void rules(RuleSet rules) {
        this.rules = Objects.requireNonNull(rules, "rules");
    }

    void seed(long seed) {
        this.seed = seed;
    }

    void faultListener(FaultListener listener) {
        faultListeners.add(Objects.requireNonNull(listener, "listener"));
    }

    void metrics(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    void events(EventLog log) {
        this.events = Objects.requireNonNull(log, "log");
    }

    void control(InetSocketAddress address) {
        this.control = Objects.requireNonNull(address, "address");
    }

    /**
     * The interceptors, in order, for a proxy on {@code transport}.
     *
     * @throws RuleFileException when a rule cannot work on that transport
     */
    List<FrameInterceptor> build(TransportKind transport) {
        if (control != null && registry == null) {
            registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            ownedBinders = ProxyMetrics.bindJvmAndNetty(registry);
        }
        if (control != null && !(registry instanceof PrometheusMeterRegistry)) {
            throw new IllegalStateException("metrics: " + registry.getClass().getSimpleName()
                    + " (expected: a PrometheusMeterRegistry, to serve /metrics on the control endpoint)");
        }
        metrics = registry != null ? new ProxyMetrics(registry) : null;
        RuleEngine engine = null;
        if (rules != null) {
            RuleEngine.Builder chaos = RuleEngine.builder(rules).transport(transport);
            if (seed != null) {
                chaos.seed(seed);
            }
            if (metrics != null) {
                chaos.listener(metrics.faultListener());
            }
            if (events != null) {
                chaos.listener(events);
            }
            faultListeners.forEach(chaos::listener);
            engine = chaos.build(); // logs the seed it uses
        }
        List<FrameInterceptor> all = new ArrayList<>();
        if (metrics != null) {
            all.add(metrics.interceptor());
        }
        if (events != null) {
            all.add(events);
        }
        if (trafficChars >= 0) {
            all.add(new TrafficLog(trafficChars));
        }
        if (engine != null) {
            all.add(engine);
        }
        all.addAll(extra);
        return all;
    }

    /** What the transport reports sessions, limit breaches and upstream failures to; after {@link #build}. */
    TransportObserver observer(TransportKind transport) {
        TransportObserver fromMetrics = metrics != null ? metrics.observer(transport) : TransportObserver.NONE;
        return events == null ? fromMetrics : Observers.both(fromMetrics, events);
    }

    /**
     * Starts the control endpoint when one was asked for; after {@link #build}.
     *
     * @return the running endpoint, or null
     * @throws IOException when its address cannot be bound
     */
    ControlServer startControl() throws IOException {
        return control != null ? ControlServer.start(control, (PrometheusMeterRegistry) registry) : null;
    }

    /** Closes the control endpoint (may be null), the event log and the meter binders made here. */
    void close(ControlServer server) {
        if (events != null) {
            events.close();
        }
        if (server != null) {
            server.close();
        }
        if (ownedBinders != null) {
            try {
                ownedBinders.close();
            } catch (Exception ignored) {
                // only the GC notification listeners: nothing to do about it
            }
            ownedBinders = null;
        }
    }
}
