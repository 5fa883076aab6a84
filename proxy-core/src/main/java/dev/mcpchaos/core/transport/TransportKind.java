package dev.mcpchaos.core.transport;

/** The MCP transport a frame travels on. */
public enum TransportKind {
    /** Newline-delimited JSON-RPC on a child process's stdin and stdout. */
    STDIO,
    /** Streamable HTTP: POST bodies, JSON or SSE responses, the GET SSE stream. */
    HTTP
}
