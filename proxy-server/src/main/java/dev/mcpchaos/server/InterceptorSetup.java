package dev.mcpchaos.server;

import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.FaultListener;
import dev.mcpchaos.rules.RuleEngine;
import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.rules.fault.ConnectionHttpActions;
import dev.mcpchaos.rules.journal.JournalRing;
import dev.mcpchaos.server.check.Referee;
import dev.mcpchaos.server.check.RefereeInterceptor;
import dev.mcpchaos.server.control.ControlServer;
import dev.mcpchaos.server.control.OperationsServer;
import dev.mcpchaos.server.control.RuleFileWatcher;
import dev.mcpchaos.server.events.EventLog;
import dev.mcpchaos.server.events.EventRing;
import dev.mcpchaos.server.journal.JournalRecorder;
import dev.mcpchaos.server.metrics.ProxyMetrics;
import dev.mcpchaos.server.record.Recorder;
import dev.mcpchaos.server.record.Recording;
import dev.mcpchaos.server.traffic.TrafficLog;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What both proxy builders put in front of the transport: the metrics, the event log, the traffic
 * log, the rule engine and the user's own interceptors, in that order (the metrics and the logs
 * then show messages as they arrived); and what goes with them: the transport observer, the
 * control endpoint and the watcher of the rule file.
 *
 * <p>There is always a rule engine, with no rules when none were given, so that rules can be
 * added while running (the control API, {@link #engine()}).
 */
final class InterceptorSetup {

    private final List<FrameInterceptor> extra = new ArrayList<>();
    private final List<FaultListener> faultListeners = new ArrayList<>();
    private int trafficChars = -1;
    private RuleSet rules;
    private Path rulesFile;
    private boolean watchRules = true;
    private Long seed;
    private MeterRegistry registry;
    private InetSocketAddress control;
    private String controlToken;
    /**
     * Null for the control server's defaults. Not read from {@link ControlServer} here: its class
     * initialization builds a JSON mapper (jackson-databind's first, with its date formats and
     * locale data), which cost a stdio proxy with no control endpoint 20-40 ms of start-up.
     */
    private Duration controlHeadTimeout;
    private Duration controlBodyTimeout;
    private OutputStream eventsOut;
    private boolean closeEventsOut;
    private ProxyMetrics metrics;
    private EventLog events;
    private RuleEngine engine;
    private AutoCloseable ownedBinders;
    private ControlServer controlServer;
    private RuleFileWatcher watcher;
    private int journalCapacity = JournalRing.DEFAULT_CAPACITY;
    private boolean journalContent;
    private JournalRecorder journal;
    private Recording recording;
    /** The variables a stdio server is given on top of what it inherits: --redact-env looks there too. */
    private final Map<String, String> serverVariables = new LinkedHashMap<>();
    private Recorder recorder;
    private Referee referee;
    private RefereeInterceptor refereeInterceptor;
    private InetSocketAddress operations;
    private OperationsServer operationsServer;
    /** What the operations listener's /ready answers; the transport's builder sets it once it listens. */
    private volatile OperationsServer.Readiness readiness = () -> "starting: the proxy does not listen yet";
    private String seedSource;

    /** Checks the traffic with {@code referee} (see {@link RefereeInterceptor}); first in the chain. */
    void check(Referee referee) {
        this.referee = Objects.requireNonNull(referee, "referee");
    }

    /** Records the traffic into a cassette (see {@link Recorder}); before the rules unless it says after. */
    void record(Recording recording) {
        this.recording = Objects.requireNonNull(recording, "recording");
    }

    /** Variables the server is given on top of the environment it inherits (stdio's {@code -e}). */
    void serverVariables(Map<String, String> variables) {
        serverVariables.putAll(variables);
    }

    void logTraffic(int maxChars) {
        this.trafficChars = maxChars;
    }

    void interceptor(FrameInterceptor interceptor) {
        extra.add(Objects.requireNonNull(interceptor, "interceptor"));
    }

    void rules(RuleSet rules) {
        this.rules = Objects.requireNonNull(rules, "rules");
        this.rulesFile = null;
    }

    /** Rules from a file: loaded now, and watched once started if {@link #watchRules} says so. */
    void rules(Path file) {
        this.rules = RuleSet.load(file);
        this.rulesFile = file;
    }

    void watchRules(boolean watch) {
        this.watchRules = watch;
    }

    /** The journal's capacity in entries; 0 turns it off. */
    void journal(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("journal capacity: " + capacity + " (expected: >= 1, or 0 for off)");
        }
        this.journalCapacity = capacity;
    }

    void journalContent(boolean keep) {
        this.journalContent = keep;
    }

    void seed(long seed) {
        this.seed = seed;
    }

    /** Where the seed came from, for /status ({@code given}, {@code env:POD_NAME}); default {@code given}. */
    void seedSource(String source) {
        this.seedSource = Objects.requireNonNull(source, "source");
    }

    /** Where the run's seed came from: as set, else given, from the rule file, or generated. */
    String seedSource() {
        if (seed != null) {
            return seedSource != null ? seedSource : "given";
        }
        return rules != null && rules.seed().isPresent() ? "file" : "generated";
    }

    void operations(InetSocketAddress address) {
        this.operations = Objects.requireNonNull(address, "address");
    }

    /** What /ready answers from now on. */
    void readiness(OperationsServer.Readiness readiness) {
        this.readiness = Objects.requireNonNull(readiness, "readiness");
    }

    /** The registry the meters go to, or null; after {@link #build}. */
    MeterRegistry registry() {
        return registry;
    }

    /** The event log, or null; after {@link #build}. */
    EventLog events() {
        return events;
    }

    /** Where the operations listener listens, or null. */
    InetSocketAddress operationsAddress() {
        return operationsServer != null ? operationsServer.address() : null;
    }

    void faultListener(FaultListener listener) {
        faultListeners.add(Objects.requireNonNull(listener, "listener"));
    }

    void metrics(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    void events(OutputStream out, boolean closeOut) {
        this.eventsOut = Objects.requireNonNull(out, "out");
        this.closeEventsOut = closeOut;
    }

    void control(InetSocketAddress address) {
        this.control = Objects.requireNonNull(address, "address");
    }

    void controlToken(String token) {
        Objects.requireNonNull(token, "token");
        if (token.isBlank()) {
            throw new IllegalArgumentException("control token: '' (expected: a secret that is not empty)");
        }
        this.controlToken = token;
    }

    void controlHeadTimeout(Duration timeout) {
        this.controlHeadTimeout = requirePositive(timeout, "control head timeout");
    }

    void controlBodyTimeout(Duration timeout) {
        this.controlBodyTimeout = requirePositive(timeout, "control body timeout");
    }

    private static Duration requirePositive(Duration timeout, String name) {
        Objects.requireNonNull(timeout, name);
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException(name + ": " + timeout + " (expected: > 0)");
        }
        return timeout;
    }

    /**
     * The interceptors, in order, for a proxy on {@code transport}.
     *
     * @throws RuleFileException when a rule cannot work on that transport
     * @throws IllegalArgumentException when the control endpoint would listen beyond loopback
     *                                  without a token
     */
    List<FrameInterceptor> build(TransportKind transport) {
        if (control != null) {
            ControlServer.requireTokenBeyondLoopback(control, controlToken);
        }
        if (control != null || operations != null) {
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
        if (eventsOut != null || control != null) {
            events = new EventLog(eventsOut, closeEventsOut, control != null ? new EventRing(EventRing.DEFAULT_CAPACITY)
                    : null);
        }
        RuleEngine.Builder chaos = RuleEngine.builder(rules != null ? rules : RuleSet.of("no rules", List.of()))
                .transport(transport);
        if (seed != null) {
            chaos.seed(seed);
        }
        if (metrics != null) {
            chaos.listener(metrics.faultListener()).rulesListener(metrics.rulesListener());
        }
        if (events != null) {
            chaos.listener(events).rulesListener(events);
        }
        if (journalCapacity > 0) {
            journal = new JournalRecorder(new JournalRing(journalCapacity), journalContent);
            chaos.listener(journal.faults()).httpActions(journal.httpActions(ConnectionHttpActions.INSTANCE));
        }
        faultListeners.forEach(chaos::listener);
        if (referee != null) {
            refereeInterceptor = new RefereeInterceptor(referee);
            chaos.listener(refereeInterceptor.faults()); // what the rules did is no peer's violation
        }
        engine = chaos.build(); // logs the seed it uses
        if (metrics != null) {
            metrics.rulesListener().rulesChanged("start", engine.ruleSet(), engine.faultsEnabled());
        }
        if (recording != null) {
            // Once the rules are known good: it starts a thread.
            recorder = new Recorder(recording, transport, serverVariables);
        }
        List<FrameInterceptor> all = new ArrayList<>();
        if (referee != null) {
            if (journal != null) {
                JournalRing ring = journal.journal();
                referee.judgeClientsBy(ring::snapshot); // the client.* checks need what the faults did
            }
            all.add(refereeInterceptor); // first: it sees what the peers sent, before any rule
        }
        if (metrics != null) {
            all.add(metrics.interceptor());
        }
        if (events != null) {
            all.add(events);
        }
        if (trafficChars >= 0) {
            all.add(new TrafficLog(trafficChars));
        }
        if (journal != null) {
            all.add(journal.arrivals()); // the journal sees messages as they arrived, then what the rules let out
        }
        if (recorder != null && !recording.isAfterFaults()) {
            all.add(recorder); // what the peers sent
        }
        all.add(engine);
        if (refereeInterceptor != null) {
            all.add(refereeInterceptor.departures()); // what reached each peer: the receiver is judged on that
        }
        if (journal != null) {
            all.add(journal.departures());
        }
        all.addAll(extra);
        if (recorder != null && recording.isAfterFaults()) {
            all.add(recorder); // what the peers got
        }
        return all;
    }

    /**
     * {@link #build}, with its failures as a {@link ProxyStartException}: a rule that cannot work
     * on the transport ({@code RULES}), a setting that cannot be used ({@code CONFIGURATION}).
     */
    List<FrameInterceptor> buildOrRefuse(TransportKind transport) {
        try {
            return build(transport);
        } catch (RuleFileException e) {
            throw new ProxyStartException(ProxyStartException.Reason.RULES, e.getMessage(), e);
        } catch (IllegalArgumentException | IllegalStateException | java.io.UncheckedIOException e) {
            // UncheckedIOException: the --record target cannot be written
            throw new ProxyStartException(ProxyStartException.Reason.CONFIGURATION, e.getMessage(), e);
        }
    }

    /** The rule engine; after {@link #build}. */
    RuleEngine engine() {
        return engine;
    }

    /** The journal, or null when it is off; after {@link #build}. */
    JournalRing journal() {
        return journal != null ? journal.journal() : null;
    }

    /** What the transport reports sessions, limit breaches and upstream failures to; after {@link #build}. */
    TransportObserver observer(TransportKind transport) {
        TransportObserver fromMetrics = metrics != null ? metrics.observer(transport) : TransportObserver.NONE;
        TransportObserver observer = events == null ? fromMetrics : Observers.both(fromMetrics, events);
        return referee == null ? observer : Observers.both(observer, referee.transportObserver());
    }

    /**
     * Starts the control endpoint when one was asked for, and the watcher of the rule file; after
     * {@link #build}. On failure, what was started is stopped again.
     *
     * @throws ProxyStartException when the control address cannot be bound ({@code ADDRESS}), or
     *                             the file cannot be watched ({@code CONFIGURATION})
     */
    void startServicesOrRefuse(TransportKind transport) {
        try {
            if (control != null) {
                try {
                    ControlServer.Builder server = ControlServer.builder(control, (PrometheusMeterRegistry) registry,
                                    engine, transport)
                            .events(events.ring())
                            .journal(journal())
                            .token(controlToken)
                            .seedSource(seedSource());
                    if (controlHeadTimeout != null) {
                        server.headTimeout(controlHeadTimeout);
                    }
                    if (controlBodyTimeout != null) {
                        server.bodyTimeout(controlBodyTimeout);
                    }
                    controlServer = server.start();
                } catch (IOException e) {
                    throw new ProxyStartException(ProxyStartException.Reason.ADDRESS, e.getMessage(), e);
                }
            }
            if (operations != null) {
                try {
                    operationsServer = OperationsServer.start(operations, (PrometheusMeterRegistry) registry,
                            () -> readiness.notReadyBecause());
                } catch (IOException e) {
                    throw new ProxyStartException(ProxyStartException.Reason.ADDRESS, e.getMessage(), e);
                }
            }
            if (rulesFile != null && watchRules) {
                try {
                    watcher = RuleFileWatcher.start(rulesFile, engine, events);
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

    /** Stops the watcher and the control endpoint, closes the event log and the meter binders made here. */
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
    }
}
