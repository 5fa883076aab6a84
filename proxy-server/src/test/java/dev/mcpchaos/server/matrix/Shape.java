package dev.mcpchaos.server.matrix;

import dev.mcpchaos.core.transport.TransportKind;

/**
 * The message shapes of the matrix: where on which transport the message a cell's rule picks
 * travels. Each names the rule's match, which picks the target message and nothing else.
 */
enum Shape {
    /** Stdio: the client's {@code tools/call} request; the witness is the client's next request. */
    STDIO_CLIENT_REQUEST(TransportKind.STDIO, "client request",
            "{direction: client_to_server, kind: request, tool: target}"),
    /** Stdio: the server's response to it; the witness is the response to the next request. */
    STDIO_SERVER_RESPONSE(TransportKind.STDIO, "server response",
            "{direction: server_to_client, kind: response, tool: target}"),
    /** Stdio: a progress notification before the result; the witness is the result. */
    STDIO_SERVER_NOTIFICATION(TransportKind.STDIO, "server notification",
            "{direction: server_to_client, kind: notification, method: notifications/progress}"),
    /** Stdio: the server asks the client ({@code roots/list}); the witness is a notification after it. */
    STDIO_SERVER_REQUEST(TransportKind.STDIO, "server-to-client request",
            "{direction: server_to_client, kind: request, method: roots/list}"),
    /** HTTP: the body of a POST in a session; the witness is the next POST. */
    HTTP_POST_REQUEST(TransportKind.HTTP, "POST body (request)",
            "{direction: client_to_server, kind: request, tool: target}"),
    /** HTTP: the JSON answer to a POST; the witness is the answer to the next POST. */
    HTTP_JSON_ANSWER(TransportKind.HTTP, "JSON answer",
            "{direction: server_to_client, kind: response, tool: target}"),
    /** HTTP: the result as the final event of an SSE answer; the witness is the end of the stream. */
    HTTP_SSE_FINAL(TransportKind.HTTP, "final event of an SSE answer",
            "{direction: server_to_client, kind: response, tool: target}"),
    /** HTTP: a progress notification in the middle of an SSE answer; the witness is the result after it. */
    HTTP_SSE_MID(TransportKind.HTTP, "mid-stream SSE notification",
            "{direction: server_to_client, kind: notification, method: notifications/progress}"),
    /** HTTP: an event of the session's GET stream; the witness is the next event. */
    HTTP_GET_EVENT(TransportKind.HTTP, "GET-stream event",
            "{direction: server_to_client, kind: notification, method: notifications/message}"),
    /** HTTP: the body of a POST without Mcp-Session-Id (each POST stands alone); the witness is the next one. */
    HTTP_SESSIONLESS_POST(TransportKind.HTTP, "sessionless POST",
            "{direction: client_to_server, kind: request, tool: target}");

    final TransportKind transport;
    final String label;
    final String match;

    Shape(TransportKind transport, String label, String match) {
        this.transport = transport;
        this.label = label;
        this.match = match;
    }

    boolean isStdio() {
        return transport == TransportKind.STDIO;
    }
}
