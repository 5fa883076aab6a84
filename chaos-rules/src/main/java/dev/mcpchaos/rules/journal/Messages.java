package dev.mcpchaos.rules.journal;

import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.rules.match.Glob;

import java.util.Objects;

/**
 * The {@link MessagePattern}s assertions read like a sentence with:
 * {@code verify().client().sent(toolCall("search")).times(2)}. Names take globs ({@code search_*}).
 * A pattern of a method matches the requests of that method and the responses that answer them;
 * {@code client().sent(...)} then keeps what the client sent.
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
}
