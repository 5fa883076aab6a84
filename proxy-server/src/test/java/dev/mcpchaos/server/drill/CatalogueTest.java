package dev.mcpchaos.server.drill;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.rules.fault.FaultRegistry;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The catalogue as data: every scenario well formed, the built ones runnable rule sets, docs/drill.md its table. */
class CatalogueTest {

    private static final String TABLE_START = "<!-- catalogue: generated from Catalogue.markdownTable(), checked by CatalogueTest -->";
    private static final String TABLE_END = "<!-- end of catalogue -->";

    @Test
    void namesAndRuleNamesAreDistinct() {
        Set<String> names = new HashSet<>();
        Set<String> rules = new HashSet<>();
        for (Scenario s : Catalogue.all()) {
            assertThat(names.add(s.name())).as("scenario name " + s.name()).isTrue();
            for (String rule : s.ruleNames()) {
                assertThat(rules.add(rule)).as("rule name " + rule).isTrue();
            }
        }
        assertThat(names).contains("answer-lost", "late-answer", "duplicate-answer", "out-of-order", "malformed-event",
                "truncated-answer", "oversized-answer", "slow-drip", "error-vs-iserror", "retry-after-503",
                "server-crash", "write-answer-dropped", "request-dropped", "session-404", "sse-resume",
                "priming-missing", "retry-field", "get-stream-dropped", "stream-broken-reissue", "close-as-cancel",
                "listen-cut", "input-required-loop", "header-mismatch", "version-negotiation", "discover-unsupported");
    }

    @Test
    void builtScenariosAreOrdinaryRulesTheProxyOfEachOfTheirTransportsTakes() {
        for (Scenario s : Catalogue.all()) {
            if (!s.built()) {
                continue;
            }
            RuleSet rules = s.ruleSet(7);
            assertThat(rules.seed()).hasValue(7);
            s.transports().forEach(rules::checkTransport);
            rules.rules().forEach(r -> assertThat(FaultRegistry.types()).as(s.name()).contains(r.fault().type()));
            assertThat(s.appliesTo(TransportKind.HTTP, Drill.ERA) || s.appliesTo(TransportKind.STDIO, Drill.ERA)
                    || s.appliesTo(TransportKind.HTTP, Era.STATELESS))
                    .as(s.name() + " runs over HTTP or stdio in the 2025 era, or over HTTP in the 2026 era").isTrue();
        }
        assertThat(Catalogue.all().stream().filter(s -> s.built() && s.appliesTo(TransportKind.HTTP, Drill.ERA))
                .count()).as("over HTTP").isGreaterThanOrEqualTo(12);
        assertThat(Catalogue.all().stream().filter(s -> s.built() && s.appliesTo(TransportKind.STDIO, Drill.ERA))
                .map(Scenario::name)).as("over stdio").contains("out-of-order", "server-crash").hasSize(12);
        // A fault the stdio proxy alone has is not offered to HTTP, and an HTTP-only one not to stdio.
        assertThatThrownBy(() -> Catalogue.find("server-crash").orElseThrow().ruleSet(7)
                .checkTransport(TransportKind.HTTP)).hasMessageContaining("crash");
        assertThat(Catalogue.find("retry-after-503").orElseThrow().transports()).containsExactly(TransportKind.HTTP);
    }

    @Test
    void notBuiltScenariosSaySoAndHaveNoRules() {
        assertThat(Catalogue.all().stream().filter(s -> !s.built()).map(Scenario::name))
                .as("every scenario of the catalogue is built (priming-missing was the last, #37)").isEmpty();
        // The catalogue can still list one: it says why, and has no rules to run.
        Scenario unbuilt = new Scenario("x", "f", List.of(), "r", "s", Level.SHOULD, Set.of(TransportKind.HTTP),
                Set.of(Era.SESSIONS), "not built yet", null, "a reason");
        for (Scenario s : List.of(unbuilt)) {
            assertThat(s.rules()).as(s.name()).isEmpty();
            assertThat(s.grader()).as(s.name()).isNull();
            assertThat(Catalogue.notBuiltYet(s)).as(s.name()).isNotBlank();
            assertThatThrownBy(() -> s.ruleSet(0)).hasMessageContaining("not built yet");
        }
        assertThat(Catalogue.all().stream().filter(s -> s.eras().equals(Set.of(Era.STATELESS)) && !s.built())
                .map(Scenario::name)).as("the 2026-07-28 era's scenarios not built")
                .isEmpty();
        assertThat(Catalogue.all().stream().filter(s -> s.built() && s.appliesTo(TransportKind.HTTP, Era.STATELESS)
                && s.eras().equals(Set.of(Era.STATELESS))).map(Scenario::name))
                .as("the 2026-07-28 era's own scenarios built, over HTTP")
                .containsExactly("stream-broken-reissue", "close-as-cancel", "listen-cut", "input-required-loop", "header-mismatch",
                        "version-negotiation", "discover-unsupported");
    }

    @Test
    void aScenarioIsBuiltOrNotNeverBoth() {
        Scenario built = Catalogue.find("answer-lost").orElseThrow();
        assertThatThrownBy(() -> new Scenario("x", "f", built.rules(), "r", "s", Level.MUST, Set.of(TransportKind.HTTP),
                Set.of(Era.SESSIONS), "g", built.grader(), "a reason")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Scenario("x", "f", List.of(), "r", "s", Level.MUST, Set.of(TransportKind.HTTP),
                Set.of(Era.SESSIONS), "g", null, null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void docsHaveTheCatalogueTable() throws IOException {
        String docs = Files.readString(Path.of("..", "docs", "drill.md"));
        int start = docs.indexOf(TABLE_START);
        int end = docs.indexOf(TABLE_END);
        assertThat(start).as("docs/drill.md has the line " + TABLE_START).isNotNegative();
        assertThat(end).as("docs/drill.md has the line " + TABLE_END).isGreaterThan(start);
        assertThat(docs.substring(start + TABLE_START.length(), end).strip())
                .as("docs/drill.md's catalogue table (regenerate it from Catalogue.markdownTable())")
                .isEqualTo(Catalogue.markdownTable().strip());
    }
}
