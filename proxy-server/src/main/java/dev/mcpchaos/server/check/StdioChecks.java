package dev.mcpchaos.server.check;

import dev.mcpchaos.core.frame.Direction;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/** The checks of the stdio transport's framing and shutdown ({@code stdio.*}). */
final class StdioChecks implements CheckFamily {

    private static final String NO_STDIO = "stdio only, and there was no stdio traffic";

    @Override
    public List<Check> checks() {
        return List.of(Check.STDOUT_NOT_JSON, Check.UNTERMINATED_LINE, Check.EXIT_ON_STDIN_CLOSE);
    }

    @Override
    public String whyNotRun(Check check, Tracker seen) {
        if (check == Check.STDOUT_NOT_JSON) {
            return !seen.stdioSeen ? NO_STDIO : null;
        }
        return !seen.live ? "live only: a cassette does not show it" : !seen.stdioSeen ? NO_STDIO : null;
    }

    /** A server's line whose stream ended before its newline. */
    static void unterminated(Tracker t, Referee.Message m) {
        if (m.unterminated() && m.direction() == Direction.SERVER_TO_CLIENT) {
            t.findings.violate(Check.UNTERMINATED_LINE, "stdout ended before this line's newline", m, null, null);
        }
    }

    /** Whether {@code m} is a line a stdio server wrote to stdout, where anything but a JSON-RPC object is this family's. */
    static boolean stdout(Referee.Message m) {
        return m.stdioLine() && m.direction() == Direction.SERVER_TO_CLIENT;
    }

    /** A line on stdout that is no JSON-RPC message: {@code what} it is. */
    static void notAMessage(Tracker t, Referee.Message m, String what) {
        t.findings.violate(Check.STDOUT_NOT_JSON, what, m, null, null);
    }

    /** The stdio server of {@code session} was still running {@code deadline} after its stdin closed. */
    static void exitOverdue(Tracker t, String session, Duration deadline) {
        t.findings.violate(Check.EXIT_ON_STDIN_CLOSE, "the server was still running "
                + deadline.toString().substring(2).toLowerCase(Locale.ROOT) + " after its stdin closed (the proxy sent "
                + "SIGTERM; --exit-timeout sets the wait)", session, Direction.SERVER_TO_CLIENT, t.messages, null,
                null, "");
    }
}
