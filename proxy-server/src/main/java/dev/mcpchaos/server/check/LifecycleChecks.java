package dev.mcpchaos.server.check;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpchaos.core.frame.Direction;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The checks of MCP's lifecycle ({@code lifecycle.*}): initialization first, the version the
 * server chose and the client went on with, and the capabilities each side declared.
 */
final class LifecycleChecks implements CheckFamily {

    /** The MCP revisions published (and the one this project speaks beside them). */
    static final Set<String> REVISIONS = Set.of("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28");

    @Override
    public List<Check> checks() {
        return List.of(Check.BEFORE_INITIALIZE, Check.PROTOCOL_VERSION, Check.UNSUPPORTED_VERSION_ACCEPTED,
                Check.UNDECLARED_CAPABILITY);
    }

    /**
     * A client judged on the initialize answer that reached it (after the rules): going on under
     * a version that is no published revision, nor the one it asked for, where the spec says it
     * should disconnect.
     */
    @Override
    public void clientWentOn(Tracker t, TrackedSession s, Referee.Message m, Object id, String method) {
        if (s.deliveredVersion == null || s.sessionless()) {
            return;
        }
        if (!s.versionAcceptanceJudged && !REVISIONS.contains(s.deliveredVersion)
                && !s.deliveredVersion.equals(s.requestedVersion)) {
            s.versionAcceptanceJudged = true;
            t.findings.violate(Check.UNSUPPORTED_VERSION_ACCEPTED, "the client asked for '" + s.requestedVersion
                    + "', got '" + s.deliveredVersion + "' (no published revision) and went on with " + method
                    + " (expected: it disconnects)", m, id, method);
        }
    }

    @Override
    public void request(Tracker t, TrackedSession s, Referee.Message m, Pending p, JsonNode params,
                        String sessionless) {
        boolean fromClient = m.direction() == Direction.CLIENT_TO_SERVER;
        String method = p.method;
        if (fromClient && sessionless == null && !s.initializeAnswered && !method.equals("initialize")
                && !method.equals("ping")) {
            t.findings.violate(Check.BEFORE_INITIALIZE, "the client sent " + method + " before the server answered "
                    + "initialize", m, p.id, method);
        } else if (!fromClient && !s.initializedNotified && !method.equals("ping")) {
            t.findings.violate(Check.BEFORE_INITIALIZE, "the server sent " + method + " before the client's "
                    + "notifications/initialized", m, p.id, method);
        }
        String needs = fromClient ? serverCapabilityFor(method) : clientCapabilityFor(method);
        JsonNode declaredBy = fromClient ? s.serverCapabilities : s.clientCapabilities;
        if (needs != null && declaredBy != null && !declared(declaredBy, needs)) {
            t.findings.violate(Check.UNDECLARED_CAPABILITY, method + " to a " + (fromClient ? "server" : "client")
                    + " that did not declare " + needs, m, p.id, method);
        }
    }

    @Override
    public void notification(Tracker t, TrackedSession s, Referee.Message m, String method, JsonNode params) {
        boolean fromClient = m.direction() == Direction.CLIENT_TO_SERVER;
        String needs = fromClient ? null : serverNotificationCapability(method);
        if (needs != null && s.serverCapabilities != null && !declared(s.serverCapabilities, needs)) {
            t.findings.violate(Check.UNDECLARED_CAPABILITY, "the server sent " + method + " but did not declare "
                    + needs, m, null, method);
        }
        if (fromClient && method.equals("notifications/roots/list_changed") && s.clientCapabilities != null
                && !declared(s.clientCapabilities, "roots.listChanged")) {
            t.findings.violate(Check.UNDECLARED_CAPABILITY, "the client sent " + method + " but did not declare "
                    + "roots.listChanged", m, null, method);
        }
    }

    @Override
    public void response(Tracker t, TrackedSession s, Referee.Message m, Object id, Pending p, JsonNode error,
                         JsonNode result) {
        if (p == null || result == null || !p.method.equals("initialize")) {
            return;
        }
        String chosen = Tracker.text(result.get("protocolVersion"));
        if (chosen == null) {
            t.findings.violate(Check.PROTOCOL_VERSION, "no protocolVersion in the initialize result", m, id,
                    "initialize");
        } else if (!chosen.equals(s.requestedVersion) && !REVISIONS.contains(chosen)) {
            t.findings.violate(Check.PROTOCOL_VERSION, "the server chose '" + chosen + "'; the client asked for '"
                    + s.requestedVersion + "' (expected: that, or a published revision: " + new TreeSet<>(REVISIONS)
                    + ")", m, id, "initialize");
        }
    }

    /** The server capability a client request needs, as a dotted path, or null. */
    static String serverCapabilityFor(String method) {
        if (method.startsWith("tools/")) {
            return "tools";
        }
        if (method.equals("resources/subscribe") || method.equals("resources/unsubscribe")) {
            return "resources.subscribe";
        }
        if (method.startsWith("resources/")) {
            return "resources";
        }
        if (method.startsWith("prompts/")) {
            return "prompts";
        }
        if (method.equals("logging/setLevel")) {
            return "logging";
        }
        if (method.equals("completion/complete")) {
            return "completions";
        }
        return null;
    }

    /** The client capability a server request needs, or null. */
    static String clientCapabilityFor(String method) {
        return switch (method) {
            case "sampling/createMessage" -> "sampling";
            case "roots/list" -> "roots";
            case "elicitation/create" -> "elicitation";
            default -> null;
        };
    }

    /** The server capability a server notification needs, or null. */
    static String serverNotificationCapability(String method) {
        return switch (method) {
            case "notifications/tools/list_changed" -> "tools.listChanged";
            case "notifications/resources/list_changed" -> "resources.listChanged";
            case "notifications/resources/updated" -> "resources.subscribe";
            case "notifications/prompts/list_changed" -> "prompts.listChanged";
            case "notifications/message" -> "logging";
            default -> null;
        };
    }

    /** Whether {@code capabilities} has the dotted path, with a value that is not false or null. */
    static boolean declared(JsonNode capabilities, String path) {
        JsonNode node = capabilities;
        for (String part : path.split("\\.")) {
            node = node != null && node.isObject() ? node.get(part) : null;
        }
        return node != null && !node.isNull() && !(node.isBoolean() && !node.asBoolean());
    }
}
