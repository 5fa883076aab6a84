package dev.mcpchaos.rules;

import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.fault.FaultParameter;
import dev.mcpchaos.rules.fault.FaultRegistry;
import dev.mcpchaos.rules.fault.FaultType;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rule reference ({@code docs/rules.md}) against the faults' own descriptors: its table of
 * faults (names, parameters, transports, order) and each fault's table of parameters (names and
 * defaults). A fault added, renamed or given a parameter without its docs, or docs that drift
 * from the code, fail here, saying which row to write.
 */
class FaultReferenceTest {

    private static final Pattern CODE = Pattern.compile("`([^`]+)`");

    @Test
    void theTableOfFaultsListsEveryTypeWithItsParametersAndTransports() throws IOException {
        List<String> rows = tableAfter(docs(), "| type | parameters | transports |");
        List<String> documented = new ArrayList<>();
        Map<String, FaultType> byName = new LinkedHashMap<>();
        FaultRegistry.all().forEach(t -> byName.put(t.name(), t));
        for (String row : rows) {
            String[] cells = cells(row);
            String name = codes(cells[0]).get(0);
            documented.add(name);
            FaultType type = byName.get(name);
            assertThat(type).as("docs/rules.md lists fault '" + name + "', which FaultRegistry does not know").isNotNull();
            assertThat(codes(cells[1])).as("parameters of " + name + " in docs/rules.md's table of faults")
                    .isEqualTo(type.parameterNames());
            assertThat(cells[2]).as("transports of " + name + " in docs/rules.md's table of faults")
                    .isEqualTo(transports(type));
        }
        assertThat(documented).as("the faults of docs/rules.md's table, in the registry's order")
                .containsExactlyElementsOf(FaultRegistry.types());
    }

    @Test
    void eachFaultsSectionDocumentsItsParametersAndTheirDefaults() throws IOException {
        String docs = docs();
        for (FaultType type : FaultRegistry.all()) {
            String section = section(docs, type.name());
            Map<String, String> documented = new LinkedHashMap<>();
            for (String row : tableAfter(section, "| parameter | default |")) {
                String[] cells = cells(row);
                for (String name : codes(cells[0])) {
                    documented.put(name, cells[1].replace("`", "").trim());
                }
            }
            Map<String, String> declared = new LinkedHashMap<>();
            for (FaultParameter p : type.parameters()) {
                declared.put(p.name(), p.defaultValue());
            }
            assertThat(documented).as("the parameters and defaults of '### " + type.name()
                    + "' in docs/rules.md (as declared by its FaultType)").containsExactlyEntriesOf(declared);
        }
    }

    private static String docs() throws IOException {
        return Files.readString(Path.of("..", "docs", "rules.md"));
    }

    /** From {@code ### name} to the next heading of that level or above. */
    private static String section(String docs, String name) {
        Matcher m = Pattern.compile("(?m)^### " + Pattern.quote(name) + "\\s*$").matcher(docs);
        assertThat(m.find()).as("docs/rules.md has a section '### " + name + "'").isTrue();
        Matcher end = Pattern.compile("(?m)^#{1,3} ").matcher(docs);
        return docs.substring(m.end(), end.find(m.end()) ? end.start() : docs.length());
    }

    /** The rows of the table whose header starts with {@code header}, after its separator line; none without it. */
    private static List<String> tableAfter(String text, String header) {
        List<String> rows = new ArrayList<>();
        int at = text.indexOf(header);
        if (at < 0) {
            return rows;
        }
        List<String> lines = text.substring(at).lines().toList();
        for (int i = 2; i < lines.size() && lines.get(i).startsWith("|"); i++) {
            rows.add(lines.get(i));
        }
        return rows;
    }

    private static String[] cells(String row) {
        String[] cells = row.substring(1).split("\\|", -1);
        for (int i = 0; i < cells.length; i++) {
            cells[i] = cells[i].trim();
        }
        return cells;
    }

    private static List<String> codes(String cell) {
        List<String> codes = new ArrayList<>();
        Matcher m = CODE.matcher(cell);
        while (m.find()) {
            codes.add(m.group(1));
        }
        return codes;
    }

    private static String transports(FaultType type) {
        if (type.supports(TransportKind.STDIO) && type.supports(TransportKind.HTTP)) {
            return "stdio, http";
        }
        return type.supports(TransportKind.HTTP) ? "http only" : "stdio only";
    }
}
