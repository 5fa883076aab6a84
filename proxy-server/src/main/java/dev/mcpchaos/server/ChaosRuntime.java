package dev.mcpchaos.server;

import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.RuleEngine;
import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.rules.fault.ConnectionHttpActions;
import dev.mcpchaos.rules.journal.JournalRing;
import dev.mcpchaos.server.check.RefereeInterceptor;
import dev.mcpchaos.server.control.ControlServer;
import dev.mcpchaos.server.control.OperationsServer;
import dev.mcpchaos.server.control.RuleFileWatcher;
import dev.mcpchaos.server.events.EventLog;
import dev.mcpchaos.server.events.EventRing;
import dev.mcpchaos.server.journal.JournalRecorder;
import dev.mcpchaos.server.metrics.ProxyMetrics;
import dev.mcpchaos.server.record.Recorder;
import dev.mcpchaos.server.traffic.TrafficLog;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The running services of one proxy, made from its {@link ChaosSettings} when it starts: what is
 * put in front of the transport (the referee, the metrics, the event log, the traffic log, the
 * journal, the recorder, the rule engine and the user's own interceptors, in that order: the
 * metrics and the logs then show messages as they arrived), and what goes with them (the
 * transport observer, the control endpoint, the operations listener, the watcher of the rule
 * file). Closed once, with the proxy ({@link RunningBase}).
 *
 * <p>There is always a rule engine, with no rules when none were given, so that rules can be
 * added while running (the control API, {@link #engine()}).
 */
final class ChaosRuntime {

    private final ChaosSettings settings;
    private final TransportKind transport;
    /** The registry the meters go to: the settings', or one made here for a listener; null: none. */
    private MeterRegistry registry;
    private ProxyMetrics metrics;
    private EventLog events;
    private RuleEngine engine;
    private AutoCloseable ownedBinders;
    private ControlServer controlServer;
    private RuleFileWatcher watcher;
    private JournalRecorder journal;
    private Recorder recorder;
    private RefereeInterceptor refereeInterceptor;
    private OperationsServer operationsServer;
    /** What the operations listener's /ready answers; set once the transport listens. */
    private volatile OperationsServer.Readiness readiness = () -> "starting: the proxy does not listen yet";
    /** Closed last, or when the start fails: an upstream the builder started for this proxy (a replay). */
    private final AutoCloseable owned;
    private List<FrameInterceptor> chain;

    private ChaosRuntime(ChaosSettings settings, TransportKind transport, AutoCloseable owned) {
        this.settings = settings;
        this.transport = transport;
        this.owned = owned;
        this.registry = settings.registry;
    }

    /**
     * Builds the chain the settings describe for a proxy on {@code transport} and starts what goes
     * with it (the control endpoint, the operations listener, the watcher of the rule file); the
     * transport comes next, through {@link #startTransport}.
     *
     * @param owned closed with the proxy, or when it fails to start; null for none
     * @throws ProxyStartException when a rule cannot work on the transport ({@code RULES}), a
     *         setting cannot be used ({@code CONFIGURATION}), or an address cannot be bound
     *         ({@code ADDRESS}); nothing is left running then
     */
    static ChaosRuntime start(ChaosSettings settings, TransportKind transport, AutoCloseable owned) {
        ChaosRuntime runtime = check(settings, transport, owned);
        runtime.complete();
        return runtime;
    }

    /**
     * Does what may refuse the settings, and leaves the rest for {@link #complete}, so that a
     * transport can start its server in between (stdio: the server's start-up then overlaps the
     * building of the chain, its rule engine and meters, instead of waiting for it). What may
     * refuse is a rule that cannot work on the transport, and, when the settings ask for them,
     * an address to bind, a recording to open, a rule file to watch: with any of those the chain
     * is built and the services started here, as by {@link #start}, since they need the chain's
     * engine, meters and journal.
     *
     * @throws ProxyStartException as {@link #start}; nothing is left running then
     */
    static ChaosRuntime check(ChaosSettings settings, TransportKind transport, AutoCloseable owned) {
        ChaosRuntime runtime = new ChaosRuntime(settings, transport, owned);
        try {
            if (!runtime.startsServices()) {
                runtime.checkRules();
                return runtime;
            }
            runtime.chain = runtime.buildOrRefuse();
        } catch (RuntimeException e) {
            runtime.closeOwned(); // nothing else runs yet
            throw e;
        }
        runtime.startServicesOrRefuse();
        return runtime;
    }

    /** Whether the settings ask for what is bound, opened or watched before the transport starts. */
    private boolean startsServices() {
        ChaosSettings s = settings;
        return s.control != null || s.operations != null || s.recording != null || s.rulesFile != null && s.watchRules;
    }

    /** The one refusal {@link #build} can meet without services: a rule that cannot work on the transport. */
    private void checkRules() {
        if (settings.rules != null) {
            try {
                settings.rules.checkTransport(transport);
            } catch (RuleFileException e) {
                throw new ProxyStartException(ProxyStartException.Reason.RULES, e.getMessage(), e);
            }
        }
    }

    /**
     * Builds what {@link #check} left for later: the chain and what goes with it. Nothing is left
     * to refuse by then but an unforeseen failure, still a {@link ProxyStartException}.
     */
    void complete() {
        if (chain == null) {
            chain = buildOrRefuse();
        }
    }

    /** The interceptors, in order, once {@link #complete complete}. */
    List<FrameInterceptor> chain() {
        return chain;
    }

    /** Starts a transport, given the chain and the observer; turns its own failures into a {@link ProxyStartException}. */
    @FunctionalInterface
    interface TransportStart<P> {
        P start(List<FrameInterceptor> chain, TransportObserver observer);
    }

    /** Starts the transport behind this chain; when that fails, stops everything else too. */
    <P> P startTransport(TransportStart<P> start) {
        return startTransport(() -> {
            complete();
            return start.start(chain, observer());
        });
    }

    /**
     * Starts a transport that calls {@link #complete} itself, such as after starting its server;
     * when that fails, stops everything else too.
     */
    <P> P startTransport(Supplier<P> start) {
        try {
            return start.get();
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * The interceptors, in order.
     *
     * @throws RuleFileException when a rule cannot work on the transport
     * @throws IllegalArgumentException when the control endpoint would listen beyond loopback
     *                                  without a token
     */
    private List<FrameInterceptor> build() {
        ChaosSettings s = settings;
        if (s.control != null) {
            ControlServer.requireTokenBeyondLoopback(s.control, s.controlToken);
        }
        if (s.control != null || s.operations != null) {
            if (registry == null) {
                registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
                ownedBinders = ProxyMetrics.bindJvmAndNetty(registry);
            }
            if (!(registry instanceof PrometheusMeterRegistry)) {
                throw new IllegalStateException("metrics: " + registry.getClass().getSimpleName()
                        + " (expected: a PrometheusMeterRegistry, to serve /metrics on the control endpoint or the "
                        + "operations listener)");
            }
        }
        metrics = registry != null ? new ProxyMetrics(registry) : null;
        if (s.eventsOut != null || s.control != null) {
            events = new EventLog(s.eventsOut, s.closeEventsOut, s.control != null
                    ? new EventRing(EventRing.DEFAULT_CAPACITY) : null);
        }
        RuleEngine.Builder chaos = RuleEngine.builder(s.rules != null ? s.rules : RuleSet.of("no rules", List.of()))
                .transport(transport);
        if (s.seed != null) {
            chaos.seed(s.seed);
        }
        if (metrics != null) {
            chaos.listener(metrics.faultListener()).rulesListener(metrics.rulesListener());
        }
        if (events != null) {
            chaos.listener(events).rulesListener(events);
        }
        if (s.journalCapacity > 0) {
            journal = new JournalRecorder(new JournalRing(s.journalCapacity), s.journalContent);
            chaos.listener(journal.faults()).httpActions(journal.httpActions(ConnectionHttpActions.INSTANCE));
        }
        s.faultListeners.forEach(chaos::listener);
        if (s.referee != null) {
            refereeInterceptor = new RefereeInterceptor(s.referee);
            chaos.listener(refereeInterceptor.faults()); // what the rules did is no peer's violation
        }
        engine = chaos.build(); // logs the seed it uses
        if (metrics != null) {
            metrics.rulesListener().rulesChanged("start", engine.ruleSet(), engine.faultsEnabled());
        }
        if (s.recording != null) {
            // Once the rules are known good: it starts a thread.
            recorder = new Recorder(s.recording, transport, s.serverVariables);
        }
        List<FrameInterceptor> all = new ArrayList<>();
        if (s.referee != null) {
            if (journal != null) {
                JournalRing ring = journal.journal();
                s.referee.judgeClientsBy(ring::snapshot); // the client.* checks need what the faults did
            }
            all.add(refereeInterceptor); // first: it sees what the peers sent, before any rule
        }
        if (metrics != null) {
            all.add(metrics.interceptor());
        }
        if (events != null) {
            all.add(events);
        }
        if (s.trafficChars >= 0) {
            all.add(new TrafficLog(s.trafficChars));
        }
        if (journal != null) {
            all.add(journal.arrivals()); // the journal sees messages as they arrived, then what the rules let out
        }
        if (recorder != null && !s.recording.isAfterFaults()) {
            all.add(recorder); // what the peers sent
        }
        all.add(engine);
        if (refereeInterceptor != null) {
            all.add(refereeInterceptor.departures()); // what reached each peer: the receiver is judged on that
        }
        if (journal != null) {
            all.add(journal.departures());
        }
        all.addAll(s.extra);
        if (recorder != null && s.recording.isAfterFaults()) {
            all.add(recorder); // what the peers got
        }
        return all;
    }

    /**
     * {@link #build}, with its failures as a {@link ProxyStartException}: a rule that cannot work
     * on the transport ({@code RULES}), a setting that cannot be used ({@code CONFIGURATION}).
     */
    private List<FrameInterceptor> buildOrRefuse() {
        try {
            return build();
        } catch (RuleFileException e) {
            throw new ProxyStartException(ProxyStartException.Reason.RULES, e.getMessage(), e);
        } catch (IllegalArgumentException | IllegalStateException | java.io.UncheckedIOException e) {
            // UncheckedIOException: the --record target cannot be written
            throw new ProxyStartException(ProxyStartException.Reason.CONFIGURATION, e.getMessage(), e);
        }
    }

    /** The rule engine. */
    RuleEngine engine() {
        return engine;
    }

    /** The journal, or null when it is off. */
    JournalRing journal() {
        return journal != null ? journal.journal() : null;
    }

    /** The registry the meters go to, or null. */
    MeterRegistry registry() {
        return registry;
    }

    /** The event log, or null. */
    EventLog events() {
        return events;
    }

    /** What /ready answers from now on. */
    void readiness(OperationsServer.Readiness readiness) {
        this.readiness = Objects.requireNonNull(readiness, "readiness");
    }

    /** What the transport reports sessions, limit breaches and upstream failures to, once {@link #complete complete}. */
    TransportObserver observer() {
        TransportObserver fromMetrics = metrics != null ? metrics.observer(transport) : TransportObserver.NONE;
        TransportObserver observer = events == null ? fromMetrics : Observers.both(fromMetrics, events);
        if (journal != null) {
            observer = Observers.both(observer, journal.transportObserver()); // a message its client left
        }
        return settings.referee == null ? observer : Observers.both(observer, settings.referee.transportObserver());
    }

    /**
     * Starts the control endpoint when one was asked for, the operations listener, and the watcher
     * of the rule file. On failure, what was started is stopped again.
     *
     * @throws ProxyStartException when an address cannot be bound ({@code ADDRESS}), or the file
     *                             cannot be watched ({@code CONFIGURATION})
     */
    private void startServicesOrRefuse() {
        ChaosSettings s = settings;
        try {
            if (s.control != null) {
                try {
                    ControlServer.Builder server = ControlServer.builder(s.control, (PrometheusMeterRegistry) registry,
                                    engine, transport)
                            .events(events.ring())
                            .journal(journal())
                            .referee(s.referee)
                            .token(s.controlToken)
                            .seedSource(s.seedSource());
                    if (s.controlHeadTimeout != null) {
                        server.headTimeout(s.controlHeadTimeout);
                    }
                    if (s.controlBodyTimeout != null) {
                        server.bodyTimeout(s.controlBodyTimeout);
                    }
                    controlServer = server.start();
                } catch (IOException e) {
                    throw new ProxyStartException(ProxyStartException.Reason.ADDRESS, e.getMessage(), e);
                }
            }
            if (s.operations != null) {
                try {
                    operationsServer = OperationsServer.start(s.operations, (PrometheusMeterRegistry) registry,
                            () -> readiness.notReadyBecause());
                } catch (IOException e) {
                    throw new ProxyStartException(ProxyStartException.Reason.ADDRESS, e.getMessage(), e);
                }
            }
            if (s.rulesFile != null && s.watchRules) {
                try {
                    watcher = RuleFileWatcher.start(s.rulesFile, engine, events);
                } catch (IOException e) {
                    throw new ProxyStartException(ProxyStartException.Reason.CONFIGURATION, e.getMessage(), e);
                }
            }
        } catch (IllegalArgumentException e) {
            close();
            throw new ProxyStartException(ProxyStartException.Reason.CONFIGURATION, e.getMessage(), e);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Where the control endpoint listens, or null. */
    InetSocketAddress controlAddress() {
        return controlServer != null ? controlServer.address() : null;
    }

    /** Where the operations listener listens, or null. */
    InetSocketAddress operationsAddress() {
        return operationsServer != null ? operationsServer.address() : null;
    }

    /**
     * Stops the watcher and the control endpoint, closes the event log and the meter binders made
     * here, then what the proxy owns (after the transport: its upstream).
     */
    void close() {
        if (refereeInterceptor != null) {
            refereeInterceptor.close(); // checks what is queued, reports what is unanswered
            refereeInterceptor = null;
        }
        if (recorder != null) {
            recorder.close(); // writes what is queued
            recorder = null;
        }
        if (watcher != null) {
            watcher.close();
            watcher = null;
        }
        if (events != null) {
            events.close();
        }
        if (controlServer != null) {
            controlServer.close();
            controlServer = null;
        }
        if (operationsServer != null) {
            operationsServer.close();
            operationsServer = null;
        }
        if (ownedBinders != null) {
            try {
                ownedBinders.close();
            } catch (Exception ignored) {
                // only the GC notification listeners: nothing to do about it
            }
            ownedBinders = null;
        }
        closeOwned();
    }

    private void closeOwned() {
        if (owned != null) {
            try {
                owned.close();
            } catch (Exception e) {
                org.slf4j.LoggerFactory.getLogger(ChaosRuntime.class).debug("closing the upstream: {}", e.toString());
            }
        }
    }
}
