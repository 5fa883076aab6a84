package dev.mcpchaos.core.transport.stdio;

import java.io.IOException;

/** The server command could not be started (not found, not executable, bad directory). */
public final class ServerStartException extends IOException {
    private static final long serialVersionUID = 1L;

    public ServerStartException(String message, Throwable cause) {
        super(message, cause);
    }
}
