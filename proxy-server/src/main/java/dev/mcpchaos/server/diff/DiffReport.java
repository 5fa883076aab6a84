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
 * The changes between two contracts, written as a table (for people), JSON, or JUnit XML (one
 * testcase per change, the breaking ones as failures, so CI shows them as failed tests).
 *
 * @param oldSource what the old contract came from
 * @param newSource what the new one came from
 * @param changes   the changes, in order
 */
public record DiffReport(String oldSource, String newSource, List<Change> changes) {

    public DiffReport {
        Objects.requireNonNull(oldSource, "oldSource");
        Objects.requireNonNull(newSource, "newSource");
        changes = List.copyOf(changes);
    }

    /** How many changes are breaking. */
    public long breakingCount() {
        return changes.stream().filter(Change::breaking).count();
    }

    /** An aligned text table, and a count line. */
    public void writeTable(Writer out) throws IOException {
        out.write("contract diff: " + oldSource + " -> " + newSource + "\n");
        if (changes.isEmpty()) {
            out.write("no changes\n");
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
        out.write(changes.size() + " change(s), " + breakingCount() + " breaking\n");
    }

    /** JSON: the two sources, counts, and the changes. */
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
        json.writeValue(out, root);
    }

    /** JUnit XML: a testsuite {@code mcp-chaos diff}, one testcase per change. */
    public void writeJunit(Writer out) throws IOException {
        out.write("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        out.write("<testsuite name=\"mcp-chaos diff\" tests=\"" + changes.size() + "\" failures=\""
                + breakingCount() + "\" errors=\"0\" skipped=\"0\">\n");
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
