package dev.mcpchaos.server.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Every option of http and stdio from its MCP_CHAOS_* variable, an argument winning over it, and its docs. */
class EnvironmentDefaultsTest {

    /** What http needs to parse at all, given as arguments so that every variable can be tried alone. */
    private static final Map<String, List<String>> REQUIRED = Map.of(
            "http", List.of("--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1/mcp"),
            "stdio", List.of());
    private static final Map<String, List<String>> TRAILING = Map.of(
            "http", List.of(),
            "stdio", List.of("--", "cat"));

    @Test
    void everyOptionOfHttpAndStdioIsTakenFromItsVariable() {
        int checked = 0;
        for (String command : EnvironmentDefaults.COMMANDS) {
            for (OptionSpec option : options(command)) {
                String variable = EnvironmentDefaults.variableOf(option);
                if (option.longestName().equals("--env")) {
                    assertThat(variable).isNull();
                    continue;
                }
                assertThat(variable).as(option.longestName()).isNotNull()
                        .isEqualTo("MCP_CHAOS_" + option.longestName().substring(2).toUpperCase().replace('-', '_'));
                boolean isRequired = REQUIRED.get(command).contains(option.longestName());
                String sample = sample(option);
                Map<String, String> env = Map.of(variable, sample);
                List<String> args = new ArrayList<>(List.of(command));
                args.addAll(isRequired ? without(REQUIRED.get(command), option.longestName()) : REQUIRED.get(command));
                args.addAll(TRAILING.get(command));
                OptionSpec parsed = parse(env, args).findOption(option.longestName());
                assertThat((Object) parsed.getValue()).as(variable + "=" + sample + " for " + option.longestName())
                        .isEqualTo(expected(option, sample));
                checked++;
            }
        }
        assertThat(checked).isGreaterThan(40); // both commands' options, not an empty walk
    }

    @Test
    void anArgumentWinsOverItsVariable() {
        Map<String, String> env = Map.of("MCP_CHAOS_MAX_CONNECTIONS", "7", "MCP_CHAOS_LISTEN", "127.0.0.1:1");
        CommandLine.Model.CommandSpec spec = parse(env, List.of("http", "--max-connections", "9", "--upstream",
                "http://127.0.0.1:1/mcp"));
        assertThat((Integer) spec.findOption("--max-connections").getValue()).isEqualTo(9);
        assertThat((String) spec.findOption("--listen").getValue()).isEqualTo("127.0.0.1:1");
        // And with neither, the annotation's default stays.
        spec = parse(Map.of(), List.of("http", "--listen", ":0", "--upstream", "http://127.0.0.1:1/mcp"));
        assertThat((Integer) spec.findOption("--max-connections").getValue()).isEqualTo(10000);
        assertThat((String) spec.findOption("--drain-timeout").getValue()).isEqualTo("20s");
    }

    @Test
    void aValueOfTheWrongTypeNamesTheVariable() {
        StringWriter err = new StringWriter();
        int code = run(Map.of("MCP_CHAOS_MAX_CONNECTIONS", "many"), err, "http", "--listen", "127.0.0.1:0",
                "--upstream", "http://127.0.0.1:1/mcp");
        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("MCP_CHAOS_MAX_CONNECTIONS").contains("'many'")
                .contains("--max-connections").doesNotContain("Usage:");
    }

    @Test
    void aValueTheCommandRefusesNamesTheVariableToo() {
        StringWriter err = new StringWriter();
        int code = run(Map.of("MCP_CHAOS_UPSTREAM", "ftp://example/"), err, "http", "--listen", "127.0.0.1:0");
        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("--upstream: 'ftp://example/'")
                .contains("came from the environment variable MCP_CHAOS_UPSTREAM");

        StringWriter drain = new StringWriter();
        assertThat(run(Map.of("MCP_CHAOS_DRAIN_TIMEOUT", "soon"), drain, "http", "--listen", "127.0.0.1:0",
                "--upstream", "http://127.0.0.1:1/mcp", "--control", "off")).isEqualTo(2);
        assertThat(drain.toString()).contains("--drain-timeout: 'soon' (expected: a duration such as 20s or 1m, or 0s)")
                .contains("came from the environment variable MCP_CHAOS_DRAIN_TIMEOUT");
        StringWriter ops = new StringWriter();
        assertThat(run(Map.of("MCP_CHAOS_METRICS_LISTEN", "9464"), ops, "http", "--listen", "127.0.0.1:0",
                "--upstream", "http://127.0.0.1:1/mcp", "--control", "off")).isEqualTo(2);
        assertThat(ops.toString()).contains("--metrics-listen: '9464' (expected: HOST:PORT")
                .contains("came from the environment variable MCP_CHAOS_METRICS_LISTEN");

        StringWriter given = new StringWriter();
        run(Map.of(), given, "http", "--listen", "127.0.0.1:0", "--upstream", "ftp://example/");
        assertThat(given.toString()).contains("--upstream: 'ftp://example/'").doesNotContain("MCP_CHAOS_UPSTREAM");
    }

    @Test
    void aMissingRequiredOptionStillSaysSo() {
        StringWriter err = new StringWriter();
        assertThat(run(Map.of(), err, "http", "--listen", "127.0.0.1:0")).isEqualTo(2);
        assertThat(err.toString()).contains("--upstream");
    }

    @Test
    void everyOptionAndItsVariableAreDocumented() throws IOException {
        String doc = Files.readString(docs().resolve("cli.md"));
        for (String command : EnvironmentDefaults.COMMANDS) {
            for (OptionSpec option : options(command)) {
                assertThat(doc).as("docs/cli.md names " + option.longestName()).contains("`" + option.longestName());
                String variable = EnvironmentDefaults.variableOf(option);
                if (variable != null) {
                    assertThat(doc).as("docs/cli.md names " + variable).contains("`" + variable + "`");
                }
            }
        }
    }

    private static Path docs() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("docs"))) {
            dir = dir.getParent();
        }
        assertThat(dir).as("the repository's docs/").isNotNull();
        return dir.resolve("docs");
    }

    private static List<OptionSpec> options(String command) {
        CommandLine cli = Main.commandLine(Map.of(), command).getSubcommands().get(command);
        return cli.getCommandSpec().options().stream().filter(o -> !o.usageHelp() && !o.versionHelp()).toList();
    }

    private static CommandLine.Model.CommandSpec parse(Map<String, String> env, List<String> args) {
        CommandLine cli = Main.commandLine(env, args.toArray(String[]::new));
        CommandLine.ParseResult result = cli.parseArgs(args.toArray(String[]::new));
        return result.subcommand().commandSpec();
    }

    private static int run(Map<String, String> env, StringWriter err, String... args) {
        CommandLine cli = Main.commandLine(new HashMap<>(env), args);
        cli.setOut(new PrintWriter(new StringWriter()));
        cli.setErr(new PrintWriter(err, true));
        return Main.execute(cli, args);
    }

    private static List<String> without(List<String> args, String option) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < args.size(); i += 2) {
            if (!args.get(i).equals(option)) {
                out.add(args.get(i));
                out.add(args.get(i + 1));
            }
        }
        return out;
    }

    private static String sample(OptionSpec option) {
        Class<?> type = option.type();
        if (type == boolean.class || type == Boolean.class) {
            return "true";
        }
        if (type == int.class || type == Integer.class || type == long.class || type == Long.class) {
            return "7";
        }
        if (type == Path.class) {
            return "/tmp/from-env-7";
        }
        return option.longestName().equals("--listen") || option.longestName().contains("control")
                && !option.longestName().contains("timeout") && !option.longestName().contains("token")
                ? "127.0.0.1:7" : option.longestName().equals("--upstream") ? "http://127.0.0.1:7/mcp" : "7s";
    }

    private static Object expected(OptionSpec option, String sample) {
        Class<?> type = option.type();
        if (option.isMultiValue()) {
            return List.of(sample); // a repeatable option (--redact-path) takes one value from its variable
        }
        if (type == boolean.class || type == Boolean.class) {
            return true;
        }
        if (type == int.class || type == Integer.class) {
            return 7;
        }
        if (type == long.class || type == Long.class) {
            return 7L;
        }
        if (type == Path.class) {
            return Path.of(sample);
        }
        return sample;
    }
}
