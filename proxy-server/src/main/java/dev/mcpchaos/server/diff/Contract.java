package dev.mcpchaos.server.diff;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What an MCP server promises its clients, as a diff compares it: its tools, resources, resource
 * templates and prompts by key, how much of each list the side holds, and how each recorded (or
 * replayed) {@code tools/call} was answered.
 *
 * <p>A diff compares only what both sides hold: a list a cassette never asked for is not an empty
 * list, and a side that did not run the calls the other recorded says nothing about them.
 *
 * @param source      what the contract was read from, for messages: a file, {@code server 'CMD'}, {@code server URL}
 * @param origin      a cassette, or a live server that was asked for its lists only or also sent recorded calls
 * @param lists       every {@link ListKind}, with its items and how much of the list is known
 * @param calls       for each call by {@link #callKey tool and arguments}: the tool, the arguments and the class of
 *                    the answer; recorded in a cassette, or a live server's answers to them when replayed
 * @param unsentTools for a replay, the tool of each recorded call that was not sent because this side does not
 *                    list that tool (a diff never calls what a server does not offer)
 */
public record Contract(String source, Origin origin, Map<ListKind, Listing> lists, Map<String, Call> calls,
                       List<String> unsentTools) {

    /** Where a contract came from. */
    public enum Origin {
        /** Recorded traffic: its calls are the recorded ones. */
        CASSETTE,
        /** A live server asked for its lists only: it has no calls. */
        LIVE,
        /** A live server asked for its lists, then sent the calls another side recorded. */
        LIVE_REPLAYED
    }

    /** How much of a list a side holds. */
    public enum Coverage {
        /** All of it (an answer with an error counts as an empty list: a capability the server lacks). */
        COMPLETE,
        /** Some pages and not the rest: the items held are known, what it lacks is not. */
        PARTIAL,
        /** Nothing: the list was never asked for, or never answered. */
        ABSENT
    }

    /**
     * One list of a side.
     *
     * @param items    by key, in the order they came
     * @param coverage how much of the list this is
     * @param why      for {@link Coverage#PARTIAL} and {@link Coverage#ABSENT}, what is missing, to follow the
     *                 side's source: {@code never listed them (no answer to prompts/list in it)}; else empty
     */
    public record Listing(Map<String, JsonNode> items, Coverage coverage, String why) {
        public Listing {
            items = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(items));
            Objects.requireNonNull(coverage, "coverage");
            Objects.requireNonNull(why, "why");
        }

        /** A whole list. */
        public static Listing complete(Map<String, JsonNode> items) {
            return new Listing(items, Coverage.COMPLETE, "");
        }
    }

    /**
     * A {@code tools/call} and the class of its answer.
     *
     * @param tool      the tool's name
     * @param arguments its arguments, as recorded (an empty object when there were none)
     * @param outcome   {@code result}, {@code isError} (a tool error result), {@code error <code>} (JSON-RPC),
     *                  or {@code no answer} (a replayed call the server did not answer in time)
     */
    public record Call(String tool, JsonNode arguments, String outcome) {
        public Call {
            Objects.requireNonNull(tool, "tool");
            Objects.requireNonNull(arguments, "arguments");
            Objects.requireNonNull(outcome, "outcome");
        }
    }

    public Contract {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(origin, "origin");
        EnumMap<ListKind, Listing> all = new EnumMap<>(ListKind.class);
        all.putAll(lists);
        for (ListKind kind : ListKind.values()) {
            if (!all.containsKey(kind)) {
                throw new IllegalArgumentException("lists: no " + kind.method() + " (expected: every list, "
                        + "ABSENT when the side does not have it)");
            }
        }
        lists = java.util.Collections.unmodifiableMap(all);
        calls = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(calls));
        unsentTools = List.copyOf(unsentTools);
    }

    /** The list of {@code kind}. */
    public Listing listing(ListKind kind) {
        return lists.get(kind);
    }

    /** Tool definitions by name. */
    public Map<String, JsonNode> tools() {
        return listing(ListKind.TOOLS).items();
    }

    /** Resources by uri. */
    public Map<String, JsonNode> resources() {
        return listing(ListKind.RESOURCES).items();
    }

    /** Resource templates by uriTemplate. */
    public Map<String, JsonNode> templates() {
        return listing(ListKind.TEMPLATES).items();
    }

    /** Prompts by name. */
    public Map<String, JsonNode> prompts() {
        return listing(ListKind.PROMPTS).items();
    }

    /** For each call by key, the class of its answer. */
    public Map<String, String> callOutcomes() {
        Map<String, String> outcomes = new LinkedHashMap<>();
        calls.forEach((key, call) -> outcomes.put(key, call.outcome()));
        return outcomes;
    }

    /**
     * What the contract holds, counted: {@code 3 tools, resources not listed, 0 resource templates,
     * 1 prompt, 2 recorded calls} (a live side's calls: {@code 2 calls replayed}, or nothing when it ran none).
     */
    public String summary() {
        StringBuilder text = new StringBuilder();
        for (ListKind kind : ListKind.values()) {
            Listing listing = listing(kind);
            String noun = kind.noun();
            String one = noun.substring(0, noun.length() - 1);
            text.append(text.length() == 0 ? "" : ", ").append(switch (listing.coverage()) {
                case ABSENT -> noun + " not listed";
                case PARTIAL -> count(listing.items().size(), one) + " (part of the list)";
                case COMPLETE -> count(listing.items().size(), one);
            });
        }
        switch (origin) {
            case CASSETTE -> text.append(", ").append(count(calls.size(), "recorded call"));
            case LIVE_REPLAYED -> text.append(", ").append(count(calls.size(), "call")).append(" replayed");
            case LIVE -> { }
        }
        return text.toString();
    }

    /** The key of a call: its tool and its arguments, members sorted, so that equal calls meet. */
    public static String callKey(String tool, JsonNode arguments) {
        return "tools/call " + tool + " " + canonical(arguments);
    }

    private static String canonical(JsonNode node) {
        if (node == null || node.isMissingNode()) {
            return "{}";
        }
        if (node.isObject()) {
            List<String> names = new java.util.ArrayList<>();
            node.fieldNames().forEachRemaining(names::add);
            names.sort(null);
            StringBuilder text = new StringBuilder("{");
            for (String field : names) {
                text.append(text.length() > 1 ? "," : "").append(com.fasterxml.jackson.databind.node.TextNode
                        .valueOf(field)).append(':').append(canonical(node.get(field)));
            }
            return text.append('}').toString();
        }
        if (node.isArray()) {
            StringBuilder text = new StringBuilder("[");
            for (JsonNode item : node) {
                text.append(text.length() > 1 ? "," : "").append(canonical(item));
            }
            return text.append(']').toString();
        }
        return node.toString();
    }

    static String count(int n, String noun) {
        return n + " " + noun + (n == 1 ? "" : "s");
    }
}
