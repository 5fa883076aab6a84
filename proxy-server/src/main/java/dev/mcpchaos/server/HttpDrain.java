package dev.mcpchaos.server;

import dev.mcpchaos.core.transport.http.HttpProxy;
import dev.mcpchaos.server.events.EventLog;
import dev.mcpchaos.server.metrics.ProxyMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;

/**
 * A graceful drain of an HTTP proxy, told to the operator: one INFO line when it begins (what is
 * in flight), one when it ends (what finished and what was cut), an event for each
 * ({@code drain_started}, {@code drain_ended}) and the meters {@value ProxyMetrics#DRAINING} and
 * {@value ProxyMetrics#DRAIN_EXCHANGES}.
 */
final class HttpDrain {

    private static final Logger log = LoggerFactory.getLogger(HttpDrain.class);

    private final HttpProxy proxy;
    private final EventLog events;
    private final Map<HttpProxy.DrainOutcome, Counter> outcomes = new EnumMap<>(HttpProxy.DrainOutcome.class);

    /** Registers the drain's meters now (at 0), so that a scrape shows them before any drain. */
    HttpDrain(HttpProxy proxy, MeterRegistry registry, EventLog events) {
        this.proxy = proxy;
        this.events = events;
        if (registry != null) {
            Gauge.builder(ProxyMetrics.DRAINING, proxy, p -> p.draining() ? 1 : 0)
                    .description("1 while the proxy drains on its way down, else 0")
                    .register(registry);
            for (HttpProxy.DrainOutcome outcome : HttpProxy.DrainOutcome.values()) {
                outcomes.put(outcome, Counter.builder(ProxyMetrics.DRAIN_EXCHANGES)
                        .description("Exchanges in flight when a drain began, by how each ended")
                        .tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
                        .register(registry));
            }
        }
    }

    /** Drains: stops accepting, waits up to {@code timeout} for what is in flight, ends the rest. */
    HttpProxy.DrainReport run(Duration timeout) {
        int inFlight = proxy.beginDrain();
        log.info("draining: no new connections; {} exchange(s) in flight get up to {} ms to finish",
                inFlight, timeout.toMillis());
        if (events != null) {
            events.drainStarted(inFlight, timeout.toMillis());
        }
        HttpProxy.DrainReport report = proxy.finishDrain(timeout);
        for (HttpProxy.DrainOutcome outcome : HttpProxy.DrainOutcome.values()) {
            Counter counter = outcomes.get(outcome);
            if (counter != null) {
                counter.increment(report.count(outcome));
            }
        }
        log.info("drained in {} ms: of {} exchange(s) in flight, {} finished, {} SSE stream(s) ended with a final "
                        + "comment, {} answered 503, {} cut; {} idle connection(s) closed", report.took().toMillis(),
                report.inFlight(), report.finished(), report.ended(), report.answered(), report.cut(),
                report.idleClosed());
        if (events != null) {
            events.drainEnded(report.inFlight(), report.finished(), report.ended(), report.answered(), report.cut(),
                    report.idleClosed(), report.took().toMillis());
        }
        return report;
    }
}
