package dev.mcpchaos.core.frame;

/** Which way a message travels through the proxy. */
public enum Direction {
    /** From the MCP client (the proxy's downstream) to the MCP server (upstream). */
    CLIENT_TO_SERVER("c->s"),
    /** From the MCP server to the MCP client. */
    SERVER_TO_CLIENT("s->c");

    private final String arrow;

    Direction(String arrow) {
        this.arrow = arrow;
    }

    /** The other direction: where a reply to a message travelling this way goes. */
    public Direction reverse() {
        return this == CLIENT_TO_SERVER ? SERVER_TO_CLIENT : CLIENT_TO_SERVER;
    }

    /** A short label for logs, {@code c->s} or {@code s->c}. */
    public String arrow() {
        return arrow;
    }
}
