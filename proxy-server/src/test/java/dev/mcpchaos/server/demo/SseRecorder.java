package dev.mcpchaos.server.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Receives an HTTP response body line by line as it arrives, so a test can read an SSE stream
 * event by event with a timeout (never a sleep), see its headers before the body ends, and cut
 * the connection mid-stream.
 */
final class SseRecorder implements Flow.Subscriber<String> {

    static final Duration TIMEOUT = Duration.ofSeconds(10);

    /** One SSE event; {@code id} and {@code event} are {@code null} when the event has none. */
    record Event(String id, String event, String data) {
    }

    private final CompletableFuture<HttpResponse.ResponseInfo> headers = new CompletableFuture<>();
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final CompletableFuture<Void> ended = new CompletableFuture<>();
    private volatile Flow.Subscription subscription;

    /** The body handler to send the request with. */
    HttpResponse.BodyHandler<Void> handler() {
        return info -> {
            headers.complete(info);
            return HttpResponse.BodySubscribers.fromLineSubscriber(this);
        };
    }

    /** The response's status and headers, waiting for them at most {@link #TIMEOUT}. */
    HttpResponse.ResponseInfo headers() throws Exception {
        return headers.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The next line of the body, without its terminator; fails the test after {@link #TIMEOUT}. */
    String nextLine() throws InterruptedException {
        String line = lines.poll(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        if (line == null) {
            fail("no SSE line within " + TIMEOUT + (ended.isDone() ? " (the body has ended)" : ""));
        }
        return line;
    }

    /**
     * The next event, parsed strictly: only {@code id}, {@code event} and one {@code data} line
     * are expected; comment-only blocks (keep-alives) are skipped.
     */
    Event nextEvent() throws InterruptedException {
        while (true) {
            String id = null;
            String event = null;
            String data = null;
            String line;
            while (!(line = nextLine()).isEmpty()) {
                if (line.startsWith(":")) {
                    continue;
                }
                int colon = line.indexOf(':');
                assertThat(colon).as("SSE field line %s", line).isPositive();
                String field = line.substring(0, colon);
                String value = line.substring(colon + 1).startsWith(" ")
                        ? line.substring(colon + 2) : line.substring(colon + 1);
                switch (field) {
                    case "id" -> {
                        assertThat(id).as("second id in one event").isNull();
                        id = value;
                    }
                    case "event" -> event = value;
                    case "data" -> {
                        assertThat(data).as("second data line in one event").isNull();
                        data = value;
                    }
                    default -> fail("unexpected SSE field: " + line);
                }
            }
            if (id != null || event != null || data != null) {
                return new Event(id, event, data);
            }
        }
    }

    /** The next {@code n} events. */
    List<Event> nextEvents(int n) throws InterruptedException {
        List<Event> events = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            events.add(nextEvent());
        }
        return events;
    }

    /** Waits for the body to end normally (the server ended the stream); fails after {@link #TIMEOUT}. */
    void awaitEnd() throws Exception {
        ended.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Lines received but not read yet, without waiting. */
    List<String> unreadLines() {
        List<String> rest = new ArrayList<>();
        lines.drainTo(rest);
        return rest;
    }

    /** Cuts the connection, as a client that went away would. */
    void cancel() {
        Flow.Subscription current = subscription;
        if (current != null) {
            current.cancel();
        }
    }

    @Override
    public void onSubscribe(Flow.Subscription subscription) {
        this.subscription = subscription;
        subscription.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(String line) {
        lines.add(line);
    }

    @Override
    public void onError(Throwable failure) {
        ended.completeExceptionally(failure);
    }

    @Override
    public void onComplete() {
        ended.complete(null);
    }
}
