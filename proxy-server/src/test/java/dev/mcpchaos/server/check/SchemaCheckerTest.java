package dev.mcpchaos.server.check;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.Schema;
import org.junit.jupiter.api.Test;

import java.io.IOException;

import static org.assertj.core.api.Assertions.assertThat;

/** The validator's reasons as the referee quotes them: each with its place, the root named, never an empty one. */
class SchemaCheckerTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static Schema schema(String json) throws IOException {
        Schema schema = new SchemaChecker().compile(JSON.readTree(json));
        assertThat(schema).as("compiles: %s", json).isNotNull();
        return schema;
    }

    @Test
    void aReasonAboutTheWholeValueNamesTheRootInsteadOfAnEmptyPlace() throws IOException {
        Schema schema = schema("{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
                + "\"required\":[\"text\"]}");
        JsonNode arguments = JSON.readTree("{}");
        // The referee writes "arguments " before each reason: "arguments (root): required property ..."
        // where it read "arguments : required property ..." when the place was the root's empty path.
        assertThat(SchemaChecker.violations(schema, arguments))
                .containsExactly("(root): required property 'text' not found");
    }

    @Test
    void aReasonAboutAPropertyKeepsItsPlace() throws IOException {
        Schema schema = schema("{\"type\":\"object\",\"properties\":{\"m\":{\"type\":\"string\"}}}");
        assertThat(SchemaChecker.violations(schema, JSON.readTree("{\"m\":3}")))
                .containsExactly("/m: integer found, string expected");
    }
}
