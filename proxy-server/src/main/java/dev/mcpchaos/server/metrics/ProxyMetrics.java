package dev.mcpchaos.server.metrics;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.FaultListener;
import java.util.List;
import java.util.ArrayList;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.MultiGauge;
import dev.mcpchaos.rules.RulesListener;
import dev.mcpchaos.rules.Rule;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.netty4.NettyAllocatorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.netty.buffer.PooledByteBufAllocator;

import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Every meter mcp-chaos publishes, and the one place that creates them (see {@code docs/metrics.md}).
 * Names are dotted and lowercase in code ({@code mcp.chaos.messages}); the Prometheus registry
 * shows them as {@code mcp_chaos_messages_total}. Every tag value comes from a bounded set: a
 * method outside the MCP methods below is {@value #OTHER}, a message without one is {@value #NONE}.
 *
 * <p>One instance per {@link MeterRegistry}; it may serve several proxies. Thread-safe: the
 * meter caches are concurrent maps whose keys come from bounded sets.
 *
 * <pre>{@code
 * ProxyMetrics metrics = new ProxyMetrics(registry);
 * chain.add(metrics.interceptor());          // first, so it sees messages as they arrived
 * proxy.observer(metrics.observer(TransportKind.STDIO));
 * engine.listener(metrics.faultListener());
 * }</pre>
 */
public final class ProxyMetrics {

    /** Counter: JSON-RPC messages seen; tags transport, direction, kind, method. */
    public static final String MESSAGES = "mcp.chaos.messages";
    /** Counter (bytes): message bytes seen, framing excluded; tags transport, direction. */
    public static final String BYTES = "mcp.chaos.bytes";
    /** Counter: faults the rules injected; tags rule, fault. */
    public static final String FAULTS_INJECTED = "mcp.chaos.faults.injected";
    /** Timer with a percentile histogram: a request to its response, as the proxy saw them; tags transport, method. */
    public static final String REQUEST_DURATION = "mcp.chaos.request.duration";
    /** Gauge: sessions in progress; tag transport. */
    public static final String SESSIONS_ACTIVE = "mcp.chaos.sessions.active";
    /** Counter: sessions the proxy forgot of its own accord (idle too long, or evicted from a full table); tags transport, reason. */
    public static final String SESSIONS_EXPIRED = "mcp.chaos.sessions.expired";
    /** Counter: messages that are not well-formed JSON; tags transport, direction, reason. */
    public static final String PARSE_ERRORS = "mcp.chaos.parse.errors";
    /** Counter: limits breached (line length, body size, ...); tags transport, limit. */
    public static final String LIMIT_BREACHES = "mcp.chaos.limit.breaches";
    /** Counter: upstream failures; tags transport, reason. */
    public static final String UPSTREAM_ERRORS = "mcp.chaos.upstream.errors";
    /** Counter: client connections that missed a deadline (answered 408 or closed); tags transport, phase. */
    public static final String CLIENT_TIMEOUTS = "mcp.chaos.client.timeouts";
    /** Counter: messages let through that could not be delivered (their client went away); tags transport, direction, reason. */
    public static final String MESSAGES_DISCARDED = "mcp.chaos.messages.discarded";
    /** Counter: control API connections closed because a request phase took too long; tag phase (head, body, send). */
    public static final String CONTROL_TIMEOUTS = "mcp.chaos.control.timeouts";
    /** Counter: operations listener connections closed because a request phase took too long; tag phase (head, body, send). */
    public static final String OPERATIONS_TIMEOUTS = "mcp.chaos.operations.timeouts";
    /** Gauge: 1 while the HTTP proxy drains on its way down (SIGTERM), else 0. */
    public static final String DRAINING = "mcp.chaos.draining";
    /** Gauge: 1 while faults are on, 0 while the panic switch has them off. */
    public static final String FAULTS_ENABLED = "mcp.chaos.faults.enabled";
    /**
     * Gauge: one series per rule in force, 1 when the rule is enabled, 0 when not; tag rule. A rule
     * removed loses its series, so an alert on a rule left on reads this, not the injections.
     */
    public static final String RULES_ENABLED = "mcp.chaos.rules.enabled";
    /**
     * Counter: exchanges (requests and SSE streams) in flight when a drain began, by how each
     * ended; tag outcome (finished: within the drain timeout; ended: an SSE stream ended by the
     * proxy with a final comment; answered: answered 503 before the upstream did; cut: closed).
     */
    public static final String DRAIN_EXCHANGES = "mcp.chaos.drain.exchanges";

    /** The method tag of a message whose method is not one of {@link #KNOWN_METHODS}. */
    public static final String OTHER = "other";
    /** The method tag of a message with no method (a batch, a malformed line, a response to an unseen request). */
    public static final String NONE = "none";
    /** The parse error reason of a {@link MessageKind#MALFORMED} message. */
    public static final String MALFORMED_JSON = "malformed_json";

    /** The MCP methods (2025-11-25 and earlier) that get a method tag of their own. */
    public static final Set<String> KNOWN_METHODS = Set.of(
            "initialize", "ping",
            "tools/list", "tools/call",
            "resources/list", "resources/read", "resources/templates/list",
            "resources/subscribe", "resources/unsubscribe",
            "prompts/list", "prompts/get",
            "completion/complete", "logging/setLevel",
            "sampling/createMessage", "elicitation/create", "roots/list",
            "tasks/get", "tasks/result", "tasks/list", "tasks/cancel",
            "notifications/initialized", "notifications/progress", "notifications/message",
            "notifications/cancelled", "notifications/tools/list_changed",
            "notifications/resources/list_changed", "notifications/resources/updated",
            "notifications/prompts/list_changed", "notifications/roots/list_changed",
            "notifications/elicitation/complete", "notifications/tasks/status");

    static final String[] TRANSPORT_TAGS = tags(TransportKind.values());
    static final String[] DIRECTION_TAGS = tags(Direction.values());
    static final String[] KIND_TAGS = tags(MessageKind.values());

    private final MeterRegistry registry;
    private final ConcurrentHashMap<String, ConcurrentHashMap<String, Counter>> faults = new ConcurrentHashMap<>();
    private final AtomicInteger[] sessions = new AtomicInteger[TransportKind.values().length];
    private final MetricsInterceptor interceptor;

    private final AtomicInteger faultsOn = new AtomicInteger(1);
    private final MultiGauge rulesEnabled;

    public ProxyMetrics(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.interceptor = new MetricsInterceptor(this);
        Gauge.builder(FAULTS_ENABLED, faultsOn, AtomicInteger::get)
                .description("1 while faults are on, 0 while the panic switch has them off").register(registry);
        this.rulesEnabled = MultiGauge.builder(RULES_ENABLED)
                .description("1 for each rule in force that is enabled, 0 for one that is not; tag rule").register(registry);
    }

    public MeterRegistry registry() {
        return registry;
    }

    /**
     * Binds the JVM meters (memory, GC, threads, class loading, processor) and the pooled Netty
     * allocator's to {@code registry}. For a registry made for mcp-chaos; an application that
     * brings its own usually binds these itself.
     *
     * @return closes what needs closing (the GC listener)
     */
    public static AutoCloseable bindJvmAndNetty(MeterRegistry registry) {
        new JvmMemoryMetrics().bindTo(registry);
        JvmGcMetrics gc = new JvmGcMetrics();
        gc.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new NettyAllocatorMetrics(PooledByteBufAllocator.DEFAULT).bindTo(registry);
        return gc;
    }

    /**
     * The interceptor that counts messages and times requests. It only observes: every frame is
     * forwarded untouched. Put it first, so it sees messages as they arrived, before any fault.
     */
    public FrameInterceptor interceptor() {
        return interceptor;
    }

    /**
     * Keeps {@value #FAULTS_ENABLED} and {@value #RULES_ENABLED} up to date; call it once with the
     * rules a proxy starts with, then register it on the engine for every change.
     */
    public RulesListener rulesListener() {
        return (cause, rules, faultsEnabled) -> {
            faultsOn.set(faultsEnabled ? 1 : 0);
            List<MultiGauge.Row<?>> rows = new ArrayList<>();
            for (Rule rule : rules.rules()) {
                rows.add(MultiGauge.Row.of(Tags.of("rule", rule.name()), rule.enabled() ? 1 : 0));
            }
            rulesEnabled.register(rows, true);
        };
    }

    /** Counts faults into {@value #FAULTS_INJECTED}. */
    public FaultListener faultListener() {
        return event -> faultCounter(event.rule(), event.fault()).increment();
    }

    /**
     * Counts sessions, limit breaches and upstream failures of a proxy on {@code transport}, and
     * registers its {@value #SESSIONS_ACTIVE} gauge (at 0).
     */
    public TransportObserver observer(TransportKind transport) {
        sessionsGauge(transport);
        return new MetricsObserver(this);
    }

    AtomicInteger sessionsGauge(TransportKind transport) {
        int i = transport.ordinal();
        synchronized (sessions) {
            if (sessions[i] == null) {
                AtomicInteger value = new AtomicInteger();
                Gauge.builder(SESSIONS_ACTIVE, value, AtomicInteger::get)
                        .description("MCP sessions in progress")
                        .tag("transport", TRANSPORT_TAGS[i])
                        .register(registry);
                sessions[i] = value;
            }
            return sessions[i];
        }
    }

    Counter faultCounter(String rule, String fault) {
        return faults.computeIfAbsent(rule, r -> new ConcurrentHashMap<>())
                .computeIfAbsent(fault, f -> Counter.builder(FAULTS_INJECTED)
                        .description("Faults injected by the chaos rules")
                        .tag("rule", rule).tag("fault", fault)
                        .register(registry));
    }

    Counter messageCounter(int transport, int direction, int kind, String method) {
        return perDirection(MESSAGES, "JSON-RPC messages that reached the proxy, before any fault",
                transport, direction)
                .tag("kind", KIND_TAGS[kind])
                .tag("method", method)
                .register(registry);
    }

    Counter bytesCounter(int transport, int direction) {
        return perDirection(BYTES, "Bytes of the JSON-RPC messages counted in " + MESSAGES + ", framing excluded",
                transport, direction)
                .baseUnit("bytes")
                .register(registry);
    }

    Counter parseErrorCounter(int transport, int direction) {
        return perDirection(PARSE_ERRORS, "Messages that are not well-formed JSON (relayed all the same)",
                transport, direction)
                .tag("reason", MALFORMED_JSON)
                .register(registry);
    }

    /** A counter of messages of one transport and direction: the tags the message counters share. */
    private static Counter.Builder perDirection(String name, String description, int transport, int direction) {
        return Counter.builder(name)
                .description(description)
                .tag("transport", TRANSPORT_TAGS[transport])
                .tag("direction", DIRECTION_TAGS[direction]);
    }

    Timer requestTimer(int transport, String method) {
        return Timer.builder(REQUEST_DURATION)
                .description("From a request reaching the proxy to its response reaching the proxy")
                .publishPercentileHistogram()
                .tag("transport", TRANSPORT_TAGS[transport])
                .tag("method", method)
                .register(registry);
    }

    Counter sessionsExpiredCounter(TransportKind transport, TransportObserver.SessionExpiry reason) {
        return transportCounter(SESSIONS_EXPIRED,
                "Sessions the proxy forgot: idle for the session idle timeout, or evicted as the least "
                        + "recently used from a full table",
                transport, "reason", reason.tag());
    }

    Counter limitCounter(TransportKind transport, TransportObserver.Limit limit) {
        return transportCounter(LIMIT_BREACHES, "Limits breached; the proxy discarded or refused as documented",
                transport, "limit", limit.tag());
    }

    Counter upstreamCounter(TransportKind transport, TransportObserver.UpstreamFailure reason) {
        return transportCounter(UPSTREAM_ERRORS, "Upstream failures: unreachable, timed out, closed, could not start",
                transport, "reason", reason.tag());
    }

    Counter clientTimeoutCounter(TransportKind transport, TransportObserver.ClientDeadline deadline) {
        return transportCounter(CLIENT_TIMEOUTS,
                "Client connections that missed a deadline: request head or body (408), idle, send (closed)",
                transport, "phase", deadline.tag());
    }

    /** A counter of {@code name} for one transport and one more tag: why, or which limit or phase. */
    private Counter transportCounter(String name, String description, TransportKind transport, String key,
                                     String value) {
        return Counter.builder(name)
                .description(description)
                .tag("transport", TRANSPORT_TAGS[transport.ordinal()])
                .tag(key, value)
                .register(registry);
    }

    Counter discardedCounter(TransportKind transport, Direction direction, TransportObserver.DiscardReason reason) {
        return Counter.builder(MESSAGES_DISCARDED)
                .description("Messages let through that could not be delivered: the client went away, the response had ended")
                .tag("transport", TRANSPORT_TAGS[transport.ordinal()])
                .tag("direction", direction.name().toLowerCase(Locale.ROOT))
                .tag("reason", reason.tag())
                .register(registry);
    }

    /** The method tag for {@code method}: itself when it is a known MCP method, else {@value #OTHER}; null is {@value #NONE}. */
    public static String methodTag(String method) {
        if (method == null) {
            return NONE;
        }
        return KNOWN_METHODS.contains(method) ? method : OTHER;
    }

    private static String[] tags(Enum<?>[] values) {
        String[] tags = new String[values.length];
        for (int i = 0; i < values.length; i++) {
            tags[i] = values[i].name().toLowerCase(Locale.ROOT);
        }
        return tags;
    }
}
