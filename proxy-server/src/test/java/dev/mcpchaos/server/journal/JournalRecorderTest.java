package dev.mcpchaos.server.journal;

import dev.mcpchaos.core.codec.jsonrpc.EnvelopeSniffer;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.intercept.ConnectionControl;
import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.intercept.InterceptorChain;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.session.Session;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.RuleEngine;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.rules.fault.ConnectionHttpActions;
import dev.mcpchaos.rules.fault.HttpFaultActions;
import dev.mcpchaos.rules.journal.JournalEntry;
import dev.mcpchaos.rules.journal.JournalRing;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static dev.mcpchaos.rules.journal.Messages.toolCall;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The recorder in a real {@link InterceptorChain} with the rule engine, on an
 * {@link EmbeddedChannel}'s frozen time: an entry per message as it arrived, what each rule did,
 * and delivery when (and only when) the message left, also for one a latency held.
 */
class JournalRecorderTest {

    private final EmbeddedChannel channel = new EmbeddedChannel();
    private final List<String> toServer = new ArrayList<>();
    private final List<String> toClient = new ArrayList<>();
    private final EnvelopeSniffer sniffer = new EnvelopeSniffer();
    private JournalRecorder recorder;
    private InterceptorChain chain;
    private long clientSeq;
    private long serverSeq;

    private void start(String rulesYaml, boolean keepContent) {
        start(rulesYaml, keepContent, TransportKind.STDIO, ConnectionHttpActions.INSTANCE);
    }

    private void start(String rulesYaml, boolean keepContent, TransportKind kind, HttpFaultActions transport) {
        channel.freezeTime();
        recorder = new JournalRecorder(new JournalRing(100), keepContent);
        RuleEngine engine = RuleEngine.builder(RuleSet.parse(rulesYaml, "test.yaml")).seed(1)
                .transport(kind).ticker(channel.eventLoop().ticker())
                .listener(recorder.faults()).httpActions(recorder.httpActions(transport)).build();
        chain = new InterceptorChain(List.<FrameInterceptor>of(recorder.arrivals(), engine, recorder.departures()),
                new Session("stdio"), kind, channel.eventLoop(), PooledByteBufAllocator.DEFAULT,
                new NoConnection(), frame -> record(toServer, frame), frame -> record(toClient, frame));
    }

    @AfterEach
    void close() {
        channel.finishAndReleaseAll();
    }

    private static void record(List<String> lines, Frame frame) {
        lines.add(frame.content().toString(StandardCharsets.UTF_8));
        frame.release();
    }

    private Frame frame(Direction direction, String json) {
        byte[] line = (json + "\n").getBytes(StandardCharsets.UTF_8);
        ByteBuf wire = PooledByteBufAllocator.DEFAULT.buffer(line.length).writeBytes(line);
        return Frame.original(wire, line.length - 1, sniffer.sniff(wire.slice(0, line.length - 1)), direction,
                direction == Direction.CLIENT_TO_SERVER ? clientSeq++ : serverSeq++);
    }

    private static String call(long id, String tool) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":{\"q\":1}}}";
    }

    private static String result(long id) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{\"content\":[]}}";
    }

    private List<JournalEntry> entries() {
        return recorder.journal().entries();
    }

    @Test
    void aDroppedRequestIsNotDeliveredAndSaysWhichRuleDroppedIt() {
        start("rules:\n  - name: lose\n    match: {tool: write}\n    fault: {type: drop}\n", false);
        chain.process(frame(Direction.CLIENT_TO_SERVER, call(1, "write")));
        chain.process(frame(Direction.CLIENT_TO_SERVER, call(2, "read")));
        chain.process(frame(Direction.SERVER_TO_CLIENT, result(2)));

        assertThat(toServer).hasSize(1);
        assertThat(entries()).extracting(e -> e.direction().arrow() + " " + e.kind() + " " + e.id() + " " + e.method()
                        + " " + e.tool() + " " + e.delivered())
                .containsExactly("c->s REQUEST 1 tools/call write false", "c->s REQUEST 2 tools/call read true",
                        "s->c RESPONSE 2 tools/call read true");
        assertThat(entries().get(0).faults()).containsExactly(new JournalEntry.FaultAction("lose", "drop", "dropped"));
        assertThat(entries().get(1).faults()).isEmpty();
        assertThat(entries().get(0).paramsFingerprint()).hasSize(16)
                .isNotEqualTo(entries().get(1).paramsFingerprint()); // params.name differs
        assertThat(entries().get(2).paramsFingerprint()).isNull(); // only requests have one
    }

    @Test
    void aHeldAnswerIsDeliveredWhenItLeavesAndTheOnesBehindItToo() {
        start("rules:\n  - name: slow\n    match: {kind: response}\n    times: 1\n"
                + "    fault: {type: latency, latency: 500ms}\n", false);
        chain.process(frame(Direction.CLIENT_TO_SERVER, call(1, "a")));
        chain.process(frame(Direction.CLIENT_TO_SERVER, call(2, "b")));
        chain.process(frame(Direction.SERVER_TO_CLIENT, result(1)));
        chain.process(frame(Direction.SERVER_TO_CLIENT, result(2))); // waits behind the held one
        assertThat(toClient).isEmpty();
        assertThat(entries()).filteredOn(e -> e.kind() == MessageKind.RESPONSE).extracting(JournalEntry::delivered)
                .containsExactly(false, false);

        channel.advanceTimeBy(500, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        channel.runPendingTasks();
        assertThat(toClient).hasSize(2);
        List<JournalEntry> answers = entries().stream().filter(e -> e.kind() == MessageKind.RESPONSE).toList();
        assertThat(answers).extracting(JournalEntry::delivered).containsExactly(true, true);
        assertThat(answers.get(0).faults()).singleElement().satisfies(f -> {
            assertThat(f.rule()).isEqualTo("slow");
            assertThat(f.fault()).isEqualTo("latency");
            assertThat(f.detail()).contains("500");
        });
        assertThat(answers.get(0).tool()).isEqualTo("a"); // the tool of the request it answers
        assertThat(answers.get(1).faults()).isEmpty();
    }

    @Test
    void withoutRulesMessagesAreObservedAndStillDelivered() {
        start("rules: []\n", true);
        chain.observe(frame(Direction.CLIENT_TO_SERVER, call(1, "a")));
        chain.observe(frame(Direction.CLIENT_TO_SERVER, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                + "\"params\":{\"requestId\":1}}"));
        assertThat(entries()).extracting(JournalEntry::delivered).containsExactly(true, true);
        assertThat(entries().get(1).requestId()).isEqualTo(1L);
        assertThat(entries().get(0).message()).isEqualTo(call(1, "a")); // content kept when asked
        recorder.journal().verify().client().cancelled(toolCall("a"));
    }

    @Test
    void aDuplicatedAnswerIsOneEntryDeliveredWithTheRuleThatCopiedIt() {
        start("rules:\n  - name: twice\n    match: {kind: response}\n    fault: {type: duplicate}\n", false);
        chain.process(frame(Direction.CLIENT_TO_SERVER, call(1, "a")));
        chain.process(frame(Direction.SERVER_TO_CLIENT, result(1)));
        assertThat(toClient).hasSize(2);
        assertThat(entries()).hasSize(2);
        assertThat(entries().get(1).delivered()).isTrue();
        assertThat(entries().get(1).faults()).extracting(JournalEntry.FaultAction::fault).containsExactly("duplicate");
    }

    /** A transport that answers (or cannot answer) a fault's HTTP status, noting what the journal said then. */
    private final class AnsweringTransport implements HttpFaultActions {
        private final boolean answers;
        final List<Integer> journalSaidWhenAnswering = new ArrayList<>();

        AnsweringTransport(boolean answers) {
            this.answers = answers;
        }

        @Override
        public boolean respond(InterceptorContext ctx, Frame frame, int status, Map<String, String> headers, String body) {
            journalSaidWhenAnswering.add(entries().get(entries().size() - 1).httpStatus());
            return answers;
        }

        @Override
        public boolean overrideContentType(InterceptorContext ctx, Frame frame, String contentType) {
            return false;
        }

        @Override
        public boolean expireSession(InterceptorContext ctx, Frame frame) {
            return false;
        }
    }

    private static final String BUSY = "rules:\n  - name: busy\n    match: {tool: a}\n"
            + "    fault: {type: http_status, status: 503, headers: {Retry-After: \"2\"}}\n";

    @Test
    void anHttpStatusIsInTheJournalBeforeTheTransportWritesIt() {
        AnsweringTransport answering = new AnsweringTransport(true);
        start(BUSY, false, TransportKind.HTTP, answering);
        chain.process(frame(Direction.CLIENT_TO_SERVER, call(1, "a")));

        assertThat(answering.journalSaidWhenAnswering).as("a client may read the journal as soon as it has the 503")
                .containsExactly(503);
        assertThat(entries().get(0).httpStatus()).isEqualTo(503);
        assertThat(entries().get(0).httpHeader("Retry-After")).isEqualTo("2");
    }

    @Test
    void anHttpStatusTheTransportCouldNotAnswerIsTakenBackOutOfTheJournal() {
        AnsweringTransport refusing = new AnsweringTransport(false);
        start(BUSY, false, TransportKind.HTTP, refusing);
        chain.process(frame(Direction.CLIENT_TO_SERVER, call(1, "a")));

        assertThat(refusing.journalSaidWhenAnswering).containsExactly(503);
        assertThat(entries().get(0).httpStatus()).as("not answered: the note is taken back").isNull();
        assertThat(entries().get(0).httpHeaders()).isEmpty();
    }

    /** The stdio chain's connection, which these rules never act on. */
    private static final class NoConnection implements ConnectionControl {
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

    /**
     * What the transport says of a client that left: the request whose exchange it closed before the
     * answer notes when, and the answer the transport then could not write is not delivered. Only
     * the newest entry of that session and id: another session's is left alone.
     */
    @Test
    void aClientThatLeftBeforeTheAnswerIsJournaled() {
        JournalRing ring = new JournalRing(16);
        JournalRecorder recorder = new JournalRecorder(ring, false);
        for (String session : List.of("http-3", "http-4")) {
            ring.add(new JournalEntry(0, java.time.Duration.ofSeconds(1), java.time.Instant.EPOCH, session, "http",
                    Direction.CLIENT_TO_SERVER, MessageKind.REQUEST, 1L, "tools/call", "slow", null, null, null, null,
                    true, null, null));
            ring.add(new JournalEntry(0, java.time.Duration.ofSeconds(1), java.time.Instant.EPOCH, session, "http",
                    Direction.SERVER_TO_CLIENT, MessageKind.RESPONSE, 1L, "tools/call", "slow", null, null, null, null,
                    true, null, null));
        }
        var observer = recorder.transportObserver();
        observer.exchangeAbandoned(TransportKind.HTTP, "http-3", 1L);
        observer.messageDiscarded(TransportKind.HTTP, "http-3", Direction.SERVER_TO_CLIENT, MessageKind.RESPONSE, 1L,
                "tools/call", dev.mcpchaos.core.observe.TransportObserver.DiscardReason.CLIENT_GONE);
        observer.messageDiscarded(TransportKind.HTTP, "http-4", Direction.SERVER_TO_CLIENT, MessageKind.RESPONSE, 1L,
                "tools/call", dev.mcpchaos.core.observe.TransportObserver.DiscardReason.RESPONSE_ENDED);
        List<JournalEntry> entries = ring.snapshot().entries();
        assertThat(entries.get(0).clientClosed()).isNotNull();
        assertThat(entries.get(1).delivered()).isFalse();
        assertThat(entries.get(2).clientClosed()).isNull();
        assertThat(entries.get(3).delivered()).as("a second answer to an ended response is another matter").isTrue();
    }
}
