package dev.mcpchaos.server.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs {@link DemoServer#serve} on a background thread with a pipe as its input and a
 * line-collecting stream as its output, so a test can write raw lines and read replies with a
 * timeout (never a sleep).
 */
final class DemoServerHarness implements AutoCloseable {

    static final Duration MESSAGE_TIMEOUT = Duration.ofSeconds(10);

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final PipedOutputStream toServer = new PipedOutputStream();
    private final LineQueueOutputStream fromServer = new LineQueueOutputStream();
    private final ExecutorService serverThread = Executors.newSingleThreadExecutor(task -> {
        Thread thread = new Thread(task, "demo-server-under-test");
        thread.setDaemon(true);
        return thread;
    });
    private final Future<Integer> exitCode;
    private boolean inputClosed;

    DemoServerHarness() throws IOException {
        this(false);
    }

    /** A harness of the demo server serving the 2026-07-28 revision too when {@code dualEra}. */
    DemoServerHarness(boolean dualEra) throws IOException {
        // Large enough that a test never blocks on writing its requests.
        PipedInputStream serverInput = new PipedInputStream(toServer, 1024 * 1024);
        exitCode = serverThread.submit(() -> DemoServer.serve(serverInput, fromServer, dualEra));
    }

    /** Sends one line: {@code json} followed by {@code \n}. */
    void send(String json) {
        sendRaw(json + "\n");
    }

    /** Sends exactly these characters (UTF-8), for tests of framing. */
    void sendRaw(String text) {
        sendBytes(text.getBytes(StandardCharsets.UTF_8));
    }

    /** Sends exactly these bytes, for tests of encoding errors. */
    void sendBytes(byte[] bytes) {
        try {
            toServer.write(bytes);
            toServer.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Sends a {@code tools/call} request. */
    void callTool(Object id, String tool, String argumentsJson) {
        send("{\"jsonrpc\":\"2.0\",\"id\":" + jsonId(id) + ",\"method\":\"tools/call\",\"params\":{\"name\":\""
                + tool + "\",\"arguments\":" + argumentsJson + "}}");
    }

    /** Sends a request without params. */
    void request(Object id, String method) {
        send("{\"jsonrpc\":\"2.0\",\"id\":" + jsonId(id) + ",\"method\":\"" + method + "\"}");
    }

    private static String jsonId(Object id) {
        return id instanceof String ? "\"" + id + "\"" : String.valueOf(id);
    }

    /** The next line the server wrote, as raw text; fails the test after {@link #MESSAGE_TIMEOUT}. */
    String nextLine() {
        try {
            String line = fromServer.lines.poll(MESSAGE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            if (line == null) {
                fail("no message from the demo server within " + MESSAGE_TIMEOUT);
            }
            return line;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for the demo server", e);
        }
    }

    /** The next message the server wrote, parsed; fails the test if it is not JSON. */
    JsonNode next() {
        String line = nextLine();
        try {
            return MAPPER.readTree(line);
        } catch (IOException e) {
            throw new AssertionError("the demo server wrote a line that is not JSON: " + abbreviate(line), e);
        }
    }

    /** The next message, asserted to be the successful response to {@code id}; returns its {@code result}. */
    JsonNode resultOf(Object id) {
        JsonNode response = next();
        assertThat(response.path("jsonrpc").asText()).isEqualTo("2.0");
        assertThat(response.has("error")).as("error in %s", response).isFalse();
        assertThat(response.get("id")).isEqualTo(MAPPER.valueToTree(id));
        return response.get("result");
    }

    /** Lines the server wrote that no test has read yet, without waiting. */
    int unreadLines() {
        return fromServer.lines.size();
    }

    /** Ends the server's input, as a client closing its end of the pipe would. */
    void closeInput() {
        if (!inputClosed) {
            inputClosed = true;
            try {
                toServer.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Waits for {@code serve} to return and gives its exit code. */
    int awaitExit(Duration timeout) throws InterruptedException, ExecutionException, TimeoutException {
        return exitCode.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() throws ExecutionException, TimeoutException {
        closeInput();
        try {
            awaitExit(Duration.ofSeconds(15));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for the demo server to stop", e);
        } finally {
            serverThread.shutdownNow();
        }
    }

    static String abbreviate(String text) {
        return text.length() > 200 ? text.substring(0, 200) + "..." : text;
    }

    /** Collects what the server writes into complete lines; a partial line stays buffered until its newline. */
    private static final class LineQueueOutputStream extends OutputStream {
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final ByteArrayOutputStream current = new ByteArrayOutputStream();

        @Override
        public synchronized void write(int b) {
            if (b == '\n') {
                lines.add(current.toString(StandardCharsets.UTF_8));
                current.reset();
            } else {
                current.write(b);
            }
        }

        @Override
        public synchronized void write(byte[] bytes, int offset, int length) {
            int start = offset;
            int end = offset + length;
            for (int i = offset; i < end; i++) {
                if (bytes[i] == '\n') {
                    current.write(bytes, start, i - start);
                    lines.add(current.toString(StandardCharsets.UTF_8));
                    current.reset();
                    start = i + 1;
                }
            }
            current.write(bytes, start, end - start);
        }
    }
}
