package dev.mcpchaos.server.drill;

/** The protocol era a scenario applies to. */
public enum Era {
    /** The revisions with sessions (2024-11-05 to 2025-11-25): {@code Mcp-Session-Id}, resumable SSE. */
    SESSIONS("2025"),
    /** The stateless revisions, from 2026-07-28: no sessions, {@code Mcp-Method}, {@code server/discover}. */
    STATELESS("2026");

    private final String label;

    Era(String label) {
        this.label = label;
    }

    /** How the command line and the docs name it: {@code 2025} or {@code 2026}. */
    public String label() {
        return label;
    }
}
