package dev.mcpchaos.server.check;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.Schema;

/** A listed tool's schemas, each compiled once, when a call or result first needs it. */
final class ToolSchemas {
    private final JsonNode inputNode;
    private final JsonNode outputNode;
    private final ParamHeaders.Scan headers;
    private Schema input;
    private Schema output;
    private boolean inputCompiled;
    private boolean outputCompiled;

    ToolSchemas(JsonNode inputNode, JsonNode outputNode, ParamHeaders.Scan headers) {
        this.inputNode = inputNode;
        this.outputNode = outputNode;
        this.headers = headers;
    }

    /** Its x-mcp-header annotations, valid or not. */
    ParamHeaders.Scan headers() {
        return headers;
    }

    JsonNode outputNode() {
        return outputNode;
    }

    Schema input(SchemaChecker checker) {
        if (!inputCompiled) {
            inputCompiled = true;
            input = checker.compile(inputNode);
        }
        return input;
    }

    Schema output(SchemaChecker checker) {
        if (!outputCompiled) {
            outputCompiled = true;
            output = checker.compile(outputNode);
        }
        return output;
    }
}
