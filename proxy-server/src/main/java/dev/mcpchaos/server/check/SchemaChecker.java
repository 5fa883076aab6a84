package dev.mcpchaos.server.check;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.Error;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Whether a tool's schema is a valid JSON Schema of {@code type: object}: validated against the
 * meta-schema of its dialect by networknt's json-schema-validator (the meta-schemas ship in its
 * jar, so nothing is fetched). The dialect is the one {@code $schema} names when it is one the
 * library knows (draft 4, 6, 7, 2019-09, 2020-12), else 2020-12, MCP's default (2025-11-25).
 */
final class SchemaChecker {

    private static final String DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema";
    private static final Map<String, SpecificationVersion> DIALECTS = Map.of(
            "http://json-schema.org/draft-04/schema", SpecificationVersion.DRAFT_4,
            "http://json-schema.org/draft-06/schema", SpecificationVersion.DRAFT_6,
            "http://json-schema.org/draft-07/schema", SpecificationVersion.DRAFT_7,
            "https://json-schema.org/draft/2019-09/schema", SpecificationVersion.DRAFT_2019_09,
            DRAFT_2020_12, SpecificationVersion.DRAFT_2020_12);

    /** Meta-schemas, compiled once each. */
    private final Map<String, Schema> metaSchemas = new ConcurrentHashMap<>();

    /** What is wrong with {@code schema} (at most three reasons); empty when it is a valid object schema. */
    List<String> problems(JsonNode schema) {
        if (schema == null || schema.isMissingNode()) {
            return List.of("missing (expected: an object schema)");
        }
        if (!schema.isObject()) {
            return List.of("a " + schema.getNodeType().name().toLowerCase(java.util.Locale.ROOT)
                    + " (expected: an object schema)");
        }
        JsonNode type = schema.get("type");
        if (type == null || !type.isTextual() || !type.asText().equals("object")) {
            return List.of("type " + (type == null ? "missing" : type.toString()) + " (expected: \"object\")");
        }
        String dialect = dialect(schema);
        Schema meta = metaSchemas.computeIfAbsent(dialect, d -> SchemaRegistry.withDefaultDialect(DIALECTS.get(d))
                .getSchema(SchemaLocation.of(d)));
        List<Error> errors = meta.validate(schema.toString(), InputFormat.JSON);
        return errors.stream().limit(3).map(e -> reason(e) + " (against the " + dialect + " meta-schema)").toList();
    }

    /**
     * {@code schema} compiled to validate instances against (its dialect as above), or null when
     * it cannot be (the schema checks report why). References are resolved only within it and the
     * meta-schemas the library ships: nothing is fetched for a schema that traffic brought.
     */
    Schema compile(JsonNode schema) {
        if (schema == null || !schema.isObject()) {
            return null;
        }
        try {
            return SchemaRegistry.withDefaultDialect(DIALECTS.get(dialect(schema))).getSchema(schema.toString(),
                    InputFormat.JSON);
        } catch (RuntimeException invalid) {
            return null;
        }
    }

    /** Where {@code instance} breaks {@code schema}: at most three reasons, each with its place; empty when valid. */
    static List<String> violations(Schema schema, JsonNode instance) {
        try {
            return schema.validate(instance.toString(), InputFormat.JSON).stream().limit(3).map(SchemaChecker::reason)
                    .toList();
        } catch (RuntimeException failed) {
            return List.of(); // a schema the library cannot run: no verdict rather than a wrong one
        }
    }

    /**
     * One reason, its place first: {@code /m: integer found, string expected}. The library writes
     * the root's place as an empty path, which read as {@code arguments : required property ...}
     * once the referee put what was validated before it; the root is named instead.
     */
    static String reason(Error error) {
        String place = error.getInstanceLocation() == null || error.getInstanceLocation().getNameCount() == 0
                ? "(root)" : error.getInstanceLocation().toString();
        return place + ": " + error.getMessage();
    }

    private static String dialect(JsonNode schema) {
        JsonNode declared = schema.get("$schema");
        if (declared != null && declared.isTextual()) {
            String uri = declared.asText();
            if (uri.endsWith("#")) {
                uri = uri.substring(0, uri.length() - 1);
            }
            if (DIALECTS.containsKey(uri)) {
                return uri;
            }
        }
        return DRAFT_2020_12;
    }
}
