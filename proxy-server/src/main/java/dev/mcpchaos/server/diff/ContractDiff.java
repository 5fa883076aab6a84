package dev.mcpchaos.server.diff;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Compares two {@link Contract}s and classifies each difference as breaking (a client written
 * against the old one may fail) or compatible. The rules, with examples: docs/checks.md, "Contract diff".
 */
public final class ContractDiff {

    /** Lower bounds: raising one tightens. */
    private static final List<String> LOWER_BOUNDS = List.of("minimum", "exclusiveMinimum", "minLength",
            "minItems", "minProperties");
    /** Upper bounds: lowering one tightens. */
    private static final List<String> UPPER_BOUNDS = List.of("maximum", "exclusiveMaximum", "maxLength",
            "maxItems", "maxProperties");
    /** Constraints whose change cannot be ordered: any change is taken as tightening. */
    private static final List<String> OPAQUE = List.of("pattern", "format", "const", "multipleOf");

    private ContractDiff() {
    }

    /** The changes from {@code before} to {@code after} and what could not be compared: the whole report. */
    public static DiffReport compare(Contract before, Contract after) {
        return new DiffReport(before.source(), after.source(), diff(before, after), notCompared(before, after));
    }

    /**
     * Every difference from {@code before} to {@code after}, in a stable order, in what both sides
     * hold: a list one side does not have is not compared; an item is reported added only when the
     * old side has its whole list, removed only when the new side has; a call only when both sides
     * have its answer. {@link #notCompared} says what was left out.
     */
    public static List<Change> diff(Contract before, Contract after) {
        Objects.requireNonNull(before, "before");
        Objects.requireNonNull(after, "after");
        List<Change> changes = new ArrayList<>();
        if (comparable(before, after, ListKind.TOOLS)) {
            tools(before.tools(), after.tools(), knows(before, ListKind.TOOLS), knows(after, ListKind.TOOLS), changes);
        }
        if (comparable(before, after, ListKind.RESOURCES)) {
            items("resource", before.resources(), after.resources(), knows(before, ListKind.RESOURCES),
                    knows(after, ListKind.RESOURCES), changes);
        }
        if (comparable(before, after, ListKind.TEMPLATES)) {
            items("resource template", before.templates(), after.templates(), knows(before, ListKind.TEMPLATES),
                    knows(after, ListKind.TEMPLATES), changes);
        }
        if (comparable(before, after, ListKind.PROMPTS)) {
            prompts(before.prompts(), after.prompts(), knows(before, ListKind.PROMPTS), knows(after, ListKind.PROMPTS),
                    changes);
        }
        for (Map.Entry<String, String> call : new java.util.TreeMap<>(before.callOutcomes()).entrySet()) {
            String now = after.callOutcomes().get(call.getKey());
            if (now != null && !now.equals(call.getValue())) {
                changes.add(Change.breaking("call.error-class", call.getKey(),
                        "answered with " + call.getValue() + ", now " + now));
            }
        }
        return changes;
    }

    /**
     * What {@link #diff} could not compare, and why: lists one side (or neither) holds, lists a
     * side holds only in part, and recorded calls the other side has no answer to.
     */
    public static List<NotCompared> notCompared(Contract before, Contract after) {
        List<NotCompared> gaps = new ArrayList<>();
        for (ListKind kind : ListKind.values()) {
            Contract.Listing old = before.listing(kind);
            Contract.Listing now = after.listing(kind);
            if (old.coverage() == Contract.Coverage.ABSENT && now.coverage() == Contract.Coverage.ABSENT) {
                gaps.add(new NotCompared(kind.noun(), "neither side listed them (no answer to " + kind.method()
                        + " in either)"));
            } else if (old.coverage() == Contract.Coverage.ABSENT) {
                gaps.add(new NotCompared(kind.noun(), before.source() + " " + old.why()));
            } else if (now.coverage() == Contract.Coverage.ABSENT) {
                gaps.add(new NotCompared(kind.noun(), after.source() + " " + now.why()));
            } else {
                if (old.coverage() == Contract.Coverage.PARTIAL) {
                    gaps.add(new NotCompared(kind.noun() + " added", before.source() + " " + old.why()));
                }
                if (now.coverage() == Contract.Coverage.PARTIAL) {
                    gaps.add(new NotCompared(kind.noun() + " removed", after.source() + " " + now.why()));
                }
            }
        }
        calls(before, after, "new", gaps);
        calls(after, before, "old", gaps);
        return gaps;
    }

    /** The calls {@code recorded} holds that {@code other} (the {@code otherName} side) has no answer to. */
    private static void calls(Contract recorded, Contract other, String otherName, List<NotCompared> gaps) {
        if (recorded.origin() != Contract.Origin.CASSETTE || recorded.calls().isEmpty()) {
            return;
        }
        switch (other.origin()) {
            case LIVE -> gaps.add(new NotCompared("recorded calls", Contract.count(recorded.calls().size(), "call")
                    + " recorded in " + recorded.source() + ", not sent to the " + otherName
                    + " side, a live server (--replay-calls sends them)"));
            case LIVE_REPLAYED -> {
                if (!other.unsentTools().isEmpty()) {
                    gaps.add(new NotCompared("recorded calls", Contract.count(other.unsentTools().size(), "call")
                            + " not sent to the " + otherName + " side: it does not list tool "
                            + String.join(", ", new TreeSet<>(other.unsentTools()))));
                }
            }
            case CASSETTE -> {
                long only = recorded.calls().keySet().stream().filter(k -> !other.calls().containsKey(k)).count();
                if (only > 0) {
                    gaps.add(new NotCompared("recorded calls", Contract.count((int) only, "call") + " recorded only in "
                            + recorded.source() + " (no call of the same tool with the same arguments in "
                            + other.source() + ")"));
                }
            }
        }
    }

    /** Whether both sides hold some of the list of {@code kind}. */
    private static boolean comparable(Contract before, Contract after, ListKind kind) {
        return before.listing(kind).coverage() != Contract.Coverage.ABSENT
                && after.listing(kind).coverage() != Contract.Coverage.ABSENT;
    }

    /** Whether {@code side} holds all of the list of {@code kind}: what it lacks, it does not have. */
    private static boolean knows(Contract side, ListKind kind) {
        return side.listing(kind).coverage() == Contract.Coverage.COMPLETE;
    }

    /**
     * @param oldWhole whether {@code before} is the old side's whole list: else a tool it lacks may be on a
     *                 page it never fetched, and is not reported as added
     * @param newWhole likewise for the new side, and tools reported removed
     */
    private static void tools(Map<String, JsonNode> before, Map<String, JsonNode> after, boolean oldWhole,
                              boolean newWhole, List<Change> changes) {
        Set<String> removed = new TreeSet<>(before.keySet());
        removed.removeAll(after.keySet());
        Set<String> added = new TreeSet<>(after.keySet());
        added.removeAll(before.keySet());
        if (!newWhole) {
            removed.clear();
        }
        if (!oldWhole) {
            added.clear();
        }
        for (String old : List.copyOf(removed)) {
            for (String renamed : added) {
                if (similar(before.get(old).path("inputSchema"), after.get(renamed).path("inputSchema"))) {
                    changes.add(Change.breaking("tool.renamed", "tool " + old,
                            "renamed to '" + renamed + "' (same parameters)"));
                    removed.remove(old);
                    added.remove(renamed);
                    String subject = "tool " + renamed;
                    tool(subject, before.get(old), after.get(renamed), changes);
                    break;
                }
            }
        }
        removed.forEach(name -> changes.add(Change.breaking("tool.removed", "tool " + name, "removed")));
        added.forEach(name -> changes.add(Change.compatible("tool.added", "tool " + name, "added")));
        for (String name : new TreeSet<>(before.keySet())) {
            if (after.containsKey(name)) {
                tool("tool " + name, before.get(name), after.get(name), changes);
            }
        }
    }

    /** Two input schemas alike enough that a removed and an added tool are one renamed. */
    private static boolean similar(JsonNode a, JsonNode b) {
        Set<String> left = names(a.path("properties"));
        Set<String> right = names(b.path("properties"));
        if (left.isEmpty() && right.isEmpty()) {
            return false; // any two tools without parameters would "match"
        }
        Set<String> common = new HashSet<>(left);
        common.retainAll(right);
        Set<String> all = new HashSet<>(left);
        all.addAll(right);
        return common.size() * 5 >= all.size() * 4; // Jaccard >= 0.8
    }

    private static void tool(String subject, JsonNode before, JsonNode after, List<Change> changes) {
        description(subject, before, after, changes);
        schema(subject, "param", before.path("inputSchema"), after.path("inputSchema"), true, changes);
        JsonNode oldOut = before.path("outputSchema");
        JsonNode newOut = after.path("outputSchema");
        if (!oldOut.isMissingNode() && newOut.isMissingNode()) {
            changes.add(Change.breaking("output.removed", subject, "outputSchema removed"));
        } else if (oldOut.isMissingNode() && !newOut.isMissingNode()) {
            changes.add(Change.compatible("output.added", subject, "outputSchema added"));
        } else if (!oldOut.isMissingNode()) {
            schema(subject, "output", oldOut, newOut, false, changes);
        }
    }

    /**
     * Compares an object schema's properties. For inputs ({@code input} true) a client sends them,
     * so a new required one or a tighter constraint breaks it; for outputs a client reads them, so
     * a removed or retyped field breaks it and a new one does not.
     */
    private static void schema(String subject, String what, JsonNode before, JsonNode after, boolean input,
                               List<Change> changes) {
        JsonNode oldProps = before.path("properties");
        JsonNode newProps = after.path("properties");
        Set<String> oldRequired = texts(before.path("required"));
        Set<String> newRequired = texts(after.path("required"));
        Set<String> names = new TreeSet<>(names(oldProps));
        names.addAll(names(newProps));
        for (String name : names) {
            String at = subject + " / " + what + " " + name;
            JsonNode old = oldProps.path(name);
            JsonNode now = newProps.path(name);
            if (now.isMissingNode()) {
                changes.add(Change.breaking(what + ".removed", at, "removed"));
                continue;
            }
            if (old.isMissingNode()) {
                boolean required = newRequired.contains(name);
                changes.add(input && required
                        ? Change.breaking(what + ".added.required", at, "added, required")
                        : Change.compatible(what + ".added", at, required ? "added" : "added, optional"));
                continue;
            }
            if (!Objects.equals(type(old), type(now))) {
                changes.add(Change.breaking(what + ".type", at, "type " + type(old) + " -> " + type(now)));
                continue;
            }
            if (input) {
                boolean wasRequired = oldRequired.contains(name);
                boolean isRequired = newRequired.contains(name);
                if (!wasRequired && isRequired) {
                    changes.add(Change.breaking(what + ".required", at, "made required"));
                } else if (wasRequired && !isRequired) {
                    changes.add(Change.compatible(what + ".optional", at, "made optional"));
                }
                constraints(at, what, old, now, changes);
            } else if (old.has("properties") || now.has("properties")) {
                schema(at, what, old, now, false, changes);
            }
            description(at, old, now, changes);
        }
    }

    private static void constraints(String at, String what, JsonNode old, JsonNode now, List<Change> changes) {
        JsonNode oldEnum = old.path("enum");
        JsonNode newEnum = now.path("enum");
        if (!oldEnum.equals(newEnum)) {
            Set<String> before = jsonTexts(oldEnum);
            Set<String> after = jsonTexts(newEnum);
            if (newEnum.isMissingNode()) {
                changes.add(Change.compatible(what + ".enum.removed", at, "enum " + oldEnum + " removed"));
            } else if (oldEnum.isMissingNode() || !after.containsAll(before)) {
                changes.add(Change.breaking(what + ".enum.narrowed", at, "enum " + describe(oldEnum) + " -> " + newEnum));
            } else if (!before.equals(after)) {
                changes.add(Change.compatible(what + ".enum.widened", at, "enum " + oldEnum + " -> " + newEnum));
            }
        }
        for (String bound : LOWER_BOUNDS) {
            bound(at, what, bound, old.path(bound), now.path(bound), true, changes);
        }
        for (String bound : UPPER_BOUNDS) {
            bound(at, what, bound, old.path(bound), now.path(bound), false, changes);
        }
        for (String keyword : OPAQUE) {
            JsonNode before = old.path(keyword);
            JsonNode after = now.path(keyword);
            if (!before.equals(after)) {
                changes.add(after.isMissingNode()
                        ? Change.compatible(what + "." + keyword + ".removed", at, keyword + " " + before + " removed")
                        : Change.breaking(what + "." + keyword, at, keyword + " " + describe(before) + " -> " + after));
            }
        }
    }

    private static void bound(String at, String what, String keyword, JsonNode before, JsonNode after,
                              boolean lower, List<Change> changes) {
        if (before.equals(after) || (!before.isMissingNode() && !before.isNumber())
                || (!after.isMissingNode() && !after.isNumber())) {
            return;
        }
        boolean tighter;
        if (before.isMissingNode()) {
            tighter = true;
        } else if (after.isMissingNode()) {
            tighter = false;
        } else {
            int order = after.decimalValue().compareTo(before.decimalValue());
            if (order == 0) {
                return; // 1 and 1.0
            }
            tighter = lower ? order > 0 : order < 0;
        }
        String detail = keyword + " " + describe(before) + " -> " + describe(after);
        changes.add(tighter ? Change.breaking(what + "." + keyword + ".tightened", at, detail)
                : Change.compatible(what + "." + keyword + ".loosened", at, detail));
    }

    /** Resources and resource templates: by key; a changed mimeType breaks a reader of it. */
    private static void items(String noun, Map<String, JsonNode> before, Map<String, JsonNode> after,
                              boolean oldWhole, boolean newWhole, List<Change> changes) {
        String kind = noun.replace(' ', '-');
        for (String key : union(before.keySet(), after.keySet())) {
            String subject = noun + " " + key;
            JsonNode old = before.get(key);
            JsonNode now = after.get(key);
            if (now == null) {
                if (newWhole) {
                    changes.add(Change.breaking(kind + ".removed", subject, "removed"));
                }
            } else if (old == null) {
                if (oldWhole) {
                    changes.add(Change.compatible(kind + ".added", subject, "added"));
                }
            } else {
                if (!old.path("mimeType").equals(now.path("mimeType"))) {
                    changes.add(Change.breaking(kind + ".mimeType", subject,
                            "mimeType " + describe(old.path("mimeType")) + " -> " + describe(now.path("mimeType"))));
                }
                if (!old.path("name").equals(now.path("name"))) {
                    changes.add(Change.compatible(kind + ".name", subject,
                            "name " + describe(old.path("name")) + " -> " + describe(now.path("name"))));
                }
                description(subject, old, now, changes);
            }
        }
    }

    private static void prompts(Map<String, JsonNode> before, Map<String, JsonNode> after, boolean oldWhole,
                                boolean newWhole, List<Change> changes) {
        for (String key : union(before.keySet(), after.keySet())) {
            String subject = "prompt " + key;
            JsonNode old = before.get(key);
            JsonNode now = after.get(key);
            if (now == null) {
                if (newWhole) {
                    changes.add(Change.breaking("prompt.removed", subject, "removed"));
                }
                continue;
            }
            if (old == null) {
                if (oldWhole) {
                    changes.add(Change.compatible("prompt.added", subject, "added"));
                }
                continue;
            }
            description(subject, old, now, changes);
            Map<String, JsonNode> oldArgs = byName(old.path("arguments"));
            Map<String, JsonNode> newArgs = byName(now.path("arguments"));
            for (String name : union(oldArgs.keySet(), newArgs.keySet())) {
                String at = subject + " / argument " + name;
                JsonNode a = oldArgs.get(name);
                JsonNode b = newArgs.get(name);
                if (b == null) {
                    changes.add(Change.breaking("argument.removed", at, "removed"));
                } else if (a == null) {
                    boolean required = b.path("required").asBoolean(false);
                    changes.add(required ? Change.breaking("argument.added.required", at, "added, required")
                            : Change.compatible("argument.added", at, "added, optional"));
                } else {
                    boolean was = a.path("required").asBoolean(false);
                    boolean is = b.path("required").asBoolean(false);
                    if (!was && is) {
                        changes.add(Change.breaking("argument.required", at, "made required"));
                    } else if (was && !is) {
                        changes.add(Change.compatible("argument.optional", at, "made optional"));
                    }
                    description(at, a, b, changes);
                }
            }
        }
    }

    private static void description(String subject, JsonNode before, JsonNode after, List<Change> changes) {
        JsonNode old = before.path("description");
        JsonNode now = after.path("description");
        if (!old.equals(now)) {
            changes.add(Change.compatible("description", subject,
                    "description " + describe(old) + " -> " + describe(now)));
        }
    }

    private static String describe(JsonNode node) {
        return node == null || node.isMissingNode() ? "(none)" : node.toString();
    }

    /** A schema's type as text ("string", "[integer, null]"), or null when it gives none. */
    private static String type(JsonNode schema) {
        JsonNode type = schema.path("type");
        if (type.isArray()) {
            return new TreeSet<>(jsonTexts(type)).toString();
        }
        return type.isMissingNode() ? null : type.asText();
    }

    private static Set<String> names(JsonNode object) {
        Set<String> names = new LinkedHashSet<>();
        if (object.isObject()) {
            object.fieldNames().forEachRemaining(names::add);
        }
        return names;
    }

    private static Set<String> texts(JsonNode array) {
        Set<String> texts = new HashSet<>();
        array.forEach(item -> texts.add(item.asText()));
        return texts;
    }

    private static Set<String> jsonTexts(JsonNode array) {
        Set<String> texts = new HashSet<>();
        (array == null ? MissingNode.getInstance() : array).forEach(item -> texts.add(item.toString()));
        return texts;
    }

    private static Map<String, JsonNode> byName(JsonNode array) {
        Map<String, JsonNode> named = new java.util.LinkedHashMap<>();
        array.forEach(item -> named.put(item.path("name").asText(), item));
        return named;
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> all = new TreeSet<>(a);
        all.addAll(b);
        return all;
    }
}
