package dev.mcpchaos.server.record;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.Objects;

/**
 * The first line of a cassette: what was recorded, by what, when, and what the session
 * negotiated. The negotiated parts are null when the recording saw no {@code initialize}.
 *
 * @param version            the cassette format's version ({@link Cassette#FORMAT_VERSION})
 * @param transport          {@code stdio} or {@code http}
 * @param recordedAt         when recording started, ISO-8601 in UTC
 * @param recorder           what wrote it, such as {@code mcp-chaos 0.1.0}
 * @param protocolVersion    the MCP revision the server answered initialize with (sessionless: the one
 *                           the first request named in its {@code _meta}), or null
 * @param serverInfo         the server's {@code serverInfo}, or null
 * @param serverCapabilities the server's {@code capabilities}, or null
 * @param clientInfo         the client's {@code clientInfo}, or null
 * @param clientCapabilities the client's {@code capabilities}, or null
 */
public record CassetteHeader(int version, String transport, String recordedAt, String recorder,
                             String protocolVersion, JsonNode serverInfo, JsonNode serverCapabilities,
                             JsonNode clientInfo, JsonNode clientCapabilities) {

    public CassetteHeader {
        Objects.requireNonNull(transport, "transport");
        Objects.requireNonNull(recordedAt, "recordedAt");
        Objects.requireNonNull(recorder, "recorder");
    }
}
