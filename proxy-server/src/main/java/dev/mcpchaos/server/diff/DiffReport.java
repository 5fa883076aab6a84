package dev.mcpchaos.server.diff;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.Writer;
import java.util.List;
import java.util.Objects;

/**
 * The changes between two contracts and what could not be compared, written as a table (for
 * people), JSON, or JUnit XML (one testcase per change, the breaking ones as failures, so CI shows
 * them as failed tests; one skipped testcase per thing not compared, never a passed one).
 *
 * @param oldSource   what the old contract came from
 * @param newSource   what the new one came from
 * @param changes     the changes, in order
 * @param notCompared what one side (or both) did not hold, so was not compared
 */
public record DiffReport(String oldSource, String newSource, List<Change> changes, List<NotCompared> notCompared) {

    public DiffReport {
        Objects.requireNonNull(oldSource, "oldSource");
        Objects.requireNonNull(newSource, "newSource");
        changes = List.copyOf(changes);
        notCompared = List.copyOf(notCompared);
    }

    /** A report of sides that held the same things: nothing left uncompared. */
    public DiffReport(String oldSource, String newSource, List<Change> changes) {
        this(oldSource, newSource, changes, List.of());
    }

    /** How many changes are breaking. */
    public long breakingCount() {
        return changes.stream().filter(Change::breaking).count();
    }

    /**
     * An aligned text table, a line per thing not compared, and a count line. With no change it
     * says {@code no changes}, or, when something was not compared, {@code no changes in what both
     * sides have (N not compared)}: never a bare "no changes" over what was not looked at.
     */
    public void writeTable(Writer out) throws IOException {
        out.write("contract diff: " + oldSource + " -> " + newSource + "\n");
        if (changes.isEmpty()) {
            writeNotCompared(out);
            out.write(notCompared.isEmpty() ? "no changes\n"
                    : "no changes in what both sides have (" + notCompared.size() + " not compared)\n");
            return;
        }
        int kindWidth = "change".length();
        int subjectWidth = "subject".length();
        for (Change change : changes) {
            kindWidth = Math.max(kindWidth, change.kind().length());
            subjectWidth = Math.max(subjectWidth, change.subject().length());
        }
        String format = "%-10s  %-" + kindWidth + "s  %-" + subjectWidth + "s  %s%n";
        out.write(String.format(format, "class", "change", "subject", "detail"));
        for (Change change : changes) {
            out.write(String.format(format, change.classification(), change.kind(), change.subject(), change.detail()));
        }
        writeNotCompared(out);
        out.write(changes.size() + " change(s), " + breakingCount() + " breaking"
                + (notCompared.isEmpty() ? "" : ", " + notCompared.size() + " not compared") + "\n");
    }

    private void writeNotCompared(Writer out) throws IOException {
        for (NotCompared gap : notCompared) {
            out.write("not compared: " + gap.subject() + ": " + gap.reason() + "\n");
        }
    }

    /** JSON: the two sources, counts, the changes, and what was not compared ({@code notCompared}). */
    public void writeJson(Writer out) throws IOException {
        ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        ObjectNode root = json.createObjectNode();
        root.put("old", oldSource);
        root.put("new", newSource);
        root.put("changes", changes.size());
        root.put("breaking", breakingCount());
        ArrayNode list = root.putArray("items");
        for (Change change : changes) {
            list.addObject().put("classification", change.classification()).put("kind", change.kind())
                    .put("subject", change.subject()).put("detail", change.detail());
        }
        ArrayNode gaps = root.putArray("notCompared");
        for (NotCompared gap : notCompared) {
            gaps.addObject().put("subject", gap.subject()).put("reason", gap.reason());
        }
        json.writeValue(out, root);
    }

    /**
     * JUnit XML: a testsuite {@code mcp-chaos diff}, one testcase per change, and one skipped
     * testcase ({@code classname} {@code mcp-chaos.diff.not-compared}) per thing not compared.
     */
    public void writeJunit(Writer out) throws IOException {
        out.write("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        out.write("<testsuite name=\"mcp-chaos diff\" tests=\"" + (changes.size() + notCompared.size())
                + "\" failures=\"" + breakingCount() + "\" errors=\"0\" skipped=\"" + notCompared.size() + "\">\n");
        out.write("  <properties>\n    <property name=\"old\" value=\"" + xml(oldSource) + "\"/>\n"
                + "    <property name=\"new\" value=\"" + xml(newSource) + "\"/>\n  </properties>\n");
        for (Change change : changes) {
            out.write("  <testcase classname=\"mcp-chaos.diff." + xml(change.kind()) + "\" name=\""
                    + xml(change.subject()) + "\"");
            if (change.breaking()) {
                out.write(">\n    <failure type=\"" + xml(change.kind()) + "\" message=\"" + xml(change.detail())
                        + "\">" + xml(change.subject() + ": " + change.detail()) + "</failure>\n  </testcase>\n");
            } else {
                out.write(">\n    <system-out>" + xml("compatible: " + change.detail()) + "</system-out>\n  </testcase>\n");
            }
        }
        for (NotCompared gap : notCompared) {
            out.write("  <testcase classname=\"mcp-chaos.diff.not-compared\" name=\"" + xml(gap.subject())
                    + "\">\n    <skipped message=\"" + xml(gap.reason()) + "\"/>\n  </testcase>\n");
        }
        out.write("</testsuite>\n");
    }

    /** Escapes for XML text and attributes, dropping characters XML 1.0 cannot hold. */
    private static String xml(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '&' -> out.append("&amp;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&apos;");
                default -> {
                    if (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') {
                        out.append(c);
                    }
                }
            }
        }
        return out.toString();
    }
}
