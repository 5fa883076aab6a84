package dev.mcpchaos.server.replay.verify;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.server.peer.CassetteAnswers;
import dev.mcpchaos.server.peer.StdioPeer;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteEntry;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Plays a cassette's client messages to a live stdio server (a child process) in recorded order
 * and compares each answer with the recorded one. Requests keep their recorded ids, so the live
 * answer is found by the same id; a request the server sends is answered with what the recording's
 * client answered to the same method, else with error -32601.
 */
public final class StdioVerifier {

    private final Cassette cassette;
    private final List<String> command;
    private final JsonDiff diff;
    private final Duration timeout;

    /**
     * @param cassette what to send and expect
     * @param command  the live server's command line
     * @param diff     how answers are compared
     * @param timeout  how long one answer may take before it counts as unanswered
     */
    public StdioVerifier(Cassette cassette, List<String> command, JsonDiff diff, Duration timeout) {
        this.cassette = Objects.requireNonNull(cassette, "cassette");
        this.command = List.copyOf(command);
        this.diff = Objects.requireNonNull(diff, "diff");
        this.timeout = Objects.requireNonNull(timeout, "timeout");
    }

    /**
     * Runs the check.
     *
     * @throws IOException when the server cannot be started
     */
    public VerifyResult run() throws IOException {
        CassetteAnswers answers = CassetteAnswers.of(cassette);
        StdioPeer peer = StdioPeer.start(command, ProcessBuilder.Redirect.INHERIT, timeout,
                answers.recordedClient(CassettePlayback.CLIENT));
        return CassettePlayback.play(cassette, answers, diff, new CassettePlayback.Link() {
            @Override
            public JsonNode request(CassetteEntry entry) throws IOException {
                return peer.request(entry.message());
            }

            @Override
            public void notify(CassetteEntry entry) throws IOException {
                peer.notify(entry.message());
            }

            @Override
            public boolean stopsOn(IOException failed) {
                return true; // its stdin closed: the server is gone, and nothing more can reach it
            }

            @Override
            public void close() {
                peer.close();
            }
        });
    }
}
