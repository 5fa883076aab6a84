package dev.mcpchaos.server.live;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleEngine;
import dev.mcpchaos.rules.RuleStats;
import dev.mcpchaos.server.metrics.ProxyMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The numbers one frame of the live view shows, read at one moment from what the proxy already
 * keeps: the rule engine (uptime, seed, panic switch, per-rule counters), the meters
 * ({@link ProxyMetrics}) and the {@link RecentFaults}.
 *
 * @param uptime how long the proxy has run
 * @param seed the seed of the rules' random choices
 * @param faultsEnabled the panic switch
 * @param toServer messages from the client to the server, as they arrived
 * @param toClient messages from the server to the client, as they arrived
 * @param bytesToServer bytes of {@code toServer}
 * @param bytesToClient bytes of {@code toClient}
 * @param sessions sessions in progress
 * @param rules every rule in force, in file order
 * @param recentFaults the last faults injected, oldest first
 */
record LiveSnapshot(Duration uptime, long seed, boolean faultsEnabled, long toServer, long toClient,
                    long bytesToServer, long bytesToClient, long sessions, List<RuleStats> rules,
                    List<FaultEvent> recentFaults) {

    LiveSnapshot {
        Objects.requireNonNull(uptime, "uptime");
        rules = List.copyOf(rules);
        recentFaults = List.copyOf(recentFaults);
    }

    /** Reads them now. Cheap: a few meter lookups, the engine's counters and a copy of the ring. */
    static LiveSnapshot read(RuleEngine engine, MeterRegistry registry, RecentFaults recent) {
        String c2s = tag(Direction.CLIENT_TO_SERVER);
        String s2c = tag(Direction.SERVER_TO_CLIENT);
        return new LiveSnapshot(engine.uptime(), engine.seed(), engine.faultsEnabled(),
                count(registry, ProxyMetrics.MESSAGES, c2s), count(registry, ProxyMetrics.MESSAGES, s2c),
                count(registry, ProxyMetrics.BYTES, c2s), count(registry, ProxyMetrics.BYTES, s2c),
                (long) registry.find(ProxyMetrics.SESSIONS_ACTIVE).gauges().stream().mapToDouble(Gauge::value).sum(),
                engine.stats(), recent.latest());
    }

    private static long count(MeterRegistry registry, String name, String direction) {
        // Summed over every transport, kind and method the counter is tagged with.
        return (long) registry.find(name).tag("direction", direction).counters().stream()
                .mapToDouble(Counter::count).sum();
    }

    private static String tag(Direction direction) {
        return direction.name().toLowerCase(Locale.ROOT);
    }
}
