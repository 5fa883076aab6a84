package dev.mcpchaos.server.matrix;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.FaultEvent;
import org.assertj.core.api.SoftAssertions;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * What one cell of the matrix expects the client (and the server) to get, and the rules to say.
 * Starts from the shape's traffic without any fault ({@link #of}); a cell states what its fault
 * changes. {@link #check} asserts all of it softly, so a failing cell lists every difference.
 *
 * <p>Times: a lower bound is strict (not one millisecond before the delay); the upper bound is
 * the delay plus {@link #SLACK_MS}, generous for a busy machine.
 */
final class Expect {

    // 1.5 s failed six cells at a load average of 20 on two cores; the lower bounds are what pin a delay.
    static final long SLACK_MS = 2_500;

    /** An expected SSE event: its {@code id} field (null: none) and its data. */
    record Ev(String id, Exp data, Long retry) {
        Ev(String id, Exp data) {
            this(id, data, null);
        }

        @Override
        public String toString() {
            return (retry == null ? "" : "retry: " + retry + " ") + (id == null ? "" : "id: " + id + " ") + "data: "
                    + data;
        }
    }

    /** An expected HTTP answer. */
    record Answer(int status, String contentType, Exp body, List<Ev> events, RawExchange.End end,
                  Map<String, String> headers) {
        @Override
        public String toString() {
            return status < 0 ? "no response (" + end + ")"
                    : "HTTP " + status + " " + contentType + (events != null ? " " + events : " " + body) + " " + end;
        }
    }

    /** The content type of an answer that must not claim JSON (its body is not). */
    static final String NOT_JSON = "(not application/json)";
    static final Ev PRIMING_T = new Ev("t-0", Exp.is(""));
    static final Ev PRIMING_G = new Ev("g-0", Exp.is(""));

    final Shape shape;
    // the rules' account
    private String fault;
    private String detail;
    private boolean noOp;
    private String forbiddenDetail;
    private String refusal;
    String awaits;
    // stdio
    private List<Exp> lines;
    private List<Exp> linesOr;
    private List<Exp> server;
    private List<Exp> serverOr;
    private Integer exit;
    // http
    private final Map<String, Answer> answers = new LinkedHashMap<>();
    private List<Exp> upstream;
    private boolean upstreamAnyOrder;
    private long maxDelayMs;
    private final List<BiConsumer<Outcome, SoftAssertions>> timings = new ArrayList<>();

    private Expect(Shape shape) {
        this.shape = shape;
    }

    /** The shape's traffic as it is without a fault: the rule picks nothing. */
    static Expect of(Shape shape) {
        Expect e = new Expect(shape);
        switch (shape) {
            case STDIO_CLIENT_REQUEST:
            case STDIO_SERVER_RESPONSE:
                return e.lines(Msg.T_RESULT, Msg.W_RESULT).server(Msg.T_CALL, Msg.W_CALL).exit(0);
            case STDIO_SERVER_NOTIFICATION:
                return e.lines(Msg.PROGRESS, Msg.T_RESULT).server(Msg.T_CALL).exit(0);
            case STDIO_SERVER_REQUEST:
                return e.lines(Msg.ROOTS, Msg.NOTE_AFTER, Msg.ASK_ANSWERED).server(Msg.ASK, Msg.ROOTS_ANSWER).exit(0);
            case HTTP_POST_REQUEST:
            case HTTP_JSON_ANSWER:
                return e.session().answer("target", json(Msg.T_RESULT)).answer("witness", json(Msg.W_RESULT))
                        .upstream(Msg.T_CALL, Msg.W_CALL, Msg.PING);
            case HTTP_SSE_FINAL:
                return e.session().answer("target", sse(RawExchange.End.CLEAN, PRIMING_T, ev("t-1", Msg.T_RESULT)))
                        .answer("witness", json(Msg.W_RESULT)).upstream(Msg.T_CALL, Msg.W_CALL, Msg.PING);
            case HTTP_SSE_MID:
                return e.session().answer("target", sse(RawExchange.End.CLEAN, PRIMING_T, ev("t-1", Msg.PROGRESS),
                                ev("t-2", Msg.T_RESULT)))
                        .answer("witness", json(Msg.W_RESULT)).upstream(Msg.T_CALL, Msg.W_CALL, Msg.PING);
            case HTTP_GET_EVENT:
                return e.session().answer("get", sse(RawExchange.End.CLEAN, PRIMING_G, ev("g-1", Msg.NOTE_T),
                        ev("g-2", Msg.NOTE_W))).upstream(Msg.PING);
            case HTTP_SESSIONLESS_POST:
                return e.answer("target", json(Msg.T_RESULT)).answer("witness", json(Msg.W_RESULT))
                        .answer("ping", json(Msg.PONG)).upstream(Msg.T_CALL, Msg.W_CALL, Msg.PING);
            default:
                throw new IllegalArgumentException(shape.name());
        }
    }

    /** A cell where the proxy refuses the rule when it is loaded. */
    static Expect refused(Shape shape, String message) {
        Expect e = new Expect(shape);
        e.refusal = message;
        return e;
    }

    private Expect session() {
        answers.put("init", json(Msg.INIT_RESULT));
        answers.put("ping", json(Msg.PONG));
        return this;
    }

    // ---- answers -----------------------------------------------------------------------------------------

    static Ev ev(String id, Object data) {
        return new Ev(id, Exp.of(data));
    }

    /** An event that must also carry the field {@code retry: <retry>} ({@code ev}'s events are not asked about it). */
    static Ev evRetry(String id, Object data, long retry) {
        return new Ev(id, Exp.of(data), retry);
    }

    static Answer json(Object body) {
        return new Answer(200, "application/json", Exp.of(body), null, RawExchange.End.CLEAN, Map.of());
    }

    static Answer status(int status, String contentType, Object body, Map<String, String> headers) {
        return new Answer(status, contentType, Exp.of(body), null, RawExchange.End.CLEAN, headers);
    }

    static Answer sse(RawExchange.End end, Ev... events) {
        return new Answer(200, "text/event-stream", null, List.of(events), end, Map.of());
    }

    /** No byte of an answer by the deadline: the client is left waiting. */
    static Answer hanging() {
        return new Answer(-1, null, null, null, RawExchange.End.NONE, Map.of());
    }

    /** The connection closed without a byte of an answer. */
    static Answer closedNoBytes() {
        return new Answer(-1, null, null, null, RawExchange.End.CLOSED, Map.of());
    }

    // ---- setters ---------------------------------------------------------------------------------------

    Expect lines(Object... expected) {
        lines = Exp.list(expected);
        linesOr = null;
        return this;
    }

    /** Stdio: the client's lines are one of these lists (a race the proxy cannot decide). */
    Expect linesOneOf(List<Object> first, List<Object> second) {
        lines = Exp.list(first.toArray());
        linesOr = Exp.list(second.toArray());
        return this;
    }

    /** Stdio: the server's lines are one of these lists. */
    Expect serverOneOf(List<Object> first, List<Object> second) {
        server = Exp.list(first.toArray());
        serverOr = Exp.list(second.toArray());
        return this;
    }

    Expect server(Object... expected) {
        server = Exp.list(expected);
        serverOr = null;
        return this;
    }

    Expect exit(Integer code) {
        exit = code;
        return this;
    }

    Expect answer(String exchange, Answer answer) {
        answers.put(exchange, answer);
        return this;
    }

    /** The POST bodies that reached the upstream after {@code initialize}, in order. */
    Expect upstream(Object... bodies) {
        upstream = Exp.list(bodies);
        upstreamAnyOrder = false;
        return this;
    }

    /** The same, in any order: two client connections race to the upstream. */
    Expect upstreamAnyOrder(Object... bodies) {
        upstream(bodies);
        upstreamAnyOrder = true;
        return this;
    }

    /** The rule injects its fault once, and the event says so: detail as a regex. */
    Expect injects(String type, String detailRegex) {
        fault = type;
        detail = detailRegex;
        return this;
    }

    /**
     * The fault cannot act on this message: it passes as without the rule, and nothing is
     * counted as injected (an event, if any, must not claim what did not happen).
     */
    Expect noOp(String type, String forbiddenDetailRegex) {
        fault = type;
        noOp = true;
        forbiddenDetail = forbiddenDetailRegex;
        return this;
    }

    /** Marks a cell known to fail until another engineer's fix is merged. */
    Expect awaits(String marker) {
        awaits = marker;
        return this;
    }

    // ---- timings -------------------------------------------------------------------------------------

    /** Stdio: the client's line {@code index} completes at least {@code ms} after the target left. */
    Expect lineAt(int index, long ms) {
        maxDelayMs = Math.max(maxDelayMs, ms);
        timings.add((o, s) -> {
            if (index < o.clientLines.size()) {
                within(s, "line " + index + " " + o.clientLines.get(index).text(), o.clientLines.get(index).at() - o.t0,
                        ms);
            }
        });
        return this;
    }

    /**
     * Stdio: the client's line {@code index} arrived in pieces, its first byte at least
     * {@code ms} before its newline. The pieces are timed from when the first one was written;
     * its delivery to the client may lag by a few milliseconds, which this bound allows for (the
     * strict bound is {@link #lineAt} on the whole line).
     */
    Expect linePieces(int index, long ms) {
        timings.add((o, s) -> {
            if (index < o.clientLines.size()) {
                Outcome.Line line = o.clientLines.get(index);
                s.assertThat(millis(line.at() - line.firstAt())).as("line %d came in pieces: first byte to newline",
                        index).isGreaterThanOrEqualTo(ms);
            }
        });
        return this;
    }


    /** HTTP: the upstream received the body {@code body} at least {@code ms} after the target left the client. */
    Expect upstreamAt(String body, long ms) {
        maxDelayMs = Math.max(maxDelayMs, ms);
        timings.add((o, s) -> o.upstream.stream().filter(r -> r.body().equals(body)).findFirst().ifPresentOrElse(
                r -> within(s, "the upstream received " + abbreviate(body), r.at() - o.t0, ms),
                () -> s.fail("the upstream never received " + body)));
        return this;
    }

    /**
     * HTTP: the client received the scripted message {@code name} (as {@link ScriptedMcpUpstream}
     * names it: T_RESULT, PROGRESS, NOTE_T) at least {@code ms} after the upstream wrote it.
     */
    Expect deliveredAfter(String name, String text, long ms) {
        maxDelayMs = Math.max(maxDelayMs, ms);
        timings.add((o, s) -> {
            Long written = o.upstreamSent.get(name);
            long got = arrival(o, text);
            if (written == null) {
                s.fail("the upstream never wrote " + name);
            } else if (got < 0) {
                s.fail("the client never received " + name + " (" + abbreviate(text) + ")");
            } else {
                within(s, name + " from the upstream's write to the client", got - written, ms);
            }
        });
        return this;
    }

    /** HTTP: the exchange {@code later}'s answer arrived no earlier than {@code earlier}'s (held behind it). */
    Expect answeredAfter(String later, String earlier) {
        timings.add((o, s) -> {
            long a = lastByte(o.exchange(later));
            long b = lastByte(o.exchange(earlier));
            s.assertThat(a).as("%s answered (+%s) after %s (+%s)", later, Outcome.ms(a - o.t0), earlier,
                    Outcome.ms(b - o.t0)).isGreaterThanOrEqualTo(b);
        });
        return this;
    }

    /**
     * HTTP: the exchange's answer arrived no earlier than {@code ms} after the upstream wrote the
     * message {@code name}: it waited behind that held message. (Not "after its answer": two
     * answers released in order on two connections reach the client in either order within a
     * millisecond.)
     */
    Expect answeredNotBefore(String exchange, String name, long ms) {
        timings.add((o, s) -> {
            Long written = o.upstreamSent.get(name);
            if (written == null) {
                s.fail("the upstream never wrote " + name);
                return;
            }
            long got = lastByte(o.exchange(exchange));
            s.assertThat(millisExact(got - written)).as("%s answered (+%s) not before %s was released (+%dms)",
                    exchange, Outcome.ms(got - o.t0), name, ms).isGreaterThanOrEqualTo(ms);
        });
        return this;
    }


    private static long lastByte(RawExchange exchange) {
        return Math.max(exchange.bodyAt(), exchange.headAt());
    }

    /** When the client received a message with exactly this text, in any exchange; -1 if never. */
    private static long arrival(Outcome o, String text) {
        for (RawExchange exchange : o.exchanges.values()) {
            if (exchange.body().equals(text)) {
                return exchange.bodyAt();
            }
            for (RawExchange.SseEvent event : exchange.events()) {
                if (event.data().equals(text)) {
                    return event.at();
                }
            }
        }
        return -1;
    }

    private static void within(SoftAssertions s, String what, long nanos, long minMs) {
        s.assertThat(millisExact(nanos)).as("%s: not before %dms", what, minMs).isGreaterThanOrEqualTo(minMs);
        s.assertThat(millisExact(nanos)).as("%s: within %dms + %dms", what, minMs, SLACK_MS)
                .isLessThanOrEqualTo(minMs + SLACK_MS);
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    /** Not rounded, so that a lower bound is strict: 199.9 ms is not 200 ms. */
    private static double millisExact(long nanos) {
        return nanos / 1e6;
    }

    // ---- the check ----------------------------------------------------------------------------------------

    /** Asserts the outcome; throws an AssertionError listing every difference. */
    void check(Outcome o) {
        SoftAssertions s = new SoftAssertions();
        if (refusal != null) {
            s.assertThat(o.refusal).as("the proxy refuses the rule when it is loaded").isEqualTo(refusal);
            s.assertAll();
            return;
        }
        s.assertThat(o.refusal).as("the proxy started").isNull();
        if (o.refusal != null) {
            s.assertAll();
            return;
        }
        if (shape.isStdio()) {
            checkStdio(o, s);
        } else {
            checkHttp(o, s);
        }
        timings.forEach(t -> t.accept(o, s));
        checkAccount(o, s);
        s.assertAll();
    }

    private void checkStdio(Outcome o, SoftAssertions s) {
        matchesOneOf(s, "the client's lines", o.clientTexts(), lines, linesOr);
        matchesOneOf(s, "the lines that reached the server", o.serverLines, server, serverOr);
        s.assertThat(o.eofAt).as("the client's input from the proxy ended").isGreaterThanOrEqualTo(0);
        for (Outcome.Line line : o.clientLines) {
            s.assertThat(o.eofAt).as("the end of the output comes after every line").isGreaterThanOrEqualTo(line.at());
            s.assertThat(millisExact(line.at() - o.t0)).as("line %s arrived within %dms", line.text(),
                    maxDelayMs + SLACK_MS).isLessThanOrEqualTo(maxDelayMs + SLACK_MS);
        }
        if (exit != null) {
            s.assertThat(o.exitCode).as("the server's exit code").isEqualTo(exit);
        }
    }

    private void checkHttp(Outcome o, SoftAssertions s) {
        s.assertThat(o.exchanges.keySet()).as("the exchanges").containsExactlyInAnyOrderElementsOf(answers.keySet());
        answers.forEach((name, expected) -> {
            RawExchange actual = o.exchanges.get(name);
            if (actual != null) {
                checkAnswer(s, o, name, expected, actual);
            }
        });
        List<String> posts = new ArrayList<>(o.upstreamPosts());
        posts.remove(Msg.INIT);
        matches(s, "the POST bodies that reached the upstream", posts, upstream, upstreamAnyOrder);
        long gets = o.upstream.stream().filter(r -> r.method().equals("GET")).count();
        s.assertThat(gets).as("GET streams opened upstream").isEqualTo(shape == Shape.HTTP_GET_EVENT ? 1 : 0);
    }

    private void checkAnswer(SoftAssertions s, Outcome o, String name, Answer expected, RawExchange actual) {
        if (expected.status < 0) {
            s.assertThat(actual.status()).as("%s: no response", name).isEqualTo(-1);
            s.assertThat(actual.end()).as("%s: how it ended", name).isEqualTo(expected.end);
            return;
        }
        s.assertThat(actual.status()).as("%s: the status", name).isEqualTo(expected.status);
        if (NOT_JSON.equals(expected.contentType)) {
            s.assertThat(actual.header("Content-Type")).as("%s: the content type of a body that is not JSON", name)
                    .doesNotStartWith("application/json");
        } else {
            s.assertThat(actual.header("Content-Type")).as("%s: the content type", name)
                    .isEqualTo(expected.contentType);
        }
        expected.headers.forEach((header, value) -> s.assertThat(actual.header(header)).as("%s: %s", name, header)
                .isEqualTo(value));
        s.assertThat(actual.end()).as("%s: how the answer ended", name).isEqualTo(expected.end);
        if (expected.events != null) {
            List<RawExchange.SseEvent> events = actual.events();
            boolean same = events.size() == expected.events.size();
            for (int i = 0; same && i < events.size(); i++) {
                Ev want = expected.events.get(i);
                same = Objects.equals(events.get(i).id(), want.id) && want.data.test(events.get(i).data())
                        && (want.retry == null || events.get(i).raw().contains("retry: " + want.retry + "\n"));
            }
            if (!same) {
                s.fail("%s: the SSE events%n  expected: %s%n  got:      %s", name, expected.events,
                        events.stream().map(e -> e.raw().replace("\n", "\\n")).toList());
            }
            for (RawExchange.SseEvent event : events) {
                s.assertThat(actual.endAt()).as("%s: the stream ends after its events, not before", name)
                        .isGreaterThanOrEqualTo(event.at());
                s.assertThat(millisExact(event.at() - o.t0)).as("%s: event %s within %dms", name, event.id(),
                        maxDelayMs + SLACK_MS).isLessThanOrEqualTo(maxDelayMs + SLACK_MS);
            }
        } else {
            s.assertThat(expected.body.test(actual.body())).as("%s: the body%n  expected: %s%n  got:      %s", name,
                    expected.body, actual.body()).isTrue();
        }
    }

    private void checkAccount(Outcome o, SoftAssertions s) {
        if (fault == null) {
            s.assertThat(o.events).as("fault events (the rule picks nothing here)").isEmpty();
            s.assertThat(o.stats.matched()).as("the rule's matched count").isZero();
            s.assertThat(o.stats.injected()).as("the rule's injected count").isZero();
            s.assertThat(o.injectedMeter).as("mcp.chaos.faults.injected").isZero();
            return;
        }
        if (noOp) {
            s.assertThat(o.stats.injected()).as("the rule's injected count: the fault could not act").isZero();
            s.assertThat(o.injectedMeter).as("mcp.chaos.faults.injected: the fault could not act").isZero();
            for (FaultEvent event : o.events) {
                s.assertThat(event.detail()).as("a fault event must not claim what did not happen")
                        .doesNotContainPattern(forbiddenDetail);
            }
            return;
        }
        s.assertThat(o.events).as("fault events").hasSize(1);
        s.assertThat(o.stats.matched()).as("the rule's matched count").isEqualTo(1);
        s.assertThat(o.stats.injected()).as("the rule's injected count").isEqualTo(1);
        s.assertThat(o.injectedMeter).as("mcp.chaos.faults.injected{rule=cell}").isEqualTo(1.0);
        if (o.events.isEmpty()) {
            return;
        }
        FaultEvent event = o.events.get(0);
        s.assertThat(event.rule()).as("the event's rule").isEqualTo(Scenario.RULE);
        s.assertThat(event.fault()).as("the event's fault").isEqualTo(fault);
        s.assertThat(event.detail()).as("the event's detail").matches(detail);
        Direction direction;
        MessageKind kind;
        Object id;
        String method;
        String tool;
        switch (shape) {
            case STDIO_CLIENT_REQUEST:
            case HTTP_POST_REQUEST:
            case HTTP_SESSIONLESS_POST:
                direction = Direction.CLIENT_TO_SERVER;
                kind = MessageKind.REQUEST;
                id = 1L;
                method = "tools/call";
                tool = "target";
                break;
            case STDIO_SERVER_RESPONSE:
            case HTTP_JSON_ANSWER:
            case HTTP_SSE_FINAL:
                direction = Direction.SERVER_TO_CLIENT;
                kind = MessageKind.RESPONSE;
                id = 1L;
                method = "tools/call";
                tool = "target";
                break;
            case STDIO_SERVER_REQUEST:
                direction = Direction.SERVER_TO_CLIENT;
                kind = MessageKind.REQUEST;
                id = "s1";
                method = "roots/list";
                tool = null;
                break;
            default:
                direction = Direction.SERVER_TO_CLIENT;
                kind = MessageKind.NOTIFICATION;
                id = null;
                method = shape == Shape.HTTP_GET_EVENT ? "notifications/message" : "notifications/progress";
                tool = null;
                break;
        }
        s.assertThat(event.direction()).as("the event's direction").isEqualTo(direction);
        s.assertThat(event.kind()).as("the event's message kind").isEqualTo(kind);
        s.assertThat(event.id()).as("the event's JSON-RPC id").isEqualTo(id);
        s.assertThat(event.method()).as("the event's method").isEqualTo(method);
        s.assertThat(event.tool()).as("the event's tool").isEqualTo(tool);
        if (shape != Shape.HTTP_SESSIONLESS_POST) { // a sessionless POST's chain has an id of the proxy's making
            s.assertThat(event.session()).as("the event's session").isEqualTo(shape.isStdio() ? "stdio" : "s-1");
        }
    }

    private static void matchesOneOf(SoftAssertions s, String what, List<String> actual, List<Exp> expected,
                                     List<Exp> alternative) {
        if (alternative != null && same(actual, alternative, false)) {
            return;
        }
        matches(s, what + (alternative == null ? "" : " (or " + alternative + ")"), actual, expected, false);
    }

    private static void matches(SoftAssertions s, String what, List<String> actual, List<Exp> expected,
                                boolean anyOrder) {
        if (expected != null && !same(actual, expected, anyOrder)) {
            s.fail("%s%s%n  expected: %s%n  got:      %s", what, anyOrder ? " (in any order)" : "", expected,
                    actual.stream().map(Expect::abbreviate).toList());
        }
    }

    private static boolean same(List<String> actual, List<Exp> expected, boolean anyOrder) {
        boolean same = actual.size() == expected.size();
        if (same && !anyOrder) {
            for (int i = 0; same && i < actual.size(); i++) {
                same = expected.get(i).test(actual.get(i));
            }
        } else if (same) {
            List<String> left = new ArrayList<>(actual);
            for (Exp exp : expected) {
                String hit = left.stream().filter(exp::test).findFirst().orElse(null);
                same &= hit != null;
                left.remove(hit);
            }
        }
        return same;
    }

    private static String abbreviate(String text) {
        return text.length() <= 200 ? text : text.substring(0, 120) + "...(" + text.length() + " chars)";
    }
}
