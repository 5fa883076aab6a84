package dev.mcpchaos.server.replay.verify;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.server.peer.CassetteAnswers;
import dev.mcpchaos.server.peer.McpPeer;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteEntry;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The run both verifiers share: the cassette's client messages in recorded order to a live
 * server, each request's answer compared with the recorded one. What differs by transport is the
 * {@link Link}: which peer a message goes through, and whether a message that could not be sent
 * ends the run.
 */
final class CassettePlayback {

    /** Who answers a live server's own requests: the recording's client. */
    static final String CLIENT = "mcp-chaos verify";

    /** The live server, as a verifier reaches it. */
    interface Link extends AutoCloseable {
        /** Sends a recorded request; the live answer. */
        JsonNode request(CassetteEntry entry) throws IOException;

        /** Sends a recorded notification. */
        void notify(CassetteEntry entry) throws IOException;

        /** Whether a message that could not be sent ({@code failed}) ends the run; else it counts as unanswered. */
        boolean stopsOn(IOException failed);

        @Override
        void close();
    }

    private CassettePlayback() {
    }

    /**
     * Plays {@code cassette} through {@code link} and compares by {@code diff}.
     *
     * @throws IOException when the server cannot be reached at all (its first message was refused)
     */
    static VerifyResult play(Cassette cassette, CassetteAnswers answers, JsonDiff diff, Link link)
            throws IOException {
        List<VerifyResult.Item> items = new ArrayList<>();
        boolean reached = false;
        try (link) {
            for (CassetteEntry e : cassette.entries()) {
                JsonNode m = e.message();
                if (m == null || e.direction() != Direction.CLIENT_TO_SERVER || !m.has("method")) {
                    continue; // answers to server requests go when the live server asks
                }
                JsonNode id = m.get("id");
                JsonNode live = null;
                try {
                    if (id == null) {
                        link.notify(e);
                    } else {
                        live = link.request(e);
                    }
                    reached = true;
                } catch (McpPeer.HttpStatusException status) {
                    reached = true;
                    live = status.answer(); // an error status whose body answers (a 400 with -32020) is compared
                } catch (McpPeer.NoAnswerException none) {
                    reached = true;
                } catch (IOException failed) {
                    if (!reached && McpPeer.unreachable(failed)) {
                        throw failed;
                    }
                    if (link.stopsOn(failed)) {
                        break;
                    }
                }
                if (id == null) {
                    continue; // a notification: nothing to compare
                }
                CassetteEntry expected = answers.answerTo(e);
                String label = m.get("method").asText() + (m.path("params").has("name")
                        ? " " + m.path("params").path("name").asText() : "");
                items.add(new VerifyResult.Item(e.seq(), id.toString(), label, live == null ? null
                        : expected == null ? List.of() : diff.diff(expected.message(), live), live != null,
                        expected == null ? -1 : expected.seq(), live));
            }
        }
        return new VerifyResult(items);
    }
}
