package dev.mcpchaos.server.check;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.Schema;
import dev.mcpchaos.core.frame.Direction;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The checks of tools ({@code tools.*}): the schemas and names a {@code tools/list} gives, a
 * call's arguments against them, and how a call is answered (an unknown tool, a structured
 * result, the class of an error). It also keeps each session's last complete tool list.
 */
final class ToolChecks implements CheckFamily {

    private static final Pattern TOOL_NAME = Pattern.compile("[A-Za-z0-9._-]{1,128}");

    @Override
    public List<Check> checks() {
        return List.of(Check.INPUT_SCHEMA, Check.OUTPUT_SCHEMA, Check.DUPLICATE_TOOL_NAME, Check.TOOL_NAME_FORMAT,
                Check.UNKNOWN_TOOL_RESULT, Check.CALL_ARGUMENTS, Check.STRUCTURED_CONTENT, Check.ERROR_CLASS,
                Check.MCP_HEADER_ANNOTATION, Check.BUSINESS_ERROR, Check.INVALID_ARGUMENTS_ACCEPTED);
    }

    @Override
    public String whyNotRun(Check check, Tracker seen) {
        return switch (check) {
            case MCP_HEADER_ANNOTATION -> !seen.sessionlessSeen ? "2026-07-28 only, and no session spoke it" : null;
            case ERROR_CLASS -> !seen.modernToolsSeen ? "2025-11-25 and later only, and no session spoke them" : null;
            default -> null;
        };
    }

    @Override
    public void request(Tracker t, TrackedSession s, Referee.Message m, Pending p, JsonNode params,
                        String sessionless) {
        if (m.direction() == Direction.CLIENT_TO_SERVER && p.tool != null) {
            p.argumentsValid = checkArguments(t, s, m, p.id, p.tool, params.get("arguments"));
        }
    }

    @Override
    public void response(Tracker t, TrackedSession s, Referee.Message m, Object id, Pending p, JsonNode error,
                         JsonNode result) {
        if (p == null) {
            return;
        }
        if (error != null && result == null) { // with both, result-and-error says what is wrong
            checkErrorClass(t, s, m, id, p, error);
            checkBusinessError(t, m, id, p, error);
        }
        if (result == null) {
            return;
        }
        switch (p.method) {
            case "tools/list" -> toolsListed(t, s, m, id, p, result);
            case "tools/call" -> {
                if (s.tools() != null && p.tool != null && !s.tools().contains(p.tool)) {
                    t.findings.violate(Check.UNKNOWN_TOOL_RESULT, "a tools/call of '" + p.tool + "', which tools/list "
                            + "does not list, was answered with a result (expected: a JSON-RPC error, such as -32602)",
                            m, id, p.method);
                }
                checkStructuredContent(t, s, m, id, p, result);
                checkInvalidAccepted(t, m, id, p, result);
            }
            default -> {
            }
        }
    }

    /**
     * 2025-11-25 moved input validation errors (a date in the wrong format, a value out of range)
     * from protocol errors to tool execution errors, so that a model can read them and retry
     * (Tools, "Error Handling"; SEP-1303): a listed tool's call answered -32602 is flagged. A
     * call of an unknown tool, or one whose request is malformed, still gets a protocol error;
     * -32603 (the server failed) is never flagged.
     */
    private static void checkErrorClass(Tracker t, TrackedSession s, Referee.Message m, Object id, Pending p,
                                        JsonNode error) {
        if (!"tools/call".equals(p.method) || p.tool == null || s.tools() == null || !s.tools().contains(p.tool)
                || s.spokenVersion == null || s.spokenVersion.compareTo("2025-11-25") < 0
                || error.path("code").asInt(0) != -32602) {
            return;
        }
        t.findings.violate(Check.ERROR_CLASS, "tool '" + p.tool + "' (listed) answered with JSON-RPC error -32602 '"
                + Findings.excerpt(error.path("message").asText("")) + "' on " + s.spokenVersion + " (expected: a "
                + "result with isError: true for an input validation error, unless the request itself was "
                + "malformed)", m, id, p.method);
    }

    /**
     * A client's tools/call against the inputSchema its session's last tools/list gave the
     * tool: whether they are valid, or null when there is no verdict (no tools/list yet, an
     * unknown tool, a broken schema).
     */
    private static Boolean checkArguments(Tracker t, TrackedSession s, Referee.Message m, Object id, String tool,
                                          JsonNode arguments) {
        ToolSchemas known = s.toolSchemas() != null ? s.toolSchemas().get(tool) : null;
        Schema input = known != null ? known.input(t.schemas) : null;
        if (input == null) {
            return null;
        }
        JsonNode given = arguments != null ? arguments : Tracker.JSON.createObjectNode(); // absent: no arguments
        List<String> problems = SchemaChecker.violations(input, given);
        if (!problems.isEmpty()) {
            t.findings.violate(Check.CALL_ARGUMENTS, "tool '" + tool + "': arguments " + String.join("; ", problems),
                    m, id, "tools/call");
        }
        return problems.isEmpty();
    }

    /**
     * A listed tool called with arguments valid against its schema, answered with a JSON-RPC
     * error of the server's own (a code outside JSON-RPC's reserved range, or an
     * implementation-defined server error -32000..-32019 but MCP's -32002; -32020..-32099 are
     * the codes MCP allocates, such as -32020 HeaderMismatch and -32042 URL elicitation
     * required): most likely the tool's own failure, which the spec wants as a result with
     * isError: true, so that the model can see it.
     */
    private static void checkBusinessError(Tracker t, Referee.Message m, Object id, Pending p, JsonNode error) {
        if (!"tools/call".equals(p.method) || !Boolean.TRUE.equals(p.argumentsValid)
                || !error.path("code").canConvertToLong()) {
            return;
        }
        long code = error.path("code").longValue();
        boolean reserved = code >= -32768 && code <= -32000;
        boolean implementationDefined = code >= -32019 && code <= -32000 && code != -32002;
        // -32603 (internal error) is what an SDK makes of a tool that threw: the classic way a
        // business failure becomes a protocol error, which some clients take for a broken session.
        if (reserved && !implementationDefined && code != -32603) {
            return; // JSON-RPC's other codes (error-class judges -32602), and those MCP allocates
        }
        t.findings.violate(Check.BUSINESS_ERROR, "tool '" + p.tool + "' (listed, arguments valid) answered with "
                + "JSON-RPC error " + code + " '" + Findings.excerpt(error.path("message").asText("")) + "' (expected: "
                + "a result with isError: true for the tool's own failure; a protocol error makes some clients drop "
                + "the session)", m, id, p.method);
    }

    /** Arguments its schema refused, answered with a successful result: the server did not validate them. */
    private static void checkInvalidAccepted(Tracker t, Referee.Message m, Object id, Pending p, JsonNode result) {
        if ("tools/call".equals(p.method) && Boolean.FALSE.equals(p.argumentsValid)
                && !result.path("isError").asBoolean(false)) {
            t.findings.violate(Check.INVALID_ARGUMENTS_ACCEPTED, "tool '" + p.tool + "' answered a call whose "
                    + "arguments its inputSchema refuses with a successful result (expected: a result with isError: "
                    + "true, or -32602 before 2025-11-25)", m, id, p.method);
        }
    }

    /** A tool with an outputSchema: a successful result carries structuredContent valid against it. */
    private static void checkStructuredContent(Tracker t, TrackedSession s, Referee.Message m, Object id, Pending p,
                                               JsonNode result) {
        ToolSchemas known = s.toolSchemas() != null && p.tool != null ? s.toolSchemas().get(p.tool) : null;
        if (known == null || known.outputNode() == null || result.path("isError").asBoolean(false)) {
            return;
        }
        JsonNode structured = result.get("structuredContent");
        if (structured == null || structured.isNull()) {
            t.findings.violate(Check.STRUCTURED_CONTENT, "tool '" + p.tool + "' declares an outputSchema, but its "
                    + "result has no structuredContent", m, id, p.method);
            return;
        }
        Schema output = known.output(t.schemas);
        List<String> problems = output != null ? SchemaChecker.violations(output, structured) : List.of();
        if (!problems.isEmpty()) {
            t.findings.violate(Check.STRUCTURED_CONTENT, "tool '" + p.tool + "': structuredContent "
                    + String.join("; ", problems), m, id, p.method);
        }
    }

    /** A page of tools/list: each tool's name and schemas judged, and the session's list kept once complete. */
    private static void toolsListed(Tracker t, TrackedSession s, Referee.Message m, Object id, Pending p,
                                    JsonNode result) {
        Findings f = t.findings;
        if (p.firstPage || s.toolsInProgress == null) {
            s.toolsInProgress = new HashSet<>();
            s.toolSchemasInProgress = new HashMap<>();
        }
        JsonNode list = result.get("tools");
        if (list != null && list.isArray()) {
            for (JsonNode tool : list) {
                String name = Tracker.text(tool.get("name"));
                String label = name != null ? "tool '" + name + "'" : "a tool without a name";
                if (name != null) {
                    if (!s.toolsInProgress.add(name)) {
                        f.violate(Check.DUPLICATE_TOOL_NAME, "tool '" + name + "' is listed twice", m, id, p.method);
                    }
                    if (!TOOL_NAME.matcher(name).matches()) {
                        f.violate(Check.TOOL_NAME_FORMAT, "tool name '" + name + "' (expected: 1 to 128 of A-Z a-z "
                                + "0-9 _ - .)", m, id, p.method);
                    }
                }
                List<String> input = t.schemas.problems(tool.get("inputSchema"));
                JsonNode outputSchema = tool.get("outputSchema");
                if (name != null) {
                    // A broken schema gives no verdict on calls or results: tools.*-schema says what is wrong.
                    ParamHeaders.Scan headers = ParamHeaders.scan(tool.get("inputSchema"));
                    s.toolSchemasInProgress.put(name, new ToolSchemas(input.isEmpty() ? tool.get("inputSchema")
                            : null, outputSchema != null && t.schemas.problems(outputSchema).isEmpty() ? outputSchema
                            : null, headers));
                    if (!headers.problems().isEmpty() && s.spokenVersion != null
                            && s.spokenVersion.compareTo(Tracker.FIRST_SESSIONLESS_REVISION) >= 0) {
                        f.violate(Check.MCP_HEADER_ANNOTATION, label + ": " + String.join("; ", headers.problems())
                                + " (a client must leave the tool out of tools/list)", m, id, p.method);
                    }
                }
                if (!input.isEmpty()) {
                    f.violate(Check.INPUT_SCHEMA, label + ": inputSchema " + String.join("; ", input), m, id,
                            p.method);
                }
                if (outputSchema != null) {
                    List<String> problems = t.schemas.problems(outputSchema);
                    if (!problems.isEmpty()) {
                        f.violate(Check.OUTPUT_SCHEMA, label + ": outputSchema " + String.join("; ", problems), m,
                                id, p.method);
                    }
                }
            }
        } else {
            f.violate(Check.INVALID_ENVELOPE, "a tools/list result without a tools array", m, id, p.method);
        }
        JsonNode next = result.get("nextCursor");
        if (next == null || next.isNull()) {
            s.tools = s.toolsInProgress;
            s.toolsInProgress = null;
            s.toolSchemas = s.toolSchemasInProgress;
            s.toolSchemasInProgress = null;
            if (s.sessionless()) {
                // The next request may come on another connection, a session of its own: it is the server's list.
                t.sessionlessTools = s.tools;
                t.sessionlessToolSchemas = s.toolSchemas;
            }
        }
    }
}
