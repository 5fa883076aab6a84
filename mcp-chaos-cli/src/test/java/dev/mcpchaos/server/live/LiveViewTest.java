package dev.mcpchaos.server.live;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.RuleStats;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The live view drawn on a byte array standing in for the terminal, on a clock the test moves. */
class LiveViewTest {

    private static final String UP_CLEAR = "\r\u001b[%dA\u001b[J";
    private static final Duration NEVER = Duration.ofHours(1); // the timer never fires: the test redraws

    private final ByteArrayOutputStream terminal = new ByteArrayOutputStream();
    private final AtomicLong clock = new AtomicLong(5_000_000_000L);
    private final AtomicReference<LiveSnapshot> numbers = new AtomicReference<>();
    private final LiveView view = new LiveView(terminal, 100, clock::get);

    @AfterEach
    void tearDown() {
        view.close();
    }

    private static final List<RuleStats> SEVEN_RULES = List.of(
            new RuleStats("slow", true, "latency", 40, 12),
            new RuleStats("drop-search", true, "drop", 5, 5),
            new RuleStats("off-rule", false, "error", 0, 0),
            new RuleStats("noisy", true, "noise", 9, 1),
            new RuleStats("a", true, "error", 2, 0),
            new RuleStats("b", true, "error", 1, 0),
            new RuleStats("c", true, "error", 0, 0));

    private static FaultEvent fault(long seq, long millis, Direction direction, String rule, String fault,
                                    String method, String tool) {
        return new FaultEvent(seq, Duration.ofMillis(millis), "stdio", direction, rule, fault, MessageKind.REQUEST,
                seq, method, tool, "held 10ms", null);
    }

    private static final List<FaultEvent> TWO_FAULTS = List.of(
            fault(11, 1_234, Direction.CLIENT_TO_SERVER, "slow", "latency", "tools/call", "search"),
            fault(12, 61_960, Direction.SERVER_TO_CLIENT, "drop-search", "drop", null, null));

    private static LiveSnapshot snapshot(long toServer, long toClient, List<RuleStats> rules, List<FaultEvent> faults) {
        return new LiveSnapshot(Duration.ofSeconds(62), 42, true, toServer, toClient, 12_595, 1_258_291, 1, rules,
                faults);
    }

    /** Everything written since the last call. */
    private String written() {
        String text = terminal.toString(StandardCharsets.UTF_8);
        terminal.reset();
        return text;
    }

    /** Writes {@code text} to the view's log stream, as a logger or a stderr copier would. */
    private void write(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        try {
            view.logs().write(bytes, 0, bytes.length);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String block(String... lines) {
        return String.join("\n", lines) + "\n";
    }

    @Test
    void theBlockShowsTheNumbersTheBusiestRulesAndTheLastFaults() {
        numbers.set(snapshot(120, 118, SEVEN_RULES, TWO_FAULTS));
        view.start(numbers::get, NEVER);

        String first = block(
                "mcp-chaos  up 1m02s  seed 42  faults on  sessions 1",
                "  c->s       120 msgs     0.0/s    12.3 KiB",
                "  s->c       118 msgs     0.0/s     1.2 MiB",
                "  rules  matched/injected",
                "    slow         latency  40/12",
                "    drop-search  drop     5/5",
                "    noisy        noise    9/1",
                "    a            error    2/0",
                "    b            error    1/0",
                "    +2 more",
                "  last faults",
                "    +1.2s c->s rule 'slow' latency tools/call search",
                "    +62.0s s->c rule 'drop-search' drop");
        assertThat(written()).isEqualTo(first); // the first frame: nothing to move back over

        // A second later, 10 more messages to the server and 4 to the client: the rates say so.
        clock.addAndGet(TimeUnit.SECONDS.toNanos(1));
        numbers.set(snapshot(130, 122, SEVEN_RULES, TWO_FAULTS));
        view.redraw();
        assertThat(written()).isEqualTo(UP_CLEAR.formatted(13) + first
                .replace("  c->s       120 msgs     0.0/s", "  c->s       130 msgs    10.0/s")
                .replace("  s->c       118 msgs     0.0/s", "  s->c       122 msgs     4.0/s"));
    }

    @Test
    void theRatesAreTakenOverTheLastSecond() {
        numbers.set(snapshot(0, 0, List.of(), List.of()));
        view.start(numbers::get, NEVER);
        for (int i = 1; i <= 8; i++) { // every 250 ms, 5 more messages to the server: 20 a second
            clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(250));
            numbers.set(snapshot(5L * i, 0, List.of(), List.of()));
            view.redraw();
        }
        clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(250)); // then nothing for a quarter of a second
        view.redraw();
        assertThat(written()).endsWith(block(
                "mcp-chaos  up 1m02s  seed 42  faults on  sessions 1",
                "  c->s        40 msgs    15.0/s    12.3 KiB",
                "  s->c         0 msgs     0.0/s     1.2 MiB",
                "  rules: none",
                "  last faults: none yet"));
    }

    @Test
    void eachRedrawMovesUpByTheHeightOfTheBlockBefore() {
        numbers.set(snapshot(1, 1, List.of(), List.of()));
        view.start(numbers::get, NEVER);
        String first = written();
        assertThat(first).doesNotContain("\u001b").hasLineCount(5);

        numbers.set(snapshot(2, 2, SEVEN_RULES.subList(0, 1), TWO_FAULTS));
        view.redraw();
        String second = written();
        assertThat(second).startsWith(UP_CLEAR.formatted(5));
        assertThat(second.substring(UP_CLEAR.formatted(5).length())).hasLineCount(8);

        numbers.set(snapshot(3, 3, List.of(), List.of()));
        view.redraw();
        String third = written();
        assertThat(third).startsWith(UP_CLEAR.formatted(8));
        assertThat(third.substring(UP_CLEAR.formatted(8).length())).doesNotContain("\u001b").hasLineCount(5);
    }

    @Test
    void aLogLineIsPrintedAboveTheBlockWhichIsDrawnAgainBelowIt() {
        numbers.set(snapshot(1, 1, List.of(), List.of()));
        view.start(numbers::get, NEVER);
        String block = written();

        PrintStream err = new PrintStream(view.logs(), true, StandardCharsets.UTF_8);
        err.println("12:00:00.000 mcp-chaos INFO  faults: #1 +0.1s stdio c->s rule 'slow' latency");
        assertThat(written()).isEqualTo(UP_CLEAR.formatted(5)
                + "12:00:00.000 mcp-chaos INFO  faults: #1 +0.1s stdio c->s rule 'slow' latency\n" + block);

        // Two lines in one write: one move, both lines, one block.
        err.print("first\nsecond\n");
        assertThat(written()).isEqualTo(UP_CLEAR.formatted(5) + "first\nsecond\n" + block);
    }

    @Test
    void aLineComesWholeEvenInPiecesAndFromSeveralThreads() throws Exception {
        numbers.set(snapshot(1, 1, List.of(), List.of()));
        view.start(numbers::get, NEVER);
        String block = written();

        write("the server's ");
        assertThat(written()).isEmpty(); // waits for its newline
        Thread other = new Thread(() -> write("a log line\nand the start of "));
        other.start();
        other.join();
        assertThat(written()).isEqualTo(UP_CLEAR.formatted(5) + "a log line\n" + block);
        write("line\n");
        assertThat(written()).isEqualTo(UP_CLEAR.formatted(5) + "the server's line\n" + block);

        // What still waits for its newline at the end is printed, with one, before the last block.
        view.close();
        assertThat(written()).isEqualTo(UP_CLEAR.formatted(5) + "and the start of \n" + block
                + UP_CLEAR.formatted(5) + block);
    }

    @Test
    void closingDrawsTheFinalNumbersLeavesThemAndLetsLaterTextThrough() throws Exception {
        numbers.set(snapshot(1, 1, List.of(), List.of()));
        view.start(numbers::get, NEVER);
        written();
        clock.addAndGet(TimeUnit.SECONDS.toNanos(1));
        numbers.set(snapshot(7, 3, List.of(), List.of()));
        view.close();
        String last = written();
        assertThat(last).startsWith(UP_CLEAR.formatted(5)).endsWith("\n")
                .contains("  c->s         7 msgs     6.0/s", "  s->c         3 msgs     2.0/s");

        write("after the end\n");
        assertThat(written()).isEqualTo("after the end\n"); // no block to move over any more
        view.redraw();
        assertThat(written()).isEmpty();
    }

    @Test
    void beforeTheFirstFrameLogsGoStraightThrough() throws Exception {
        write("starting\n");
        assertThat(written()).isEqualTo("starting\n");
    }

    @Test
    void theTimerRedrawsOnItsOwn() {
        numbers.set(snapshot(1, 1, List.of(), List.of()));
        view.start(numbers::get, Duration.ofMillis(10));
        await().atMost(Duration.ofSeconds(10)).until(() ->
                terminal.toString(StandardCharsets.UTF_8).split(UP_CLEAR.formatted(5).replace("[", "\\["), -1).length > 3);
    }

    @Test
    void linesAreCutToTheTerminalsWidth() {
        LiveView narrow = new LiveView(terminal, 30, clock::get);
        narrow.start(() -> snapshot(1, 1, SEVEN_RULES, TWO_FAULTS), NEVER);
        narrow.close();
        for (String line : written().split("\n")) {
            assertThat(line.replaceAll("\r?\u001b\\[\\d*[AJ]", "")).hasSizeLessThanOrEqualTo(29);
        }
    }
}
