package dev.mcpchaos.core.intercept;

import dev.mcpchaos.core.frame.Frame;

/**
 * What an interceptor may do to the connection a frame travels on: on stdio the pipes and the
 * child process, on HTTP the client's connection and the upstream connection of the exchange
 * the frame belongs to.
 */
public interface ConnectionControl {

    /** Closes the client's side: on stdio the proxy's stdout, on HTTP the client's connection. */
    void closeClientSide(Frame at);

    /** Closes the server's side: on stdio the child's stdin, on HTTP the upstream connection. */
    void closeServerSide(Frame at);

    /** Stdio: SIGTERM to the server process. HTTP: closes the upstream connection. */
    void terminateServer(Frame at);

    /** Stdio: SIGKILL to the server process. HTTP: closes the upstream connection. */
    void killServer(Frame at);
}
