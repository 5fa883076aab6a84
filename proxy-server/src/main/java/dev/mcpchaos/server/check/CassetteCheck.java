package dev.mcpchaos.server.check;

import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteEntry;

import java.io.IOException;
import java.nio.file.Path;

/** The referee offline: feeds it a cassette's messages in their recorded order. */
public final class CassetteCheck {

    private CassetteCheck() {
    }

    /**
     * Feeds {@code cassette} to {@code referee} and ends its sessions. Each line's session name
     * tells sessions apart, with the file's name in front so two cassettes never share one.
     *
     * <p>What a cassette cannot show: whether a stdio line ended without its newline
     * ({@code stdio.unterminated-line} fires live only).
     */
    public static void feed(Referee referee, Cassette cassette, String name) {
        boolean stdio = "stdio".equals(cassette.header().transport());
        for (CassetteEntry e : cassette.entries()) {
            String text = e.message() != null ? e.message().toString() : e.raw();
            long nanos = Math.round(e.timeMillis() * 1_000_000d);
            java.util.Map<String, String> mcpHeaders = null;
            if (!stdio && e.direction() == dev.mcpchaos.core.frame.Direction.CLIENT_TO_SERVER && e.http() != null
                    && e.http().requestHeaders() != null) {
                mcpHeaders = Referee.Message.mcpHeaders(e.http().requestHeaders());
                if (mcpHeaders == null) {
                    mcpHeaders = java.util.Map.of();
                }
            }
            // A server's message on a GET the client reopened with Last-Event-ID: a replay, live and offline alike.
            boolean resumed = !stdio && e.direction() == dev.mcpchaos.core.frame.Direction.SERVER_TO_CLIENT
                    && e.http() != null && e.http().requestHeaders() != null && e.http().requestHeaders().stream()
                    .anyMatch(h -> h.getKey().equalsIgnoreCase("last-event-id"));
            referee.observe(new Referee.Message(name + "\u0000" + e.session(), e.session(), e.direction(), e.seq(),
                    nanos, text, stdio, false, mcpHeaders, null, resumed));
        }
        if (cassette.droppedMessages() > 0) {
            referee.dropped(cassette.droppedMessages());
        }
        referee.finish();
    }

    /** Reads {@code file} and {@linkplain #feed feeds} it. */
    public static void feed(Referee referee, Path file) throws IOException {
        feed(referee, Cassette.read(file), file.toString());
    }
}
