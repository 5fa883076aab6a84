package dev.mcpchaos.core.intercept;

/** What an interceptor may do to the connection a frame belongs to. */
public interface ConnectionControl {

    /** Closes the client's side: on stdio the proxy's stdout, on HTTP the client's connection. */
    void closeClientSide();

    /** Closes the server's side: on stdio the child's stdin, on HTTP the upstream connection. */
    void closeServerSide();

    /** Kills the server process at once (stdio). On HTTP this closes the upstream connection. */
    void killServer();
}
