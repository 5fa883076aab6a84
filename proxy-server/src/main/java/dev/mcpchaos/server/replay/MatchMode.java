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
