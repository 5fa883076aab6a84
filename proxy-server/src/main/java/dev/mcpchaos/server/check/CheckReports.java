package dev.mcpchaos.server.check;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamWriter;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * A {@link Referee.Report} as people and CI servers read it: a summary for stderr, JSON, and
 * JUnit XML in which each check is a test case and its violations are failures (so a CI server
 * shows each check as a test). Every message shown is an excerpt with its secrets redacted.
 */
public final class CheckReports {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private CheckReports() {
    }

    /**
     * A few lines: the count of each check that fired with its first offending message, then a total.
     * Nothing but the total line when nothing fired.
     */
    public static String summary(Referee.Report report) {
        StringBuilder sb = new StringBuilder();
        long errors = 0;
        long warnings = 0;
        for (Check check : Check.values()) {
            long n = report.count(check);
            if (n == 0) {
                continue;
            }
            if (check.severity() == Severity.ERROR) {
                errors += n;
            } else {
                warnings += n;
            }
            sb.append("check ").append(check.severity().label()).append(' ').append(check.id()).append(": ").append(n)
                    .append(n == 1 ? " violation" : " violations").append(" (").append(check.docLink()).append(")\n");
            List<Violation> first = report.violations().getOrDefault(check, List.of());
            if (!first.isEmpty()) {
                Violation v = first.get(0);
                sb.append("  first: ").append(v.detail()).append("\n    ").append(v.session()).append(' ')
                        .append(v.dir()).append(" #").append(v.index()).append(v.id() != null ? " id=" + v.id() : "")
                        .append(v.method() != null ? " " + v.method() : "")
                        // a finding about no message (a server that would not exit) has no excerpt
                        .append(v.excerpt().isEmpty() ? " (no message excerpt)" : ": " + v.excerpt()).append('\n');
            }
        }
        if (report.byFaultsCount() > 0) {
            sb.append("caused by faults, charged to no peer: ").append(report.byFaultsCount()).append('\n');
            for (Referee.FaultFinding f : report.byFaults().subList(0, Math.min(3, report.byFaults().size()))) {
                sb.append("  ").append(f.violation().check().id()).append(": ").append(f.violation().detail())
                        .append('\n');
            }
        }
        java.util.Map<String, List<String>> byReason = new java.util.LinkedHashMap<>();
        report.notRun().forEach((check, why) -> byReason.computeIfAbsent(why, w -> new java.util.ArrayList<>())
                .add(check.id()));
        byReason.forEach((why, ids) -> sb.append("check not run: ").append(String.join(", ", ids)).append(" (")
                .append(why).append(")\n"));
        sb.append("check: ").append(report.messages()).append(" messages, ").append(errors)
                .append(errors == 1 ? " error, " : " errors, ").append(warnings)
                .append(warnings == 1 ? " warning" : " warnings");
        if (!report.notRun().isEmpty()) {
            sb.append(", ").append(report.notRun().size()).append(report.notRun().size() == 1 ? " check" : " checks")
                    .append(" not run");
        }
        if (report.keptFromReceiver() > 0) {
            sb.append(", ").append(report.keptFromReceiver()).append(report.keptFromReceiver() == 1 ? " request" :
                    " requests").append(" a fault kept from its receiver (owed no answer)");
        }
        if (report.dropped() > 0) {
            sb.append(", ").append(report.dropped()).append(" messages not checked");
        }
        if (report.untracked() > 0) {
            sb.append(", ").append(report.untracked()).append(" requests no longer followed (table full)");
        }
        return sb.append('\n').toString();
    }

    /** The report as JSON: totals, then every check with its severity, count and kept violations. */
    public static String json(Referee.Report report) {
        ObjectNode root = JSON.createObjectNode();
        root.put("messages", report.messages());
        root.put("errors", total(report, Severity.ERROR));
        root.put("warnings", total(report, Severity.WARNING));
        root.put("dropped", report.dropped());
        root.put("untracked", report.untracked());
        root.put("not_run", report.notRun().size());
        root.put("caused_by_faults", report.byFaultsCount());
        root.put("kept_from_receiver", report.keptFromReceiver());
        root.put("replayed", report.replayed());
        ArrayNode checks = root.putArray("checks");
        for (Check check : Check.values()) {
            ObjectNode c = checks.addObject();
            c.put("id", check.id());
            c.put("severity", check.severity().label());
            c.put("summary", check.summary());
            c.put("doc", check.docLink());
            c.put("count", report.count(check));
            c.put("status", report.count(check) > 0 ? "failed" : report.ran(check) ? "passed" : "not_run");
            if (!report.ran(check)) {
                c.put("not_run", report.notRun().get(check));
            }
            ArrayNode list = c.putArray("violations");
            for (Violation v : report.violations().getOrDefault(check, List.of())) {
                violation(list.addObject(), v);
            }
        }
        ArrayNode byFaults = root.putArray("by_faults");
        for (Referee.FaultFinding f : report.byFaults()) {
            ObjectNode o = byFaults.addObject();
            o.put("rule", f.rule());
            o.put("check", f.violation().check().id());
            violation(o, f.violation());
        }
        try {
            return JSON.writeValueAsString(root) + "\n";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void violation(ObjectNode o, Violation v) {
        o.put("detail", v.detail());
        o.put("session", v.session());
        o.put("dir", v.dir());
        o.put("index", v.index());
        if (v.id() instanceof Long l) {
            o.put("id", l);
        } else if (v.id() != null) {
            o.put("id", v.id().toString());
        }
        if (v.method() != null) {
            o.put("method", v.method());
        }
        o.put("message", v.excerpt());
    }

    /**
     * JUnit XML: one {@code testsuite} named {@code suiteName}, one {@code testcase} per check
     * (classname {@code mcp-chaos.check}, name the check's id), each violation kept a
     * {@code failure} (type the severity) with the message in its text. A warning's failure
     * makes a red test too: a CI server has no yellow.
     */
    public static String junitXml(Referee.Report report, String suiteName) {
        StringWriter out = new StringWriter();
        try {
            XMLStreamWriter xml = XMLOutputFactory.newFactory().createXMLStreamWriter(out);
            xml.writeStartDocument("UTF-8", "1.0");
            xml.writeCharacters("\n");
            xml.writeStartElement("testsuite");
            xml.writeAttribute("name", suiteName);
            xml.writeAttribute("tests", Integer.toString(Check.values().length));
            long failing = java.util.Arrays.stream(Check.values()).filter(c -> report.count(c) > 0).count();
            xml.writeAttribute("failures", Long.toString(failing));
            xml.writeAttribute("errors", "0");
            xml.writeAttribute("skipped", Integer.toString(report.notRun().size()));
            xml.writeCharacters("\n");
            for (Check check : Check.values()) {
                xml.writeCharacters("  ");
                xml.writeStartElement("testcase");
                xml.writeAttribute("classname", "mcp-chaos.check");
                xml.writeAttribute("name", check.id());
                long n = report.count(check);
                if (n == 0 && !report.ran(check)) {
                    xml.writeCharacters("\n    ");
                    xml.writeEmptyElement("skipped");
                    xml.writeAttribute("message", "not run: " + report.notRun().get(check));
                    xml.writeCharacters("\n  ");
                } else if (n > 0) {
                    List<Violation> kept = report.violations().getOrDefault(check, List.of());
                    xml.writeCharacters("\n    ");
                    xml.writeStartElement("failure");
                    xml.writeAttribute("type", check.severity().label());
                    xml.writeAttribute("message", n + (n == 1 ? " violation: " : " violations: ") + check.summary()
                            + " (" + check.docLink() + ")");
                    StringBuilder text = new StringBuilder();
                    for (Violation v : kept) {
                        text.append(v).append('\n');
                    }
                    if (n > kept.size()) {
                        text.append("... and ").append(n - kept.size()).append(" more\n");
                    }
                    xml.writeCharacters(clean(text.toString()));
                    xml.writeEndElement();
                    xml.writeCharacters("\n  ");
                }
                xml.writeEndElement();
                xml.writeCharacters("\n");
            }
            xml.writeEndElement();
            xml.writeCharacters("\n");
            xml.writeEndDocument();
            xml.close();
        } catch (XMLStreamException e) {
            throw new IllegalStateException("junit xml: " + e.getMessage(), e);
        }
        return out.toString();
    }

    /** Drops the characters XML 1.0 cannot carry (control characters a broken server printed). */
    private static String clean(String text) {
        StringBuilder sb = new StringBuilder(text.length());
        text.codePoints().forEach(cp -> {
            boolean ok = cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF)
                    || (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
            sb.appendCodePoint(ok ? cp : '?');
        });
        return sb.toString();
    }

    private static long total(Referee.Report report, Severity severity) {
        return report.counts().entrySet().stream().filter(e -> e.getKey().severity() == severity)
                .mapToLong(java.util.Map.Entry::getValue).sum();
    }

    /** Writes {@code text} to {@code file}, replacing it. */
    public static void write(Path file, String text) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }

    static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }
}
