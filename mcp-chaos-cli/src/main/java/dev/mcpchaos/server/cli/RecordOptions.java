package dev.mcpchaos.server.cli;

import dev.mcpchaos.server.ChaosBuilder;
import dev.mcpchaos.server.record.Recording;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The recording options of the proxy commands (see docs/record-replay.md). A picocli mixin. */
final class RecordOptions {

    @Option(names = "--record", paramLabel = "FILE|DIR",
            description = "Record every message both ways into a cassette (NDJSON, secrets redacted; see "
                    + "docs/record-replay.md): a FILE (replaced), or a DIR (an existing directory, or a name ending "
                    + "in /) with one file per session.")
    Path record;

    @Option(names = "--record-after-faults",
            description = "Record what the peers got, after the faults, instead of what they sent.")
    boolean afterFaults;

    @Option(names = "--redact-header", paramLabel = "NAME",
            description = "One more header whose value is a secret (Authorization, Cookie, Set-Cookie and names like "
                    + "*-Token always are). Repeatable.")
    List<String> headers = new ArrayList<>();

    @Option(names = "--redact-path", paramLabel = "PATH",
            description = "A value always redacted in recorded messages: a JSON pointer (/params/arguments/password) or "
                    + "a dotted glob (params.arguments.*, result.**.token). Repeatable.")
    List<String> paths = new ArrayList<>();

    @Option(names = "--redact-env", paramLabel = "NAME",
            description = "An environment variable whose value is redacted wherever it appears in a recording "
                    + "(its value in this process, and on stdio the one -e gives the server). Repeatable.")
    List<String> variables = new ArrayList<>();

    /**
     * Gives the builder the recording these options ask for, if any.
     *
     * @throws OptionValueException naming the option, for a value that cannot be used
     */
    void applyTo(ChaosBuilder<?> builder) {
        if (record == null) {
            String orphan = afterFaults ? "--record-after-faults" : !headers.isEmpty() ? "--redact-header"
                    : !paths.isEmpty() ? "--redact-path" : !variables.isEmpty() ? "--redact-env" : null;
            if (orphan != null) {
                throw new OptionValueException(orphan + ": given without --record (expected: --record FILE|DIR too)");
            }
            return;
        }
        Recording recording = Recording.to(record).afterFaults(afterFaults);
        redact(recording, headers, paths, variables);
        builder.record(recording);
    }

    /**
     * Gives {@code recording} the redactions these options name (as {@code mcp-chaos import} has
     * them too).
     *
     * @throws OptionValueException naming the option, for a value that cannot be used
     */
    static void redact(Recording recording, List<String> headers, List<String> paths, List<String> variables) {
        try {
            headers.forEach(recording::redactHeader);
            paths.forEach(recording::redactPath);
            variables.forEach(recording::redactEnv);
        } catch (IllegalArgumentException e) {
            throw new OptionValueException("--" + e.getMessage().replaceFirst("^redact (\\w+)", "redact-$1"));
        }
    }
}
