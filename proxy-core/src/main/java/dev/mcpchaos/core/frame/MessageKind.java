package dev.mcpchaos.core.frame;

/** What the envelope sniffer recognised a frame to be. */
public enum MessageKind {
    /** An object with {@code method} and {@code id}. */
    REQUEST,
    /** An object with {@code method} and no {@code id}. */
    NOTIFICATION,
    /** An object with {@code id} and {@code result}. */
    RESPONSE,
    /** An object with {@code error} (and an {@code id}, possibly null). */
    ERROR,
    /** A JSON array: a JSON-RPC batch (allowed by the 2025-03-26 revision). */
    BATCH,
    /** Well-formed JSON that is not a JSON-RPC message (no method, result or error; or not an object). */
    OTHER,
    /** Not well-formed JSON, or not UTF-8. It still flows: the proxy carries broken traffic. */
    MALFORMED,
    /** Nothing but whitespace: a blank line. Relayed as it came, never matched by a rule. */
    BLANK
}
