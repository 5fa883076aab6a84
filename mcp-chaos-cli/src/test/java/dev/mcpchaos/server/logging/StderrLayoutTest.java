package dev.mcpchaos.server.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.TimeZone;

import static org.assertj.core.api.Assertions.assertThat;

class StderrLayoutTest {

    private final LoggerContext context = new LoggerContext();

    private LoggingEvent event(String logger, Level level, String instant, String message, Throwable thrown,
                               Object... arguments) {
        LoggingEvent event = new LoggingEvent(logger, context.getLogger(logger), level, message, thrown, arguments);
        event.setTimeStamp(Instant.parse(instant).toEpochMilli());
        return event;
    }

    @Test
    void aLineHasTheLocalTimeThePaddedLevelTheSimpleLoggerNameAndTheFormattedMessage() {
        StderrLayout utc = new StderrLayout(TimeZone.getTimeZone("UTC"));
        assertThat(utc.doLayout(event("dev.mcpchaos.faults", Level.INFO, "2026-11-29T09:05:03.007Z",
                "#{} {} rule '{}'", null, 1, "latency", "slow")))
                .isEqualTo("09:05:03.007 mcp-chaos INFO  faults: #1 latency rule 'slow'" + System.lineSeparator());
        assertThat(utc.doLayout(event("Plain", Level.ERROR, "2026-11-29T23:59:59.999Z", "x", null)))
                .isEqualTo("23:59:59.999 mcp-chaos ERROR Plain: x" + System.lineSeparator());
        assertThat(utc.doLayout(event("a.b.C", Level.WARN, "2026-11-29T00:00:00.050Z", "y", null)))
                .startsWith("00:00:00.050 mcp-chaos WARN  C: y");
    }

    @Test
    void theTimeIsInTheZoneGivenAcrossMidnight() {
        StderrLayout tokyo = new StderrLayout(TimeZone.getTimeZone("Asia/Tokyo")); // UTC+9, no DST
        StderrLayout newYork = new StderrLayout(TimeZone.getTimeZone("America/New_York")); // UTC-5 in November
        assertThat(tokyo.doLayout(event("l", Level.INFO, "2026-11-29T20:30:00.123Z", "m", null)))
                .startsWith("05:30:00.123 ");
        assertThat(newYork.doLayout(event("l", Level.INFO, "2026-11-30T02:00:00.000Z", "m", null)))
                .startsWith("21:00:00.000 ");
    }

    @Test
    void aThrowableFollowsWithItsStackTraceAndCauses() {
        StderrLayout utc = new StderrLayout(TimeZone.getTimeZone("UTC"));
        Exception thrown = new IllegalStateException("outer", new java.io.IOException("inner"));
        String text = utc.doLayout(event("x.Y", Level.WARN, "2026-11-29T12:00:00Z", "failed", thrown));
        assertThat(text).startsWith("12:00:00.000 mcp-chaos WARN  Y: failed" + System.lineSeparator()
                + "java.lang.IllegalStateException: outer");
        assertThat(text).contains("at dev.mcpchaos.server.logging.StderrLayoutTest")
                .contains("Caused by: java.io.IOException: inner");
    }
}
