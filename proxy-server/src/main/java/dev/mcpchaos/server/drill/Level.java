package dev.mcpchaos.server.drill;

/** How strongly the protocol asks for what a scenario grades (RFC 2119 words). */
public enum Level {
    /** An absolute requirement: a failure makes the drill's exit code non-zero. */
    MUST,
    /** A recommendation: a failure is reported, the exit code stays 0. */
    SHOULD
}
