package dev.mcpchaos.rules.journal;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.match.Glob;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@link MessagePattern}s assertions read like a sentence with:
 * {@code verify().client().sent(toolCall("search")).times(2)}. Names take globs ({@code search_*}).
 * A pattern of a method matches the requests of that method and the responses that answer them;
 * {@code client().sent(...)} then keeps what the client sent.
 *
 * <p>Outcomes: a message's fate is whether it left the proxy towards its destination
 * ({@link #delivered}, {@link #reachedServer}, {@link #reachedClient}) or not
 * ({@link #notDelivered}, {@link #notReachedServer}, {@link #notReachedClient}), and which rule
 * acted on it ({@link #dropped}, {@link #faulted}). {@link #sameArgumentsAs} and
 * {@link #toolCall(String, String)} compare what a request asked, idempotency keys aside.
 */
public final class Messages {

    private Messages() {
    }

    /** {@code tools/call} of a tool whose name matches {@code tool} (a glob), and answers to them. */
    public static MessagePattern toolCall(String tool) {
        Glob glob = Glob.of(Objects.requireNonNull(tool, "tool"));
        return new MessagePattern("tools/call of " + tool,
                e -> "tools/call".equals(e.method()) && e.tool() != null && glob.matches(e.tool()));
    }

    /** Messages whose method (or that of the request they answer) matches {@code method} (a glob). */
    public static MessagePattern method(String method) {
        Glob glob = Glob.of(Objects.requireNonNull(method, "method"));
        return new MessagePattern(method, e -> e.method() != null && glob.matches(e.method()));
    }

    /** Requests of {@code method} (a glob). */
    public static MessagePattern request(String method) {
        return kind(MessageKind.REQUEST).and(method(method)).describedAs("request " + method);
    }

    /** Notifications of {@code method} (a glob), such as {@code notifications/cancelled}. */
    public static MessagePattern notification(String method) {
        return kind(MessageKind.NOTIFICATION).and(method(method)).describedAs("notification " + method);
    }

    /** Responses and errors that answer requests of {@code method} (a glob). */
    public static MessagePattern response(String method) {
        return new MessagePattern("response to " + method,
                e -> (e.kind() == MessageKind.RESPONSE || e.kind() == MessageKind.ERROR) && method(method).test(e));
    }

    /** Messages of this kind. */
    public static MessagePattern kind(MessageKind kind) {
        Objects.requireNonNull(kind, "kind");
        return new MessagePattern(kind.name().toLowerCase(java.util.Locale.ROOT), e -> e.kind() == kind);
    }

    /** Any message. */
    public static MessagePattern any() {
        return new MessagePattern("any message", e -> true);
    }

    /**
     * Messages of {@code pattern} that a rule dropped: a fault acted on them and they never left
     * the proxy (a drop, a blackhole, an answer in their place such as {@code http_status}).
     */
    public static MessagePattern dropped(MessagePattern pattern) {
        Objects.requireNonNull(pattern, "pattern");
        return new MessagePattern("dropped " + pattern.description(),
                e -> pattern.test(e) && !e.faults().isEmpty() && !e.delivered());
    }

    /** Messages of {@code pattern} that a rule with this fault type or name acted on. */
    public static MessagePattern faulted(String faultOrRule, MessagePattern pattern) {
        Objects.requireNonNull(faultOrRule, "faultOrRule");
        Objects.requireNonNull(pattern, "pattern");
        return new MessagePattern(pattern.description() + " hit by " + faultOrRule,
                e -> pattern.test(e) && e.hadFault(faultOrRule));
    }

    /**
     * Messages of {@code pattern} that left the proxy towards their destination (or whose
     * replacement did): a client's message reached the server, a server's reached the client.
     */
    public static MessagePattern delivered(MessagePattern pattern) {
        Objects.requireNonNull(pattern, "pattern");
        return new MessagePattern(pattern.description() + " that was delivered",
                e -> pattern.test(e) && e.delivered());
    }

    /**
     * Messages of {@code pattern} that did not leave the proxy: a rule dropped them or answered in
     * their place, the connection went, or a latency still holds them (a held message becomes
     * delivered when it leaves).
     */
    public static MessagePattern notDelivered(MessagePattern pattern) {
        Objects.requireNonNull(pattern, "pattern");
        return new MessagePattern(pattern.description() + " that was not delivered",
                e -> pattern.test(e) && !e.delivered());
    }

    /**
     * What the client sent of {@code pattern} that the server received. A request that reached
     * the server may have been carried out, whatever became of its answer.
     */
    public static MessagePattern reachedServer(MessagePattern pattern) {
        Objects.requireNonNull(pattern, "pattern");
        return new MessagePattern(pattern.description() + " that reached the server",
                e -> pattern.test(e) && e.reachedServer());
    }

    /**
     * What the client sent of {@code pattern} that the server never received (dropped, answered
     * by a fault, or still held): sending such a request again is a safe retry.
     */
    public static MessagePattern notReachedServer(MessagePattern pattern) {
        Objects.requireNonNull(pattern, "pattern");
        return new MessagePattern(pattern.description() + " that never reached the server",
                e -> pattern.test(e) && e.fromClient() && !e.delivered());
    }

    /** What the server sent of {@code pattern} that the client received. */
    public static MessagePattern reachedClient(MessagePattern pattern) {
        Objects.requireNonNull(pattern, "pattern");
        return new MessagePattern(pattern.description() + " that reached the client",
                e -> pattern.test(e) && e.reachedClient());
    }

    /**
     * What the server sent of {@code pattern} that the client never received, such as a lost
     * answer: its request reached the server, so sending it again may do it twice.
     */
    public static MessagePattern notReachedClient(MessagePattern pattern) {
        Objects.requireNonNull(pattern, "pattern");
        return new MessagePattern(pattern.description() + " that never reached the client",
                e -> pattern.test(e) && !e.fromClient() && !e.delivered());
    }

    /**
     * Requests that asked what {@code request} asked: the same method and tool and the same
     * {@link JournalEntry#writeFingerprint() write fingerprint}, so {@code _meta} and
     * idempotency-key arguments aside. It matches {@code request} itself too.
     *
     * @throws IllegalArgumentException when {@code request} is no request with params
     */
    public static MessagePattern sameArgumentsAs(JournalEntry request) {
        Objects.requireNonNull(request, "request");
        if (request.kind() != MessageKind.REQUEST || request.writeFingerprint() == null) {
            throw new IllegalArgumentException("request: " + request + " (expected: a request with params)");
        }
        return new MessagePattern((request.method() == null ? "request" : request.method())
                + (request.tool() == null ? "" : " of " + request.tool()) + " with the arguments of #"
                + request.sequence(), request::sameArgumentsAs);
    }

    /**
     * Requests of {@code tools/call} of a tool whose name matches {@code tool} (a glob) with these
     * arguments (a JSON object, such as <code>{"row":7}</code>), by the
     * {@link JournalEntry#writeFingerprint() write fingerprint}: {@code _meta} and
     * idempotency-key arguments aside, members in any order, numbers by value. Their params
     * must be {@code name} and {@code arguments} only, as MCP clients send them.
     *
     * @throws IllegalArgumentException when {@code argumentsJson} is not one JSON value
     */
    public static MessagePattern toolCall(String tool, String argumentsJson) {
        Objects.requireNonNull(argumentsJson, "argumentsJson");
        MessagePattern calls = toolCall(tool);
        try {
            ParamsFingerprint.ofParams(argumentsJson); // alone, so that it cannot spill into the params around it
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("arguments: " + argumentsJson + " (expected: one JSON value)", e);
        }
        Map<String, String> byTool = new ConcurrentHashMap<>(); // one digest per tool name, not per entry
        return new MessagePattern(calls.description() + " with arguments " + argumentsJson,
                e -> e.kind() == MessageKind.REQUEST && calls.test(e) && e.writeFingerprint() != null
                        && e.writeFingerprint().equals(byTool.computeIfAbsent(e.tool(),
                                name -> paramsOf(name, argumentsJson))));
    }

    /** The write fingerprint of the params of a call of {@code tool} with these arguments. */
    private static String paramsOf(String tool, String argumentsJson) {
        return ParamsFingerprint.writeOfParams("{\"name\":\"" + new String(JsonStringEncoder.getInstance()
                .quoteAsString(tool)) + "\",\"arguments\":" + argumentsJson + "}");
    }
}
