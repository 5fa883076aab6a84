package dev.mcpchaos.core.session;

import java.util.Objects;

/**
 * One MCP conversation between a client and a server: a stdio child process, or an HTTP
 * {@code Mcp-Session-Id}. Holds the state that lives as long as the conversation.
 */
public final class Session {

    private final String id;
    private final Correlator correlator;

    /** @param id a label for logs and events, such as {@code stdio} or the HTTP session id */
    public Session(String id) {
        this(id, new Correlator());
    }

    public Session(String id, Correlator correlator) {
        this.id = Objects.requireNonNull(id, "id");
        this.correlator = Objects.requireNonNull(correlator, "correlator");
    }

    public String id() {
        return id;
    }

    public Correlator correlator() {
        return correlator;
    }

    @Override
    public String toString() {
        return "Session(" + id + ')';
    }
}
