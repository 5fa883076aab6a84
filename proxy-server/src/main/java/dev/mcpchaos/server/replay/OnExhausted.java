package dev.mcpchaos.server.replay;

/** What a replay answers once every recording of a repeated request has been served. */
public enum OnExhausted {
    /** The last recording again (the default). */
    LAST,
    /** A JSON-RPC error {@code -32601} saying the recordings are used up; counted as unmatched. */
    ERROR
}
