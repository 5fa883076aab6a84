package dev.mcpchaos.server.check;

/**
 * Every check the {@link Referee} makes, with its stable id (what reports, JUnit test names and
 * {@code docs/checks.md} anchors use; never renamed), its severity and a one-line explanation.
 */
public enum Check {
    STDOUT_NOT_JSON("stdio.stdout-not-json", Severity.ERROR,
            "every line a stdio server writes to stdout must be one JSON-RPC message (logs go to stderr)"),
    UNTERMINATED_LINE("stdio.unterminated-line", Severity.ERROR,
            "a stdio server's stdout ended in the middle of a line: the last message has no newline"),
    EXIT_ON_STDIN_CLOSE("stdio.exit-on-stdin-close", Severity.ERROR,
            "a stdio server did not exit within the exit timeout of its stdin closing, and needed SIGTERM"),
    NOT_JSON("jsonrpc.not-json", Severity.ERROR,
            "a message is not well-formed JSON"),
    INVALID_ENVELOPE("jsonrpc.invalid-envelope", Severity.ERROR,
            "a message is not a valid JSON-RPC 2.0 object (jsonrpc \"2.0\", id a string or integer, method a string)"),
    RESULT_AND_ERROR("jsonrpc.result-and-error", Severity.ERROR,
            "a response carries both result and error"),
    DUPLICATE_REQUEST_ID("jsonrpc.duplicate-request-id", Severity.ERROR,
            "a request reuses the id of a request of the same sender still in flight"),
    RESPONSE_UNKNOWN_ID("jsonrpc.response-unknown-id", Severity.ERROR,
            "a response answers no request in flight (an id nobody sent, or one already answered)"),
    UNANSWERED_REQUEST("jsonrpc.unanswered-request", Severity.ERROR,
            "a request got no answer by the end of the session, or only after the deadline"),
    CANCELLED_ANSWERED("jsonrpc.cancelled-answered", Severity.WARNING,
            "a request was answered after its sender cancelled it (notifications/cancelled), where the receiver "
                    + "should send no answer"),
    ERROR_CODE("jsonrpc.error-code", Severity.ERROR,
            "an error code is not an integer, or lies in JSON-RPC's reserved range without being one of its codes"),
    BEFORE_INITIALIZE("lifecycle.before-initialize", Severity.WARNING,
            "a request (other than ping) went out before initialization was done"),
    PROTOCOL_VERSION("lifecycle.protocol-version", Severity.ERROR,
            "the server chose a protocol version that is neither the client's nor a published MCP revision"),
    UNSUPPORTED_VERSION_ACCEPTED("lifecycle.unsupported-version-accepted", Severity.WARNING,
            "the client went on after an initialize answer (as it reached the client) whose protocolVersion is neither "
                    + "the one it asked for nor a published revision, where it should disconnect"),
    UNDECLARED_CAPABILITY("lifecycle.undeclared-capability", Severity.ERROR,
            "a request or notification of a capability its receiver (or sender) did not declare"),
    INPUT_SCHEMA("tools.input-schema", Severity.ERROR,
            "a tool's inputSchema is not a valid JSON Schema of type object"),
    OUTPUT_SCHEMA("tools.output-schema", Severity.ERROR,
            "a tool's outputSchema is not a valid JSON Schema of type object"),
    DUPLICATE_TOOL_NAME("tools.duplicate-name", Severity.WARNING,
            "two tools of one tools/list have the same name"),
    TOOL_NAME_FORMAT("tools.name-format", Severity.WARNING,
            "a tool name is not 1 to 128 of A-Z a-z 0-9 _ - ."),
    UNKNOWN_TOOL_RESULT("tools.unknown-tool-result", Severity.ERROR,
            "a tools/call of a tool the server does not list was answered with a result, not a protocol error"),
    CALL_ARGUMENTS("tools.call-arguments", Severity.ERROR,
            "a tools/call's arguments are not valid against the inputSchema the server listed for the tool"),
    STRUCTURED_CONTENT("tools.structured-content", Severity.ERROR,
            "a tools/call result of a tool with an outputSchema lacks structuredContent, or it does not validate"),
    ERROR_CLASS("tools.error-class", Severity.WARNING,
            "a tools/call of a listed tool answered with -32602 where 2025-11-25 and later want input validation "
                    + "errors as results with isError: true"),
    MCP_HEADER_ANNOTATION("tools.mcp-header-annotation", Severity.ERROR,
            "a 2026-07-28 tool's x-mcp-header annotation is invalid (not a token, a duplicate, not on a string, "
                    + "integer or boolean property reachable through properties alone)"),
    BUSINESS_ERROR("tools.business-error", Severity.WARNING,
            "a listed tool called with valid arguments was answered with a JSON-RPC error of the server's own code, "
                    + "where a tool's failure is a result with isError: true"),
    INVALID_ARGUMENTS_ACCEPTED("tools.invalid-arguments-accepted", Severity.WARNING,
            "a tools/call whose arguments the tool's inputSchema refuses was answered with a successful result"),
    DUPLICATE_CALL("client.duplicate-call", Severity.WARNING,
            "a tools/call was sent again with the same arguments while an earlier one, which reached the server, had "
                    + "no answer delivered (a possible duplicate write)"),
    RETRY_AFTER_IGNORED("client.retry-after-ignored", Severity.WARNING,
            "after an answer of 429 or 503 with Retry-After the client sent the request again sooner than it said"),
    NO_REINITIALIZE("client.no-reinitialize", Severity.ERROR,
            "after HTTP 404 for its session the client sent more requests but no new initialize"),
    NEGOTIATED_VERSION_HEADER("http.negotiated-version-header", Severity.ERROR,
            "after initialize, an HTTP message's MCP-Protocol-Version header is not the version the initialize answer "
                    + "gave the client"),
    PROTOCOL_VERSION_HEADER("http.protocol-version-header", Severity.ERROR,
            "a 2026-07-28 request's MCP-Protocol-Version header is missing or differs from its "
                    + "_meta io.modelcontextprotocol/protocolVersion"),
    MCP_METHOD_HEADER("http.mcp-method-header", Severity.ERROR,
            "a 2026-07-28 request's Mcp-Method header is missing or differs from its method"),
    MCP_PARAM_HEADER("http.mcp-param-header", Severity.ERROR,
            "a 2026-07-28 tools/call's Mcp-Param-* headers do not mirror the arguments its tool's x-mcp-header "
                    + "annotations name"),
    MCP_NAME_HEADER("http.mcp-name-header", Severity.ERROR,
            "a 2026-07-28 tools/call, prompts/get or resources/read's Mcp-Name header is missing or differs from "
                    + "its params.name (params.uri), Base64 sentinel decoded");

    /** Where the checks are explained; each check's section is this plus {@code #} and its id's anchor. */
    public static final String DOCS = "docs/checks.md";

    private final String id;
    private final Severity severity;
    private final String summary;

    Check(String id, Severity severity, String summary) {
        this.id = id;
        this.severity = severity;
        this.summary = summary;
    }

    /** The stable id, such as {@code jsonrpc.response-unknown-id}. */
    public String id() {
        return id;
    }

    public Severity severity() {
        return severity;
    }

    /** One line: what the check wants. */
    public String summary() {
        return summary;
    }

    /** Its section in docs/checks.md (GitHub's anchor of a heading that is the id). */
    public String docLink() {
        return DOCS + "#" + id.replace(".", "");
    }

    /** The check of {@code id}. */
    public static Check byId(String id) {
        for (Check check : values()) {
            if (check.id.equals(id)) {
                return check;
            }
        }
        throw new IllegalArgumentException("check: '" + id + "' (expected: one of the ids in " + DOCS + ")");
    }
}
