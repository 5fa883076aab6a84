package dev.mcpchaos.server.check;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The guard of the referee's registry: every {@link Check} belongs to exactly one registered
 * {@link CheckFamily}, and docs/checks.md has a section for each registered check, opening with
 * its severity, and none for a check nobody makes. A check added without its family or its
 * documentation, or documented and never registered, fails here.
 */
class CheckFamiliesTest {

    private static final Path DOC = Path.of("../docs/checks.md");
    private static final Pattern SECTION = Pattern.compile("(?m)^### `([a-z]+\\.[a-z-]+)`\\n\\n(\\w+)");

    private static List<Check> registered() {
        List<Check> all = new ArrayList<>();
        CheckFamilies.ALL.forEach(family -> all.addAll(family.checks()));
        return all;
    }

    @Test
    void everyCheckBelongsToExactlyOneFamily() {
        assertThat(registered()).containsExactlyInAnyOrder(Check.values());
    }

    @Test
    void theDocumentedChecksAreTheRegisteredOnesWithTheirSeverities() throws IOException {
        Map<String, String> documented = new LinkedHashMap<>();
        Matcher section = SECTION.matcher(Files.readString(DOC));
        while (section.find()) {
            assertThat(documented.put(section.group(1), section.group(2))).as("%s documented twice", section.group(1))
                    .isNull();
        }
        Map<String, String> made = new LinkedHashMap<>();
        registered().forEach(check -> made.put(check.id(), check.severity().name().toLowerCase(Locale.ROOT)));
        assertThat(documented).as("docs/checks.md's sections (id -> the severity its text opens with)")
                .containsExactlyInAnyOrderEntriesOf(made);
    }
}
