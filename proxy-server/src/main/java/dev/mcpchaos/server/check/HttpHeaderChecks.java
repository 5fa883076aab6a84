package dev.mcpchaos.server.check;

import com.fasterxml.jackson.databind.JsonNode;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * The checks of the Streamable HTTP headers a client sends ({@code http.*}): the negotiated
 * version after initialize, and the 2026-07-28 request metadata mirrored into headers.
 */
final class HttpHeaderChecks implements CheckFamily {

    @Override
    public List<Check> checks() {
        return List.of(Check.NEGOTIATED_VERSION_HEADER, Check.PROTOCOL_VERSION_HEADER, Check.MCP_METHOD_HEADER,
                Check.MCP_PARAM_HEADER, Check.MCP_NAME_HEADER);
    }

    @Override
    public String whyNotRun(Check check, Tracker seen) {
        if (check == Check.NEGOTIATED_VERSION_HEADER) {
            return !seen.sessionfulHttpSeen ? "HTTP sessions with initialize only, and there was none" : null;
        }
        return !seen.sessionlessHttpSeen ? "2026-07-28 over HTTP only, and no such request came" : null;
    }

    /**
     * On HTTP, an {@code MCP-Protocol-Version} header that is not the version the initialize
     * answer gave the client (as it reached the client).
     */
    @Override
    public void clientWentOn(Tracker t, TrackedSession s, Referee.Message m, Object id, String method) {
        Map<String, String> headers = m.mcpHeaders();
        if (s.deliveredVersion == null || s.sessionless() || headers == null) {
            return; // stdio, or no headers recorded
        }
        // A missing header is not judged: a server falls back to 2025-03-26 for it, and the
        // referee cannot tell an old client from a careless one. A wrong one is a client that
        // ignored what the server (or a fault) told it.
        String header = headers.get("mcp-protocol-version");
        if (header != null && !header.equals(s.deliveredVersion)) {
            t.findings.violate(Check.NEGOTIATED_VERSION_HEADER, "MCP-Protocol-Version '" + header + "' after the "
                    + "initialize answer gave the client '" + s.deliveredVersion + "'", m, id, method);
        }
    }

    /**
     * The 2026-07-28 request metadata (streamable-http.mdx, "Request Metadata"): on HTTP every
     * request mirrors its version, method and (for tools/call, prompts/get, resources/read) name
     * into headers, which must match the body; intermediaries route on them.
     */
    @Override
    public void request(Tracker t, TrackedSession s, Referee.Message m, Pending p, JsonNode params,
                        String version) {
        Map<String, String> h = m.mcpHeaders();
        if (version == null || h == null) {
            return; // not a sessionless request; or stdio, or headers nobody recorded: nothing to compare
        }
        Findings f = t.findings;
        Object id = p.id;
        String method = p.method;
        String versionHeader = h.get("mcp-protocol-version");
        if (!version.equals(versionHeader)) {
            f.violate(Check.PROTOCOL_VERSION_HEADER, versionHeader == null ? "no MCP-Protocol-Version header; _meta "
                    + "says " + version : "MCP-Protocol-Version '" + versionHeader + "' but _meta says '" + version
                    + "'", m, id, method);
        }
        String methodHeader = h.get("mcp-method");
        if (!method.equals(methodHeader)) {
            f.violate(Check.MCP_METHOD_HEADER, methodHeader == null ? "no Mcp-Method header for " + method
                    : "Mcp-Method '" + methodHeader + "' but the body's method is '" + method + "'", m, id, method);
        }
        String field = switch (method) {
            case "tools/call", "prompts/get" -> "name";
            case "resources/read" -> "uri";
            default -> null;
        };
        if (method.equals("tools/call") && params != null) {
            Map<String, ToolSchemas> listed = s.toolSchemas();
            ToolSchemas known = listed != null ? listed.get(Tracker.text(params.get("name"))) : null;
            if (known != null && known.headers() != null && known.headers().problems().isEmpty()) {
                for (String problem : ParamHeaders.mismatches(known.headers().bindings(), params.get("arguments"), h)) {
                    f.violate(Check.MCP_PARAM_HEADER, problem, m, id, method);
                }
            }
        }
        if (field != null) {
            String body = params != null ? Tracker.text(params.get(field)) : null;
            String nameHeader = h.get("mcp-name");
            String decoded = decodeSentinel(nameHeader);
            if (body != null && !body.equals(decoded)) {
                f.violate(Check.MCP_NAME_HEADER, nameHeader == null ? "no Mcp-Name header; params." + field + " '"
                        + body + "'" : "Mcp-Name '" + nameHeader + "' but params." + field + " '" + body + "'", m, id,
                        method);
            }
        }
    }

    /** A header value in the {@code =?base64?...?=} sentinel form decoded; others as they are; null stays null. */
    static String decodeSentinel(String value) {
        if (value == null || !value.startsWith("=?base64?") || !value.endsWith("?=") || value.length() < 11) {
            return value;
        }
        try {
            return new String(Base64.getDecoder().decode(value.substring(9, value.length() - 2)),
                    StandardCharsets.UTF_8);
        } catch (IllegalArgumentException notBase64) {
            return value; // compared as it is, so it differs and is reported
        }
    }
}
