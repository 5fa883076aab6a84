package dev.mcpchaos.server.cli;

import dev.mcpchaos.server.record.CassetteException;
import dev.mcpchaos.server.record.Recording;
import dev.mcpchaos.server.record.TranscriptImport;
import dev.mcpchaos.server.replay.ReplayFile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code mcp-chaos import TRANSCRIPT}: a direction-and-line transcript of a stdio session made a cassette. */
@Command(name = "import",
        mixinStandardHelpOptions = true,
        description = {"Make a cassette (see docs/record-replay.md) from a transcript of a stdio session that has one "
                + "message a line and the way it went: JSON lines such as {\"direction\":\"c2s\",\"line\":\"{...}\"} "
                + "(or dir, raw, message; an optional t in ms), or lines starting with > (client to server) and < "
                + "(server to client). Secrets are redacted as a recording redacts them. Exit code 2 for a "
                + "transcript that cannot be read, naming its line. mcp-chaos replay reads such a transcript "
                + "directly too, imported the same way."},
        footer = {"", "Examples:", "  mcp-chaos import fixtures/seed-000.jsonl -o cassettes/seed-000.ndjson",
            "  mcp-chaos import session.log --redact-env API_TOKEN > cassettes/session.ndjson"})
final class ImportCommand implements Callable<Integer> {

    /** The exit code for a transcript that cannot be read or a cassette that cannot be written. */
    static final int REFUSED = 2;

    @Parameters(paramLabel = "TRANSCRIPT", description = "The transcript to import.")
    Path transcript;

    @Option(names = {"-o", "--out"}, paramLabel = "FILE",
            description = "Where the cassette goes (replaced; written whole or not at all). Default: stdout.")
    Path out;

    @Option(names = "--redact-path", paramLabel = "PATH",
            description = "A value always redacted: a JSON pointer (/params/arguments/password) or a dotted glob "
                    + "(params.arguments.*). Repeatable.")
    List<String> paths = new ArrayList<>();

    @Option(names = "--redact-env", paramLabel = "NAME",
            description = "An environment variable whose value is redacted wherever it appears. Repeatable.")
    List<String> variables = new ArrayList<>();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        Recording redaction = Recording.toFile(out != null ? out : Path.of("stdout"));
        try {
            RecordOptions.redact(redaction, List.of(), paths, variables);
        } catch (OptionValueException e) {
            return refuse(e.getMessage());
        }
        for (String name : redaction.unsetVariables()) {
            spec.commandLine().getErr().println("mcp-chaos: --redact-env " + name
                    + ": the variable is not set, so there is nothing to redact");
        }
        if (!Files.isReadable(transcript)) {
            return refuse(transcript + ": " + (Files.exists(transcript) ? "cannot be read" : "no such file"));
        }
        try {
            // The import mcp-chaos replay makes of a transcript it is given: the same code, so the same cassette.
            ReplayFile imported = ReplayFile.importTranscript(transcript, redaction);
            byte[] cassette = imported.importedText();
            if (out == null) {
                spec.commandLine().getOut().print(new String(cassette, StandardCharsets.UTF_8));
                spec.commandLine().getOut().flush();
            } else {
                Path absolute = out.toAbsolutePath();
                Path tmp = Files.createTempFile(absolute.getParent(), ".import", ".tmp");
                try {
                    try (OutputStream file = Files.newOutputStream(tmp)) {
                        file.write(cassette);
                    }
                    Files.move(tmp, absolute, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                } finally {
                    Files.deleteIfExists(tmp);
                }
            }
            TranscriptImport.Result result = imported.importResult();
            spec.commandLine().getErr().println("mcp-chaos: " + transcript + ": " + result.messages() + " message"
                    + (result.messages() == 1 ? "" : "s") + (result.unparsed() > 0 ? " (" + result.unparsed()
                    + " not JSON, kept as raw text)" : "") + ", " + result.secrets() + " secret"
                    + (result.secrets() == 1 ? "" : "s") + " redacted" + (out != null ? " -> " + out : ""));
            String noParams = noParamsWarning(transcript.toString(), imported.requestsWithoutParams());
            if (noParams != null) {
                spec.commandLine().getErr().println(noParams);
            }
            return 0;
        } catch (CassetteException e) {
            return refuse(e.getMessage());
        } catch (IOException e) {
            return refuse((out != null ? out : transcript) + ": " + e.getMessage());
        }
    }

    /**
     * The line that says a cassette's requests carry no params, which the default match serves only
     * to requests without params too, and names the mode that serves them whatever the params;
     * null when every request has params (or takes none by nature, see
     * {@link ReplayFile#requestsWithoutParams}).
     *
     * @param name    the file, as the line names it
     * @param methods the methods of those requests, one per request
     */
    static String noParamsWarning(String name, List<String> methods) {
        if (methods.isEmpty()) {
            return null;
        }
        Map<String, Integer> counts = new LinkedHashMap<>();
        methods.forEach(method -> counts.merge(method, 1, Integer::sum));
        List<String> named = new ArrayList<>();
        counts.forEach((method, n) -> named.add(n == 1 ? method : method + " x" + n));
        boolean one = methods.size() == 1;
        return "mcp-chaos: " + name + ": " + methods.size() + " recorded request" + (one ? " carries" : "s carry")
                + " no params (" + String.join(", ", named) + "): the default --match serves "
                + (one ? "it" : "them") + " only to requests without params; replay --match method serves each "
                + "method's recordings in order whatever the params";
    }

    private int refuse(String message) {
        spec.commandLine().getErr().println("mcp-chaos: " + message);
        return REFUSED;
    }
}
