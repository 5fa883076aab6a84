package dev.mcpchaos.server.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.assertj.core.api.Assertions.assertThat;

class MainTest {

    @Test
    void eachSubcommandIsRegisteredUnderTheNameItsAnnotationGives() {
        Main.Subcommands.ALL.forEach((name, make) ->
                assertThat(make.get().getClass().getAnnotation(CommandLine.Command.class).name()).isEqualTo(name));
    }

    @Test
    void aCommandLineForOneSubcommandBuildsOnlyThatOne() {
        assertThat(Main.commandLine("stdio", "--", "cat").getSubcommands()).containsOnlyKeys("stdio");
        assertThat(Main.commandLine("rules", "list").getSubcommands()).containsOnlyKeys("rules");
    }

    @Test
    void withoutASubcommandOrWithAnUnknownOneAllAreThereForTheUsageAndSuggestions() {
        String[] all = {"stdio", "http", "demo", "demo-server", "validate", "rules", "journal", "replay", "import",
            "check", "diff", "report", "drill", "help"};
        assertThat(Main.commandLine().getSubcommands()).containsOnlyKeys(all);
        assertThat(Main.commandLine("--help").getSubcommands()).containsOnlyKeys(all);
        assertThat(Main.commandLine("stdoi").getSubcommands()).containsOnlyKeys(all);

        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        assertThat(Main.run(new PrintWriter(out), new PrintWriter(err), "--help")).isZero();
        assertThat(out.toString()).contains("stdio", "http", "demo-server", "validate", "rules", "help");

        assertThat(Main.run(new PrintWriter(out), new PrintWriter(err), "stdoi")).isEqualTo(2);
        assertThat(err.toString()).contains("Unmatched argument at index 0: 'stdoi'").contains("stdio");
    }

    @Test
    void withNoArgumentsTheErrorNamesEverySubcommand() {
        StringWriter err = new StringWriter();
        assertThat(Main.run(new PrintWriter(new StringWriter()), new PrintWriter(err))).isEqualTo(2);
        assertThat(err.toString()).contains("a subcommand is needed: stdio, http, demo, demo-server, validate, rules, "
                + "journal, replay, import, check, diff, report");
    }

    @Test
    void theHelpOfOneSubcommandStillWorks() {
        StringWriter out = new StringWriter();
        assertThat(Main.run(new PrintWriter(out), new PrintWriter(new StringWriter()), "help", "stdio")).isZero();
        assertThat(out.toString()).startsWith("Usage: mcp-chaos stdio");
        StringWriter direct = new StringWriter();
        assertThat(Main.run(new PrintWriter(direct), new PrintWriter(new StringWriter()), "stdio", "--help")).isZero();
        assertThat(direct.toString()).startsWith("Usage: mcp-chaos stdio");
    }
}
