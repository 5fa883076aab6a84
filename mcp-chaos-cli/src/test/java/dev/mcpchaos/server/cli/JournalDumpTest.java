package dev.mcpchaos.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.concurrent.TimeUnit;

import picocli.CommandLine;

/**
 * {@code stdio --journal-dump FILE}, what a stdio drill reads back: the whole journal, written
 * when the server has exited, renamed into place (no partial file left); with the journal off it
 * says so and writes nothing.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class JournalDumpTest {

    private static final String MESSAGES = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n"
            + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

    /** Runs {@code stdio ARGS -- cat}: cat sends each message back, then exits at the end of its input. */
    private static String stdio(String... args) {
        PrintStream savedErr = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            CommandLine cli = new CommandLine(new Main());
            cli.addSubcommand(new StdioCommand(new ByteArrayInputStream(MESSAGES.getBytes(StandardCharsets.UTF_8)),
                    new ByteArrayOutputStream()));
            cli.setDefaultValueProvider(new EnvironmentDefaults(new HashMap<>()));
            String[] argv = new String[args.length + 4];
            argv[0] = "stdio";
            System.arraycopy(args, 0, argv, 1, args.length);
            argv[args.length + 1] = "--quiet";
            argv[args.length + 2] = "--";
            argv[args.length + 3] = "cat";
            assertThat(Main.execute(cli, argv)).isZero();
        } finally {
            System.setErr(savedErr);
        }
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theWholeJournalIsWrittenWhenTheServerHasExited(@TempDir Path dir) throws Exception {
        Path dump = dir.resolve("journal.json");
        stdio("--journal", "100", "--journal-dump", dump.toString());
        JsonNode journal = new ObjectMapper().readTree(dump.toFile());
        assertThat(journal.path("capacity").asInt()).isEqualTo(100);
        // Each message twice: from the client, and back from cat.
        assertThat(journal.path("entries")).hasSize(4);
        assertThat(journal.path("entries").get(0).path("method").asText()).isEqualTo("tools/list");
        assertThat(journal.path("entries").get(0).path("direction").asText()).isEqualTo("client_to_server");
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly("journal.json");
        }
    }

    /**
     * Into a directory, as the drill asks (a client may start the server command more than once):
     * a file of this process's own, journal-PID.json, and no journal-PID.running left once written;
     * with --journal-content each entry keeps its message's text.
     */
    @Test
    void intoADirectoryEachProxyWritesAFileOfItsOwnAndLeavesNoRunningMarker(@TempDir Path dir) throws Exception {
        stdio("--journal", "100", "--journal-content", "--journal-dump", dir.toString());
        String own = "journal-" + ProcessHandle.current().pid() + ".json";
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly(own);
        }
        JsonNode journal = new ObjectMapper().readTree(dir.resolve(own).toFile());
        assertThat(journal.path("entries")).hasSize(4);
        assertThat(journal.path("entries").get(0).path("message").asText())
                .isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    }

    @Test
    void withoutJournalContentNoMessageTextIsKept(@TempDir Path dir) throws Exception {
        Path dump = dir.resolve("journal.json");
        stdio("--journal", "100", "--journal-dump", dump.toString());
        assertThat(new ObjectMapper().readTree(dump.toFile()).path("entries").get(0).has("message")).isFalse();
    }

    @Test
    void withTheJournalOffItSaysSoAndWritesNothing(@TempDir Path dir) {
        Path dump = dir.resolve("journal.json");
        String err = stdio("--journal", "off", "--journal-dump", dump.toString());
        assertThat(err).contains("mcp-chaos: --journal-dump: the journal is off (expected: --journal N with it)");
        assertThat(dump).doesNotExist();
    }
}
