package dev.mcpchaos.junit;

/** How long a proxy of {@link McpChaosExtension} lives. */
public enum Lifecycle {
    /**
     * One proxy for the test class, started before its first test and closed after its last;
     * before each test its rules are reset and it is given the test's seed. On stdio the server
     * process lives as long, so the client too must be made once for the class.
     */
    PER_CLASS,
    /** A new proxy (and on stdio a new server process) for each test, closed after it. */
    PER_TEST
}
