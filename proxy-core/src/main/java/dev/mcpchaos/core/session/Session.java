package dev.mcpchaos.core.session;

import dev.mcpchaos.core.frame.Direction;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One MCP conversation between a client and a server: a stdio child process, or an HTTP
 * {@code Mcp-Session-Id}. Holds the state that lives as long as the conversation.
 */
public final class Session {

    private volatile String id;
    private final Correlator correlator;
    private final AtomicLong clientToServer = new AtomicLong();
    private final AtomicLong serverToClient = new AtomicLong();

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

    /**
     * Names the session once its real id is known: on HTTP the {@code Mcp-Session-Id} the server
     * gives in answer to initialize, which ran under a provisional name.
     */
    public void rename(String newId) {
        this.id = Objects.requireNonNull(newId, "newId");
    }

    public Correlator correlator() {
        return correlator;
    }

    /** The next frame number in a direction (0, 1, 2, ...), for transports that read frames on several connections. */
    public long nextSequence(Direction direction) {
        return (direction == Direction.CLIENT_TO_SERVER ? clientToServer : serverToClient).getAndIncrement();
    }

    @Override
    public String toString() {
        return "Session(" + id + ')';
    }
}
