package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;

import java.util.Objects;
import java.util.Set;

/**
 * {@code input_required} (2026-07-28, Multi Round-Trip Requests): the answer to a
 * {@code tools/call}, {@code prompts/get} or {@code resources/read} becomes one more round,
 * {@code {"resultType":"input_required","requestState":...}}, which a client answers by sending the
 * request again, under a new id, with that {@code requestState}. The response is replaced (a
 * request is answered so at once, back to its sender, and never forwarded). A rule without
 * {@code times} makes the rounds endless, as a server that never has enough; a client is expected
 * to stop after a bound of its own.
 *
 * <p>No {@code inputRequests}: a server must not ask for input the client did not declare it can
 * give (elicitation, sampling, roots), and the proxy cannot know what it declared; a
 * {@code requestState}-only round is one every client must handle. The state is a fresh opaque
 * token each round (from the rule's seeded randomness), or {@code request_state} when given; the
 * fault's detail names it, so that the journal can tell whether the client echoed it.
 */
public final class InputRequiredFault extends DeclaredFault {

    /** The requests the spec allows an {@code InputRequiredResult} on. */
    static final Set<String> METHODS = Set.of("tools/call", "prompts/get", "resources/read");

    /** {@code input_required}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("input_required", InputRequiredFault::create,
            FaultParameter.optional("request_state", "random"));

    /** @param requestState the {@code requestState} of every round, or null for a fresh random one each round */
    public record Config(String requestState) {
        /** Reads {@code request_state} (optional). */
        static Config from(FaultParams params) {
            return new Config(params.has("request_state")
                    ? params.string("request_state", null, "a string") : null);
        }
    }

    private final Config config;

    /** A fault with this configuration. */
    public InputRequiredFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
    }

    static InputRequiredFault create(FaultParams params) {
        return new InputRequiredFault(Config.from(params));
    }

    @Override
    public boolean canApply(Frame frame) {
        return Edits.isRequestOrAnswer(frame) && METHODS.contains(frame.method());
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        String state = config.requestState != null ? config.requestState
                : "mcp-chaos-" + Long.toHexString(ctx.random().nextLong());
        Edits.answerOrReplace(ctx, frame, "result", g -> {
            g.writeStartObject();
            g.writeStringField("resultType", "input_required");
            g.writeStringField("requestState", state);
            g.writeEndObject();
        }, "answered with an input_required round (requestState " + state + "); not forwarded",
                "result replaced by an input_required round (requestState " + state + ")");
    }

    @Override
    public String toString() {
        return "input_required";
    }
}
