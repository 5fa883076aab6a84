package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.intercept.ConnectionControl;
import dev.mcpchaos.core.intercept.InterceptorChain;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.EventExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The session table on frozen time (an {@link EmbeddedChannel}'s loop is the sweeper and its
 * clock): idle sessions are forgotten after the timeout and no sooner, a session with an exchange
 * in flight or used every so often never is, the table never holds more than its maximum and
 * lets the least recently used go first, and each of these is reported once.
 */
class HttpSessionsTest {

    private static final Duration IDLE = Duration.ofMinutes(30);

    private final EmbeddedChannel clock = new EmbeddedChannel();
    private final EventExecutor loop = clock.eventLoop();
    private final List<String> observed = new CopyOnWriteArrayList<>();
    private HttpSessions sessions;

    @AfterEach
    void close() {
        if (sessions != null) {
            sessions.close();
        }
        clock.finishAndReleaseAll();
    }

    private HttpSessions sessions(int maxSessions) {
        clock.freezeTime();
        sessions = new HttpSessions(List.of(), null, UnpooledByteBufAllocator.DEFAULT, new NoControl(),
                frame -> frame.release(), frame -> frame.release(), new TransportObserver() {
                    @Override
                    public void sessionStarted(TransportKind transport, String sessionId) {
                        observed.add("started " + sessionId);
                    }

                    @Override
                    public void sessionEnded(TransportKind transport, String sessionId) {
                        observed.add("ended " + sessionId);
                    }

                    @Override
                    public void sessionExpired(TransportKind transport, String sessionId, SessionExpiry reason) {
                        observed.add("expired " + sessionId + " " + reason.tag());
                    }
                }, IDLE, maxSessions, loop);
        return sessions;
    }

    /** What an initialize exchange does: a chain of its own, which the upstream's answer names; then it ends. */
    private InterceptorChain initialize(String id) {
        InterceptorChain chain = sessions.chainFor(null, loop);
        sessions.learn(id, chain);
        sessions.exchangeEnded(chain);
        return chain;
    }

    /** One request of the session, answered. */
    private InterceptorChain request(String id) {
        InterceptorChain chain = sessions.chainFor(id, loop);
        sessions.exchangeEnded(chain);
        return chain;
    }

    private void advance(Duration by) {
        clock.advanceTimeBy(by.toNanos(), TimeUnit.NANOSECONDS);
        clock.runScheduledPendingTasks();
    }

    @Test
    void anIdleSessionIsForgottenAtItsTimeoutNotBeforeAndCountedOnce() {
        sessions(10);
        initialize("s1");
        advance(IDLE.minusSeconds(1));
        assertThat(sessions.size()).isEqualTo(1);
        assertThat(sessions.isKnown("s1")).isTrue();
        advance(Duration.ofSeconds(1));
        assertThat(sessions.size()).isZero();
        assertThat(observed).containsExactly("started s1", "expired s1 idle");
        assertThat(clock.runScheduledPendingTasks()).as("no sweep is scheduled for an empty table").isEqualTo(-1);
    }

    @Test
    void theIdleTimeCountsFromTheLastExchangeEnd() {
        sessions(10);
        initialize("s1");
        advance(Duration.ofMinutes(20));
        request("s1");
        advance(Duration.ofMinutes(29));
        assertThat(sessions.isKnown("s1")).isTrue();
        advance(Duration.ofMinutes(1));
        assertThat(sessions.isKnown("s1")).isFalse();
        assertThat(observed).containsExactly("started s1", "expired s1 idle");
    }

    @Test
    void aSessionWithAnExchangeInFlightIsNeverIdle() {
        sessions(10);
        initialize("s1");
        InterceptorChain stream = sessions.chainFor("s1", loop); // a GET stream opens and stays open
        advance(Duration.ofHours(10));
        assertThat(sessions.isKnown("s1")).isTrue();
        sessions.exchangeEnded(stream); // the stream ends: idle from now
        advance(IDLE.minusMillis(1));
        assertThat(sessions.isKnown("s1")).isTrue();
        advance(Duration.ofMillis(1));
        assertThat(sessions.isKnown("s1")).isFalse();
        assertThat(observed).containsExactly("started s1", "expired s1 idle");
    }

    @Test
    void aSessionUsedEverySoOftenIsKeptWhileAnIdleOneBesideItGoes() {
        sessions(10);
        initialize("busy");
        initialize("idle");
        for (int i = 0; i < 30; i++) { // 5 hours, a request every 10 minutes
            advance(Duration.ofMinutes(10));
            assertThat(request("busy")).isSameAs(request("busy"));
        }
        assertThat(sessions.isKnown("busy")).isTrue();
        assertThat(sessions.isKnown("idle")).isFalse();
        assertThat(observed).containsExactly("started busy", "started idle", "expired idle idle");
    }

    @Test
    void theTableNeverHoldsMoreThanItsMaximumAndTheNewestSurvive() {
        sessions(3);
        for (int i = 1; i <= 5; i++) {
            initialize("s" + i);
            assertThat(sessions.size()).isLessThanOrEqualTo(3);
        }
        assertThat(sessions.size()).isEqualTo(3);
        assertThat(List.of("s1", "s2", "s3", "s4", "s5")).filteredOn(sessions::isKnown)
                .containsExactly("s3", "s4", "s5");
        assertThat(observed).containsExactly("started s1", "started s2", "started s3", "started s4",
                "expired s1 evicted", "started s5", "expired s2 evicted");
    }

    @Test
    void theLeastRecentlyUsedGoesFirstNotTheOldest() {
        sessions(3);
        initialize("s1");
        initialize("s2");
        initialize("s3");
        request("s1"); // the oldest, but used since
        initialize("s4");
        assertThat(List.of("s1", "s2", "s3", "s4")).filteredOn(sessions::isKnown).containsExactly("s1", "s3", "s4");
        assertThat(observed).contains("expired s2 evicted").doesNotContain("expired s1 evicted");
    }

    @Test
    void aBusySessionIsPassedOverForAnIdleOneAndWhenAllAreBusyTheLeastRecentlyUsedGoes() {
        sessions(2);
        initialize("s1");
        initialize("s2");
        InterceptorChain s1Stream = sessions.chainFor("s1", loop); // s1 in flight
        InterceptorChain s2Stream = sessions.chainFor("s2", loop); // s2 in flight, used after s1
        sessions.exchangeEnded(s2Stream); // s2 idle again, and the most recently used
        initialize("s3");
        assertThat(List.of("s1", "s2", "s3")).filteredOn(sessions::isKnown).containsExactly("s1", "s3");

        InterceptorChain s3Stream = sessions.chainFor("s3", loop); // now both s1 and s3 are busy
        InterceptorChain s4 = sessions.chainFor(null, loop);
        sessions.learn("s4", s4); // busy too: its exchange has not ended
        assertThat(sessions.size()).isEqualTo(2);
        assertThat(sessions.isKnown("s4")).isTrue();
        assertThat(observed).containsSubsequence("expired s2 evicted", "expired s1 evicted");

        // The evicted session's exchange ends on its own chain, which the table no longer holds.
        sessions.exchangeEnded(s1Stream);
        sessions.exchangeEnded(s3Stream);
        sessions.exchangeEnded(s4);
        advance(IDLE);
        assertThat(sessions.size()).isZero();
        assertThat(observed).containsSubsequence("expired s3 idle", "expired s4 idle");
    }

    @Test
    void aForgottenIdIsTreatedAsNeverSeenAndKeptAgainOnceTheUpstreamAcceptsIt() {
        sessions(10);
        InterceptorChain first = initialize("s1");
        advance(IDLE);
        assertThat(sessions.isKnown("s1")).isFalse();

        InterceptorChain again = sessions.chainFor("s1", loop);
        assertThat(again).isNotSameAs(first);
        assertThat(again.session().id()).isEqualTo("s1");
        assertThat(sessions.isKnown("s1")).as("not kept before the upstream accepts it").isFalse();
        sessions.learn("s1", again); // the upstream answered 2xx
        sessions.exchangeEnded(again);
        assertThat(request("s1")).isSameAs(again);
        assertThat(observed).containsExactly("started s1", "expired s1 idle", "started s1");
    }

    @Test
    void anIdTheUpstreamNeverAcceptedTakesNoPlace() {
        sessions(10);
        for (int i = 0; i < 1000; i++) {
            request("bogus-" + i); // answered 400 or 404 upstream: never learnt
        }
        assertThat(sessions.size()).isZero();
        assertThat(observed).isEmpty();
        assertThat(clock.runScheduledPendingTasks()).isEqualTo(-1);
    }

    @Test
    void anEndedSessionIsReportedAsEndedNotExpired() {
        sessions(10);
        initialize("s1");
        sessions.end("s1");
        advance(IDLE);
        assertThat(observed).containsExactly("started s1", "ended s1");
    }

    @Test
    void closeCancelsTheSweep() {
        sessions(10);
        initialize("s1");
        sessions.close();
        assertThat(clock.runScheduledPendingTasks()).isEqualTo(-1);
        advance(IDLE);
        assertThat(sessions.size()).isEqualTo(1);
    }

    private static final class NoControl implements ConnectionControl {
        @Override
        public void closeClientSide(Frame at) {
        }

        @Override
        public void closeServerSide(Frame at) {
        }

        @Override
        public void terminateServer(Frame at) {
        }

        @Override
        public void killServer(Frame at) {
        }
    }
}
