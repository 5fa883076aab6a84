package dev.mcpchaos.server.replay;

/** How a replay finds the recording of a live request (see {@link Matching}). */
public enum MatchMode {
    /**
     * By method and params, {@code _meta} left out (so the JSON-RPC id and progress token do not
     * count), member order ignored; {@code initialize} by its method alone. Repeats in recorded
     * order. The default.
     */
    DEFAULT,
    /**
     * By method alone, params aside: each method's recorded answers are served in recorded order,
     * one per request, as a fixture spawned per test does with what it recorded once (the live
     * request may carry other arguments, or none). {@code tools/call} and {@code prompts/get} are
     * keyed by method and {@code params.name} too, since the name picks which tool or prompt
     * answers and a call of one tool must never get another's answer; one recorded without a name
     * (no params) serves a call of any tool that has no recording of its own. Repeats beyond the
     * recordings as {@link OnExhausted} says (the last again by default).
     */
    METHOD,
    /**
     * The recorded client requests, in recorded order: a request must be the next one (compared
     * as in {@link #DEFAULT}); any other gets error {@code -32601} naming the one expected next.
     */
    SEQUENTIAL,
    /**
     * The whole message but its JSON-RPC id must equal the recorded one: params with
     * {@code _meta} (progress token included), {@code initialize}'s client info and capabilities.
     */
    STRICT
}
