package dev.mcpchaos.core.session;

import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import static dev.mcpchaos.core.frame.Direction.CLIENT_TO_SERVER;
import static dev.mcpchaos.core.frame.Direction.SERVER_TO_CLIENT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link Correlator}: matching responses to the requests they answer, and to when those were read, per direction. */
class CorrelatorTest {

    private final Correlator correlator = new Correlator();
    private final MockTicker ticker = Ticker.newMockTicker();

    @Test
    void responseIsMatchedToTheClientRequestItAnswers() {
        Envelope request = observe(CLIENT_TO_SERVER,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search_docs\"}}");
        assertThat(correlator.pending(CLIENT_TO_SERVER, 1L)).isEqualTo(request);
        assertThat(correlator.pendingCount(CLIENT_TO_SERVER)).isEqualTo(1);

        Frame response = frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}");
        try {
            correlator.observe(response, ticker);
            assertThat(response.answers()).isEqualTo(request);
            // Rules match a response by the request it answers.
            assertThat(response.method()).isEqualTo("tools/call");
            assertThat(response.toolName()).isEqualTo("search_docs");
        } finally {
            response.release();
        }
        assertThat(correlator.pendingCount(CLIENT_TO_SERVER)).isZero();
        assertThat(correlator.pending(CLIENT_TO_SERVER, 1L)).isNull();
    }

    @Test
    void serverRequestsAreAnsweredByTheClient() {
        Envelope request = observe(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"sampling/createMessage\"}");
        assertThat(correlator.pendingCount(SERVER_TO_CLIENT)).isEqualTo(1);
        assertThat(answersOf(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}")).isEqualTo(request);
        assertThat(correlator.pendingCount(SERVER_TO_CLIENT)).isZero();
    }

    @Test
    void eachDirectionIsItsOwnIdSpace() {
        Envelope clientRequest = observe(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
        Envelope serverRequest = observe(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"roots/list\"}");
        assertThat(answersOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}")).isEqualTo(clientRequest);
        assertThat(correlator.pending(SERVER_TO_CLIENT, 1L)).isEqualTo(serverRequest);
        assertThat(answersOf(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}")).isEqualTo(serverRequest);
        // A response travelling the same way as the request does not answer it.
        observe(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
        assertThat(answersOf(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}")).isNull();
        assertThat(correlator.pendingCount(CLIENT_TO_SERVER)).isEqualTo(1);
    }

    @Test
    void numericAndStringIdsDoNotMatchEachOther() {
        Envelope numeric = observe(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"a\"}");
        Envelope string = observe(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"method\":\"b\"}");
        assertThat(correlator.pendingCount(CLIENT_TO_SERVER)).isEqualTo(2);
        assertThat(answersOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":{}}")).isEqualTo(string);
        assertThat(answersOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":{}}")).isNull();
        assertThat(answersOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}")).isEqualTo(numeric);
    }

    @Test
    void largeNumericIdsMatch() {
        Envelope request = observe(CLIENT_TO_SERVER,
                "{\"jsonrpc\":\"2.0\",\"id\":123456789012345678901234567890,\"method\":\"a\"}");
        assertThat(correlator.pending(CLIENT_TO_SERVER, new BigDecimal("123456789012345678901234567890")))
                .isEqualTo(request);
        assertThat(answersOf(SERVER_TO_CLIENT,
                "{\"jsonrpc\":\"2.0\",\"id\":123456789012345678901234567890,\"result\":1}")).isEqualTo(request);
    }

    @Test
    void errorResponsesAnswerToo() {
        Envelope request = observe(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
                + "\"params\":{\"name\":\"t\"}}");
        Frame error = frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32000,\"message\":\"x\"}}");
        try {
            correlator.observe(error, ticker);
            assertThat(error.answers()).isEqualTo(request);
            assertThat(error.toolName()).isEqualTo("t");
        } finally {
            error.release();
        }
        assertThat(correlator.pendingCount(CLIENT_TO_SERVER)).isZero();
    }

    @Test
    void errorWithANullIdAnswersNothingAndForgetsNothing() {
        observe(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"a\"}");
        assertThat(answersOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
                + "\"message\":\"parse error\"}}")).isNull();
        assertThat(correlator.pendingCount(CLIENT_TO_SERVER)).isEqualTo(1);
    }

    @Test
    void unknownIdsAndOtherFramesAnswerNothing() {
        assertThat(answersOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}")).isNull();
        for (String other : new String[] {
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"",   // malformed
            "   ",
            "{}",
        }) {
            assertThat(answersOf(CLIENT_TO_SERVER, other)).isNull();
        }
        // Notifications, malformed and blank frames are not remembered as requests.
        assertThat(correlator.pendingCount(CLIENT_TO_SERVER)).isZero();
        assertThat(correlator.pendingCount(SERVER_TO_CLIENT)).isZero();
    }

    @Test
    void batchesAreHandledElementByElement() {
        Frame batch = frame(CLIENT_TO_SERVER, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"},"
                + "{\"jsonrpc\":\"2.0\",\"method\":\"n\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}]");
        try {
            correlator.observe(batch, ticker);
            assertThat(batch.answers()).isNull();
        } finally {
            batch.release();
        }
        assertThat(correlator.pendingCount(CLIENT_TO_SERVER)).isEqualTo(2);
        assertThat(correlator.pending(CLIENT_TO_SERVER, 2L).method()).isEqualTo("b");

        // A batch of responses forgets what it answers; the batch frame answers no single request.
        Frame responses = frame(SERVER_TO_CLIENT, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},"
                + "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":1,\"message\":\"m\"}}]");
        try {
            correlator.observe(responses, ticker);
            assertThat(responses.answers()).isNull();
        } finally {
            responses.release();
        }
        assertThat(correlator.pendingCount(CLIENT_TO_SERVER)).isZero();

        // And a single response can answer a request that came in a batch.
        Frame batch2 = frame(CLIENT_TO_SERVER, "[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"c\"}]");
        correlator.observe(batch2, ticker);
        batch2.release();
        assertThat(answersOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}").method()).isEqualTo("c");
    }

    @Test
    void forgetsTheOldestRequestsBeyondTheLimit() {
        Correlator small = new Correlator(3);
        for (int id = 1; id <= 5; id++) {
            Frame request = frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"m" + id + "\"}");
            small.observe(request, ticker);
            request.release();
        }
        assertThat(small.pendingCount(CLIENT_TO_SERVER)).isEqualTo(3);
        assertThat(small.evictedCount()).isEqualTo(2);
        assertThat(small.pending(CLIENT_TO_SERVER, 1L)).isNull();
        assertThat(small.pending(CLIENT_TO_SERVER, 2L)).isNull();
        assertThat(small.pending(CLIENT_TO_SERVER, 3L).method()).isEqualTo("m3");
        assertThat(small.pending(CLIENT_TO_SERVER, 5L).method()).isEqualTo("m5");
        // The other direction has its own allowance.
        assertThat(small.pendingCount(SERVER_TO_CLIENT)).isZero();
    }

    @Test
    void aLimitOfOneForgetsTheFirstRequestWhenASecondComes() {
        Correlator one = new Correlator(1);
        observeOn(one, CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"first\"}");
        assertThat(one.pendingCount(CLIENT_TO_SERVER)).isEqualTo(1);

        observeOn(one, CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"second\"}");

        assertThat(one.pendingCount(CLIENT_TO_SERVER)).isEqualTo(1);
        assertThat(one.evictedCount()).isEqualTo(1);
        assertThat(one.pending(CLIENT_TO_SERVER, 1L)).isNull();
        assertThat(one.pending(CLIENT_TO_SERVER, 2L).method()).isEqualTo("second");
    }

    @Test
    void requestsAnsweredOneAtATimeAndSeveralAtOnceAreAllMatched() {
        // One at a time (the common case), then three at once, answered out of order, then one again.
        assertThat(observe(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}")).isNotNull();
        assertThat(answersOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}").method()).isEqualTo("a");
        assertThat(correlator.pendingCount(CLIENT_TO_SERVER)).isZero();
        for (String id : new String[] {"2", "3", "\"four\""}) {
            observe(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"m" + id.replace("\"", "") + "\"}");
        }
        // A request that reuses a pending id replaces it, as a map would.
        observe(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"again3\"}");
        assertThat(correlator.pendingCount(CLIENT_TO_SERVER)).isEqualTo(3);
        assertThat(answersOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":\"four\",\"result\":{}}").method())
                .isEqualTo("mfour");
        assertThat(answersOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}").method()).isEqualTo("m2");
        assertThat(answersOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}").method())
                .isEqualTo("again3");
        assertThat(answersOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}")).isNull();
        observe(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"m5\"}");
        assertThat(answersOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}").method()).isEqualTo("m5");
        assertThat(correlator.pendingCount(CLIENT_TO_SERVER)).isZero();
        assertThat(correlator.evictedCount()).isZero();
    }

    @Test
    void theRequestHeldAloneIsTheOldestWhenTheLimitIsReached() {
        Correlator two = new Correlator(2);
        observeOn(two, CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m1\"}");
        observeOn(two, CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"m2\"}");
        observeOn(two, CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"m3\"}");

        assertThat(two.evictedCount()).isEqualTo(1);
        assertThat(two.pending(CLIENT_TO_SERVER, 1L)).isNull();
        assertThat(two.pending(CLIENT_TO_SERVER, 2L).method()).isEqualTo("m2");
        assertThat(two.pending(CLIENT_TO_SERVER, 3L).method()).isEqualTo("m3");
    }

    private void observeOn(Correlator target, Direction direction, String json) {
        Frame frame = frame(direction, json);
        target.observe(frame, ticker);
        frame.release();
    }

    @Test
    void defaultsAndValidation() {
        assertThat(Correlator.DEFAULT_MAX_PENDING).isEqualTo(10_000);
        assertThat(correlator.evictedCount()).isZero();
        assertThatThrownBy(() -> new Correlator(0)).isInstanceOf(IllegalArgumentException.class);
        Session session = new Session("stdio");
        assertThat(session.id()).isEqualTo("stdio");
        assertThat(session.correlator()).isNotNull();
    }

    // ---------------------------------------------------------------- when the request was read

    @Test
    void aResponseCarriesWhenItsRequestWasRead() {
        ticker.advance(100, TimeUnit.MILLISECONDS);
        observe(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}");
        ticker.advance(250, TimeUnit.MILLISECONDS);
        Frame response = frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
        try {
            correlator.observe(response, ticker);
            assertThat(response.answeredRequestArrivalNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
            // What an interceptor reading the same clock computes.
            assertThat(ticker.nanoTime() - response.answeredRequestArrivalNanos())
                    .isEqualTo(TimeUnit.MILLISECONDS.toNanos(250));
        } finally {
            response.release();
        }
    }

    @Test
    void eachDirectionKeepsItsRequestsTimes() {
        observe(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");  // at 0
        ticker.advance(10, TimeUnit.MILLISECONDS);
        observe(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"roots/list\"}");  // at 10 ms
        ticker.advance(30, TimeUnit.MILLISECONDS);
        // The client answers the server's request, then the server the client's: same id, each its own time.
        assertThat(arrivalOf(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"))
                .isEqualTo(TimeUnit.MILLISECONDS.toNanos(10));
        assertThat(arrivalOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}")).isZero();
        // An error answers with a time too.
        observe(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");  // at 40 ms
        assertThat(arrivalOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":1,\"message\":\"m\"}}"))
                .isEqualTo(TimeUnit.MILLISECONDS.toNanos(40));
    }

    @Test
    void framesThatAnswerNothingHaveNoTime() {
        ticker.advance(5, TimeUnit.MILLISECONDS);
        assertThat(arrivalOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}")).isEqualTo(-1);
        assertThat(arrivalOf(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}")).isEqualTo(-1);
        // A second response to the same id: the request was answered and forgotten already.
        assertThat(arrivalOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}"))
                .isEqualTo(TimeUnit.MILLISECONDS.toNanos(5));
        assertThat(arrivalOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}")).isEqualTo(-1);
    }

    @Test
    void anEvictedRequestsResponseHasNoTime() {
        Correlator small = new Correlator(1);
        Frame first = frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}");
        small.observe(first, ticker);
        first.release();
        ticker.advance(1, TimeUnit.SECONDS);
        Frame second = frame(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}");
        small.observe(second, ticker); // forgets the first
        second.release();
        assertThat(small.evictedCount()).isEqualTo(1);
        for (long id = 1; id <= 2; id++) {
            Frame response = frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{}}");
            try {
                small.observe(response, ticker);
                if (id == 1) {
                    assertThat(response.answers()).isNull();
                    assertThat(response.answeredRequestArrivalNanos()).isEqualTo(-1);
                } else {
                    assertThat(response.answers().method()).isEqualTo("b");
                    assertThat(response.answeredRequestArrivalNanos()).isEqualTo(TimeUnit.SECONDS.toNanos(1));
                }
            } finally {
                response.release();
            }
        }
    }

    @Test
    void aRequestInABatchIsTimedFromTheBatch() {
        ticker.advance(7, TimeUnit.MILLISECONDS);
        Frame batch = frame(CLIENT_TO_SERVER, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}]");
        correlator.observe(batch, ticker);
        assertThat(batch.answeredRequestArrivalNanos()).isEqualTo(-1);
        batch.release();
        ticker.advance(1, TimeUnit.MILLISECONDS);
        assertThat(arrivalOf(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"))
                .isEqualTo(TimeUnit.MILLISECONDS.toNanos(7));
    }

    @Test
    void theTimeTravelsWithCopiesOfAResponseNotWithReplies() {
        ticker.advance(42, TimeUnit.MILLISECONDS);
        observe(CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}");
        Frame response = frame(SERVER_TO_CLIENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
        correlator.observe(response, ticker);
        long arrival = TimeUnit.MILLISECONDS.toNanos(42);
        Frame duplicate = response.duplicate();
        Frame replaced = response.withContent(Unpooled.copiedBuffer("{}", StandardCharsets.UTF_8), response.envelope());
        Frame reply = response.reply(Unpooled.copiedBuffer("{}", StandardCharsets.UTF_8), response.envelope());
        try {
            assertThat(duplicate.answeredRequestArrivalNanos()).isEqualTo(arrival);
            assertThat(duplicate.answers()).isSameAs(response.answers());
            assertThat(replaced.answeredRequestArrivalNanos()).isEqualTo(arrival);
            assertThat(replaced.answers()).isSameAs(response.answers());
            assertThat(reply.answeredRequestArrivalNanos()).isEqualTo(-1);
            assertThat(reply.answers()).isNull();
            // A frame told what it answers without a time has none (an injected error's reply).
            replaced.answers(response.answers());
            assertThat(replaced.answeredRequestArrivalNanos()).isEqualTo(-1);
        } finally {
            response.release();
            duplicate.release();
            replaced.release();
            reply.release();
        }
    }

    // ---------------------------------------------------------------- helpers

    /** Observes a frame of this JSON and returns its envelope. */
    private Envelope observe(Direction direction, String json) {
        Frame frame = frame(direction, json);
        try {
            correlator.observe(frame, ticker);
            return frame.envelope();
        } finally {
            frame.release();
        }
    }

    /** Observes a frame of this JSON and returns the request it was found to answer. */
    private Envelope answersOf(Direction direction, String json) {
        Frame frame = frame(direction, json);
        try {
            correlator.observe(frame, ticker);
            return frame.answers();
        } finally {
            frame.release();
        }
    }

    /** Observes a frame of this JSON and returns when the request it answers was read. */
    private long arrivalOf(Direction direction, String json) {
        Frame frame = frame(direction, json);
        try {
            correlator.observe(frame, ticker);
            return frame.answeredRequestArrivalNanos();
        } finally {
            frame.release();
        }
    }

    private static Frame frame(Direction direction, String json) {
        byte[] bytes = (json + "\n").getBytes(StandardCharsets.UTF_8);
        Envelope envelope = new EnvelopeSniffer().sniff(Unpooled.wrappedBuffer(bytes, 0, bytes.length - 1));
        return Frame.original(Unpooled.wrappedBuffer(bytes), bytes.length - 1, envelope, direction, 0);
    }
}
