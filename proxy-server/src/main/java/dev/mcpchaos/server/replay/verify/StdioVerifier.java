package dev.mcpchaos.server.replay.verify;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteEntry;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Plays a cassette's client messages to a live stdio server (a child process) in recorded order
 * and compares each answer with the recorded one. Requests keep their recorded ids, so the live
 * answer is found by the same id; a request the server sends is answered with what the recording's
 * client answered to the same method, else with error -32601.
 */
public final class StdioVerifier {

    private static final JsonMapper JSON = JsonMapper.builder().build();

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
        List<CassetteEntry> entries = cassette.entries().stream().filter(e -> e.message() != null).toList();
        Map<String, CassetteEntry> recordedAnswers = new HashMap<>();
        Map<String, List<JsonNode>> clientAnswersByMethod = new HashMap<>();
        Map<String, String> serverRequestMethods = new HashMap<>();
        for (CassetteEntry e : entries) {
            JsonNode m = e.message();
            JsonNode id = m.get("id");
            if (e.direction() == Direction.SERVER_TO_CLIENT) {
                if (id != null && m.has("method")) {
                    serverRequestMethods.put(id.toString(), m.get("method").asText());
                } else if (id != null) {
                    recordedAnswers.put(id.toString(), e);
                }
            } else if (id != null && !m.has("method")) {
                String method = serverRequestMethods.get(id.toString());
                if (method != null) {
                    clientAnswersByMethod.computeIfAbsent(method, k -> new ArrayList<>()).add(m);
                }
            }
        }
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BlockingQueue<JsonNode> fromServer = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    try {
                        fromServer.add(JSON.readTree(line));
                    } catch (IOException notJson) {
                        // Not JSON on stdout: the diff cannot use it; the request stays unanswered.
                    }
                }
            } catch (IOException ignored) {
                // the server went away: what is pending stays unanswered
            }
        }, "verify-stdout");
        reader.setDaemon(true);
        reader.start();
        List<VerifyResult.Item> items = new ArrayList<>();
        OutputStream out = process.getOutputStream();
        try {
            for (CassetteEntry e : entries) {
                JsonNode m = e.message();
                if (e.direction() != Direction.CLIENT_TO_SERVER || !m.has("method")) {
                    continue; // answers to server requests are sent when the live server asks
                }
                try {
                    out.write(JSON.writeValueAsBytes(m));
                    out.write('\n');
                    out.flush();
                } catch (IOException gone) {
                    break;
                }
                JsonNode id = m.get("id");
                if (id == null) {
                    continue; // a notification: nothing to compare
                }
                CassetteEntry expected = recordedAnswers.get(id.toString());
                JsonNode live = await(id, fromServer, out, clientAnswersByMethod);
                String label = m.get("method").asText() + (m.path("params").has("name")
                        ? " " + m.path("params").path("name").asText() : "");
                items.add(new VerifyResult.Item(e.seq(), id.toString(), label, live == null ? null
                        : expected == null ? List.of() : diff.diff(expected.message(), live), live != null,
                        expected == null ? -1 : expected.seq(), live));
            }
        } finally {
            process.destroy();
            try {
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
        return new VerifyResult(items);
    }

    private JsonNode await(JsonNode id, BlockingQueue<JsonNode> fromServer, OutputStream out,
                           Map<String, List<JsonNode>> clientAnswers) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            JsonNode next;
            try {
                next = fromServer.poll(left, TimeUnit.NANOSECONDS);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                return null;
            }
            if (next == null) {
                return null;
            }
            if (next.has("method") && next.has("id")) {
                answerServerRequest(next, out, clientAnswers);
            } else if (!next.has("method") && id.equals(next.get("id"))) {
                return next;
            }
            // server notifications and stray answers are not compared per request
        }
    }

    private static void answerServerRequest(JsonNode request, OutputStream out, Map<String, List<JsonNode>> answers) {
        List<JsonNode> recorded = answers.get(request.get("method").asText());
        ObjectNode reply;
        if (recorded != null && !recorded.isEmpty()) {
            reply = recorded.size() > 1 ? (ObjectNode) recorded.remove(0).deepCopy() : (ObjectNode) recorded.get(0).deepCopy();
        } else {
            reply = JSON.createObjectNode().put("jsonrpc", "2.0");
            reply.putObject("error").put("code", -32601).put("message",
                    "mcp-chaos verify: no recorded answer to " + request.get("method").asText());
        }
        reply.set("id", request.get("id"));
        try {
            out.write(JSON.writeValueAsBytes(reply));
            out.write('\n');
            out.flush();
        } catch (IOException ignored) {
            // the server went away; the pending request ends unanswered
        }
    }
}
