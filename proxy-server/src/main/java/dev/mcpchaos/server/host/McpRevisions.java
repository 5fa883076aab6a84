package dev.mcpchaos.server.host;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/** The MCP protocol revisions the hosts know, by name (revision names are dates). */
public final class McpRevisions {

    /** The latest revision with sessions; what {@code initialize} is answered with by default. */
    public static final String LATEST = "2025-11-25";

    /** The revisions a session may speak, oldest first. */
    public static final List<String> WITH_SESSIONS = List.of("2024-11-05", "2025-03-26", "2025-06-18", LATEST);

    /** The first revision without sessions: its requests carry no {@code Mcp-Session-Id}. */
    public static final String FIRST_SESSIONLESS = "2026-07-28";

    /** The sessionless revisions a host may speak, oldest first. */
    public static final List<String> SESSIONLESS = List.of(FIRST_SESSIONLESS);

    /** The {@code _meta} key of a sessionless request that names its protocol version. */
    public static final String PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion";

    /** The first revision whose SSE streams start with a priming event (an id and empty data). */
    public static final String FIRST_PRIMING = "2025-11-25";

    private McpRevisions() {
    }

    /**
     * Whether a client of {@code protocolVersion} (an {@code MCP-Protocol-Version} header, null
     * when absent) expects priming events: {@value #FIRST_PRIMING} or later. Older clients may
     * take an event with empty data for a broken message, so they get none.
     */
    public static boolean primes(String protocolVersion) {
        if (protocolVersion == null) {
            return false;
        }
        String version = protocolVersion.trim();
        return version.matches("\\d{4}-\\d{2}-\\d{2}") && version.compareTo(FIRST_PRIMING) >= 0;
    }

    /**
     * Whether {@code message} opens the way a sessionless (2026-07-28) client does, where no
     * header can say so (stdio): a {@code server/discover}, or a request whose {@code _meta}
     * names its protocol version ({@value #PROTOCOL_VERSION_META}). The Versioning page's rule for
     * a dual-era server: such a request "is served statelessly", an {@code initialize} selects the
     * legacy revisions. A batch is never one (the sessionless revision has none).
     */
    public static boolean isSessionlessRequest(JsonNode message) {
        if (message == null || !message.isObject()) {
            return false;
        }
        return "server/discover".equals(message.path("method").textValue())
                || message.path("params").path("_meta").has(PROTOCOL_VERSION_META);
    }

    /**
     * Whether {@code protocolVersion} (an {@code MCP-Protocol-Version} header, null when absent)
     * names a sessionless revision: {@value #FIRST_SESSIONLESS} or later (revision names are
     * dates, so they order as strings).
     */
    public static boolean isSessionless(String protocolVersion) {
        if (protocolVersion == null) {
            return false;
        }
        String version = protocolVersion.trim();
        return version.matches("\\d{4}-\\d{2}-\\d{2}") && version.compareTo(FIRST_SESSIONLESS) >= 0;
    }
}
