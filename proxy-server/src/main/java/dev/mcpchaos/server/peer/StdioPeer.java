package dev.mcpchaos.server.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.MissingNode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * An MCP server run as a child process, spoken to over its pipes: a JSON-RPC message a line on
 * its stdin and stdout (see {@link McpPeer}). A line of stdout that is not JSON is skipped (the
 * referee's business, not a client's).
 */
public final class StdioPeer implements McpPeer {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    /** How long a server may take to exit after its stdin closed and it was sent SIGTERM. */
    private static final long EXIT_GRACE_SECONDS = 2;

    private final String name;
    private final Process process;
    private final OutputStream out;
    private final BlockingQueue<JsonNode> fromServer = new LinkedBlockingQueue<>();
    private final Duration timeout;
    private final UnaryOperator<JsonNode> serverRequests;

    private StdioPeer(List<String> command, Process process, Duration timeout,
                      UnaryOperator<JsonNode> serverRequests) {
        this.name = "server '" + String.join(" ", command) + "'";
        this.process = process;
        this.out = process.getOutputStream();
        this.timeout = timeout;
        this.serverRequests = serverRequests;
        Thread reader = new Thread(this::readStdout, "mcp-chaos-peer-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts {@code command}.
     *
     * @param stderr         where the server's stderr goes
     * @param timeout        how long each answer may take
     * @param serverRequests what a request of the server's is answered with
     * @throws IOException as {@link ProcessBuilder#start()} throws it, when the command cannot start
     */
    public static StdioPeer start(List<String> command, ProcessBuilder.Redirect stderr, Duration timeout,
                                  UnaryOperator<JsonNode> serverRequests) throws IOException {
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(serverRequests, "serverRequests");
        Process process = new ProcessBuilder(command).redirectError(stderr).start();
        return new StdioPeer(List.copyOf(command), process, timeout, serverRequests);
    }

    /** Reads stdout, a message a line; at its end, {@link MissingNode} marks that no more will come. */
    private void readStdout() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                try {
                    fromServer.add(JSON.readTree(line));
                } catch (IOException notJson) {
                    // not JSON on stdout: skipped; a request it was meant to answer ends unanswered
                }
            }
        } catch (IOException gone) {
            // the process went away: marked below
        }
        fromServer.add(MissingNode.getInstance());
    }

    @Override
    public JsonNode request(JsonNode request) throws IOException {
        String method = request.path("method").asText();
        JsonNode id = request.get("id");
        write(request);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            JsonNode next;
            try {
                next = left > 0 ? fromServer.poll(left, TimeUnit.NANOSECONDS) : null;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted waiting for " + name);
            }
            if (next == null) {
                throw new NoAnswerException(name + " did not answer " + method + " within " + timeout);
            }
            if (next.isMissingNode()) {
                fromServer.add(next); // for every later request too
                throw new NoAnswerException(name + " ended its output (exited?) before answering " + method);
            }
            if (next.has("method") && next.has("id")) {
                write(serverRequests.apply(next)); // unanswered, it could hold up the answer awaited
            } else if (!next.has("method") && id.equals(next.get("id"))) {
                return next;
            }
            // a notification, or an answer to an earlier request that timed out: not this request's
        }
    }

    @Override
    public void notify(JsonNode notification) throws IOException {
        write(notification);
    }

    private void write(JsonNode message) throws IOException {
        try {
            out.write(JSON.writeValueAsBytes(message));
            out.write('\n');
            out.flush();
        } catch (IOException e) {
            throw new IOException(name + " closed its input: " + e.getMessage(), e);
        }
    }

    /** Closes the server's stdin, sends it SIGTERM, and kills it if it has not exited soon after. */
    @Override
    public void close() {
        try {
            out.close();
        } catch (IOException ignored) {
            // it is being stopped anyway
        }
        process.destroy();
        try {
            if (!process.waitFor(EXIT_GRACE_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
