package dev.mcpchaos.server.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.LayoutBase;

import java.util.TimeZone;

/**
 * One log line: {@code 12:00:01.234 mcp-chaos INFO  faults: the message}, local time, the level
 * padded to five characters, the logger's simple name; a throwable's stack trace follows on the
 * next lines.
 *
 * <p>Written out rather than a {@code PatternLayout}: compiling a pattern makes logback build its
 * table of several dozen converters, each a lambda, which cost a stdio proxy about 0.1 s of
 * start-up in front of the client's first message.
 */
public final class StderrLayout extends LayoutBase<ILoggingEvent> {

    private static final long MILLIS_PER_DAY = 24L * 60 * 60 * 1000;

    /**
     * The time zone, looked up on the first line: reading the JDK's time-zone data (tens of ms
     * cold) was the larger part of setting logging up, which a stdio proxy waits for before it
     * starts its server; a quiet run may never log a line.
     */
    private volatile TimeZone zone;

    /** A layout in this JVM's time zone. */
    public StderrLayout() {
    }

    /** A layout in {@code zone} (for tests). */
    StderrLayout(TimeZone zone) {
        this.zone = zone;
    }

    @Override
    public String doLayout(ILoggingEvent event) {
        StringBuilder line = new StringBuilder(96);
        appendTime(line, event.getTimeStamp());
        line.append(" mcp-chaos ");
        String level = event.getLevel().toString();
        line.append(level);
        for (int pad = level.length(); pad < 5; pad++) {
            line.append(' ');
        }
        line.append(' ').append(simpleName(event.getLoggerName())).append(": ")
                .append(event.getFormattedMessage()).append(CoreConstants.LINE_SEPARATOR);
        IThrowableProxy thrown = event.getThrowableProxy();
        if (thrown != null) {
            line.append(ThrowableProxyUtil.asString(thrown));
        }
        return line.toString();
    }

    private void appendTime(StringBuilder line, long epochMillis) {
        TimeZone zone = this.zone;
        if (zone == null) {
            zone = TimeZone.getDefault(); // two threads may both look it up: the same zone
            this.zone = zone;
        }
        long local = epochMillis + zone.getOffset(epochMillis);
        long ofDay = Math.floorMod(local, MILLIS_PER_DAY);
        twoDigits(line, ofDay / 3_600_000).append(':');
        twoDigits(line, ofDay / 60_000 % 60).append(':');
        twoDigits(line, ofDay / 1000 % 60).append('.');
        long millis = ofDay % 1000;
        if (millis < 100) {
            line.append('0');
        }
        twoDigits(line, millis);
    }

    private static StringBuilder twoDigits(StringBuilder line, long value) {
        if (value < 10) {
            line.append('0');
        }
        return line.append(value);
    }

    private static String simpleName(String loggerName) {
        int dot = loggerName.lastIndexOf('.');
        return dot < 0 ? loggerName : loggerName.substring(dot + 1);
    }
}
