package dev.mcpchaos.core.transport.http;

import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpObject;

/**
 * The upstream side of one client connection, as its {@link FrontendHandler} and exchanges use
 * it: {@link UpstreamConnection} in the proxy (one connection to the MCP server, made or taken
 * from the pool on the client connection's event loop); a test gives its own, so a front end on
 * an {@code EmbeddedChannel} needs no server and no proxy. Every method runs on the client
 * connection's event loop, and so do the {@link Listener}'s.
 */
interface UpstreamLink {

    /**
     * Sends a request head, a full request or a piece of a body, connecting first if needed;
     * takes {@code message}. When the upstream cannot be reached, {@code exchange} hears it
     * ({@link Exchange#onUpstreamUnreachable}).
     */
    void send(Exchange exchange, HttpObject message);

    /** Sends a duplicate of a request on a connection of its own; its answer is thrown away. Takes {@code request}. */
    void sendShadow(HttpObject request);

    /** Closes the upstream connection: its state is unknown (a timeout, an injected answer, a fault). */
    void close();

    /**
     * Whether a request went upstream whose response has not all come back: the connection may
     * not serve another request (nor another client connection) as it stands.
     */
    boolean busy();

    /** An exchange left the connection ready for another request (see {@link Exchange#leftUpstreamIdle}). */
    void idleAgain();

    /** The client connection became writable or stopped being so: the upstream is read only as fast as the client takes it. */
    void clientWritable(boolean writable);

    /**
     * The client connection closed: the upstream connection goes back to the pool when it is idle
     * and sound ({@code exchangeInProgress} false, not busy), else it is closed.
     */
    void release(boolean exchangeInProgress);

    /** What the upstream connection tells the client connection's front end. */
    interface Listener {
        /** Something the upstream sent; takes ownership. */
        void onUpstreamMessage(Object msg);

        /** Writing to or reading from the upstream failed other than on its socket. */
        void onUpstreamError(Throwable cause);

        /** The upstream connection closed. */
        void onUpstreamClosed();
    }

    /** Makes the upstream side of a new client connection. */
    @FunctionalInterface
    interface Factory {
        UpstreamLink open(Channel client, Listener listener);
    }
}
