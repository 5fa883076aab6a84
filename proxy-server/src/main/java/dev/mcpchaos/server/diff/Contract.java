package dev.mcpchaos.server.diff;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.Map;
import java.util.Objects;

/**
 * What an MCP server promises its clients, as a diff compares it: its tools, resources, resource
 * templates and prompts by key, and (from cassettes) how each recorded call was answered.
 *
 * @param source       what the contract was read from, for messages
 * @param tools        tool definitions by name
 * @param resources    resources by uri
 * @param templates    resource templates by uriTemplate
 * @param prompts      prompts by name
 * @param callOutcomes for each recorded {@code tools/call} (tool name and arguments), the class of
 *                     its answer: {@code result}, {@code isError} or {@code error <code>}
 */
public record Contract(String source, Map<String, JsonNode> tools, Map<String, JsonNode> resources,
                       Map<String, JsonNode> templates, Map<String, JsonNode> prompts,
                       Map<String, String> callOutcomes) {

    public Contract {
        Objects.requireNonNull(source, "source");
        tools = Map.copyOf(tools);
        resources = Map.copyOf(resources);
        templates = Map.copyOf(templates);
        prompts = Map.copyOf(prompts);
        callOutcomes = Map.copyOf(callOutcomes);
    }

    /** What the contract holds, counted: {@code 3 tools, 0 resources, 0 resource templates, 1 prompt, 2 recorded calls}. */
    public String summary() {
        return count(tools.size(), "tool") + ", " + count(resources.size(), "resource") + ", "
                + count(templates.size(), "resource template") + ", " + count(prompts.size(), "prompt") + ", "
                + count(callOutcomes.size(), "recorded call");
    }

    private static String count(int n, String noun) {
        return n + " " + noun + (n == 1 ? "" : "s");
    }
}
